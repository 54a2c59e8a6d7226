package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var chargePosition = position(func(c rental.Charge) rental.Time { return c.CreatedAt }, func(c rental.Charge) string { return c.ID })

func (s *Server) createCharge(c *call) (int, any, error) {
	var ch rental.ChargeChange
	f, err := parseObject(c.body, "type", "description", "amount", "recurring", "month", "ends_month")
	if err != nil {
		return 0, nil, err
	}
	err = read(
		into(&ch.Type, f.string, "type"),
		into(&ch.Description, f.string, "description"),
		into(&ch.Amount, f.int, "amount"),
		into(&ch.Recurring, f.bool, "recurring"),
		into(&ch.Month, f.string, "month"),
		into(&ch.EndsMonth, f.string, "ends_month"),
	)
	if err != nil {
		return 0, nil, err
	}
	room := c.r.PathValue("room_id")
	if !validID(room) {
		e := rental.NotFound("room", room)
		e.Param = "room_id"
		return 0, nil, e
	}
	created, err := c.tx.CreateCharge(c.ctx, c.acct(), room, ch)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{created}, nil
}

func (s *Server) listCharges(c *call) (int, any, error) {
	q := c.params
	var f store.ChargeFilter
	var err error
	if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.RoomID, err = queryID(q, "room_id"); err != nil {
		return 0, nil, err
	}
	if f.Month, err = queryMonth(q, "month"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "property_id", "room_id", "month")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListCharges(c.ctx, c.acct(), f, p.page)
	return listed(s, p, chargePosition, items, more, err)
}

func (s *Server) getCharge(c *call) (int, any, error) {
	return found(c.q.GetCharge(c.ctx, c.acct(), c.r.PathValue("charge_id")))
}

// deleteCharge answers 204 when the charge is gone, 200 with it when a
// recurring charge on a bill past draft ended instead.
func (s *Server) deleteCharge(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	ended, err := c.tx.DeleteCharge(c.ctx, c.acct(), c.r.PathValue("charge_id"))
	if err != nil {
		return 0, nil, err
	}
	if ended != nil {
		return http.StatusOK, data{ended}, nil
	}
	return http.StatusNoContent, nil, nil
}
