package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var billPosition = position(func(b rental.Bill) rental.Time { return b.CreatedAt }, func(b rental.Bill) string { return b.ID })

// billBody is POST /v1/bills's body, decoded before the transaction (see
// prepareFunc).
type billBody struct {
	room, month string
	issue       bool
}

func decodeBill(c *call) (billBody, error) {
	var in billBody
	f, err := parseObject(c.body, "room_id", "month", "issue")
	if err != nil {
		return in, err
	}
	if in.room, err = requiredID(f, "room_id", "room"); err != nil {
		return in, err
	}
	month, err := required(f, "month")
	if err != nil {
		return in, err
	}
	if in.month, err = rental.ParseMonth("month", month); err != nil {
		return in, err
	}
	issue, err := f.bool("issue")
	if err != nil {
		return in, err
	}
	if issue.Null {
		return in, rental.FieldType("issue", "true or false")
	}
	in.issue = !issue.Set || issue.Value
	return in, nil
}

func (s *Server) createBill(c *call, in billBody) (int, any, error) {
	b, err := c.tx.CreateBill(c.ctx, c.acct(), in.room, in.month, in.issue)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{b}, nil
}

func (s *Server) listBills(c *call) (int, any, error) {
	q := c.params
	var f store.BillFilter
	var err error
	if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.RoomID, err = queryID(q, "room_id"); err != nil {
		return 0, nil, err
	}
	if f.TenantID, err = queryID(q, "tenant_id"); err != nil {
		return 0, nil, err
	}
	if f.Status, err = queryEnum(q, "status", rental.BillStatuses...); err != nil {
		return 0, nil, err
	}
	if f.MonthFilter, err = monthFilter(c); err != nil {
		return 0, nil, err
	}
	if f.CreatedAfter, err = queryTime(q, "created_after"); err != nil {
		return 0, nil, err
	}
	if f.CreatedBefore, err = queryTime(q, "created_before"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "property_id", "room_id", "tenant_id", "status", "month", "from_month", "to_month", "created_after", "created_before")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListBills(c.ctx, c.acct(), f, p.page)
	return listed(s, p, billPosition, items, more, err)
}

func (s *Server) getBill(c *call) (int, any, error) {
	return found(c.q.GetBill(c.ctx, c.acct(), c.r.PathValue("bill_id")))
}

func (s *Server) issueBill(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	b, err := c.tx.IssueBill(c.ctx, c.acct(), c.r.PathValue("bill_id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{b}, nil
}

func (s *Server) deleteBill(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, c.tx.DeleteBill(c.ctx, c.acct(), c.r.PathValue("bill_id"))
}
