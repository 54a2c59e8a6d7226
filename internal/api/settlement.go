package api

import (
	"fmt"
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var settlementPosition = position(func(s rental.Settlement) rental.Time { return s.CreatedAt }, func(s rental.Settlement) string { return s.ID })

// deductions decodes a move-out's deductions: a list of {description,
// amount} objects, each refusal naming deductions[i].field.
func (f fields) deductions(name string) ([]rental.DeductionInput, error) {
	v, set, null := f.raw(name)
	if !set {
		return nil, nil
	}
	items, ok := elements(v)
	if null || !ok {
		return nil, rental.FieldType(f.prefix+name, "a list of objects")
	}
	out := make([]rental.DeductionInput, len(items))
	for i, it := range items {
		d, err := parseItem(it, name, "description", "amount")
		if err != nil {
			return nil, err
		}
		d.prefix = fmt.Sprintf("%s[%d].", name, i)
		if err := read(into(&out[i].Description, d.string, "description"), into(&out[i].Amount, d.int, "amount")); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Server) settleMoveOut(c *call) (int, any, error) {
	f, err := parseObject(c.body, "moved_out_at", "final_reading", "deductions")
	if err != nil {
		return 0, nil, err
	}
	var in store.MoveOutInput
	var at rental.Optional[rental.Time]
	if err := read(into(&at, f.time, "moved_out_at")); err != nil {
		return 0, nil, err
	}
	if at.Set && !at.Null {
		in.MovedOutAt = &at.Value.Time
	}
	reading, set, err := f.object("final_reading", "electricity", "water")
	if err != nil {
		return 0, nil, err
	}
	if set {
		var r store.ReadingInput
		if r.Electricity, err = partInput(reading, "electricity", true); err != nil {
			return 0, nil, err
		}
		if r.Water, err = partInput(reading, "water", true); err != nil {
			return 0, nil, err
		}
		in.FinalReading = &r
	}
	ds, err := f.deductions("deductions")
	if err != nil {
		return 0, nil, err
	}
	if in.Deductions, err = rental.NewDeductions(ds); err != nil {
		return 0, nil, err
	}
	st, err := c.tx.SettleMoveOut(c.ctx, c.acct(), c.r.PathValue("room_id"), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{st}, nil
}

func (s *Server) listSettlements(c *call) (int, any, error) {
	q := c.params
	var f store.SettlementFilter
	var err error
	if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.RoomID, err = queryID(q, "room_id"); err != nil {
		return 0, nil, err
	}
	if f.Status, err = queryEnum(q, "status", rental.SettlementStatuses...); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "property_id", "room_id", "status")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListSettlements(c.ctx, c.acct(), f, p.page)
	return listed(s, p, settlementPosition, items, more, err)
}

func (s *Server) getSettlement(c *call) (int, any, error) {
	return found(c.q.GetSettlement(c.ctx, c.acct(), c.r.PathValue("settlement_id")))
}

func (s *Server) closeSettlement(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	return found(c.tx.CloseSettlement(c.ctx, c.acct(), c.r.PathValue("settlement_id")))
}
