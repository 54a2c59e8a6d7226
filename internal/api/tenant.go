package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// shown is the tenant as the API answers it: with the service's LINE
// add-friend link, which the store keeps as configuration and leaves out of
// the tenants it returns.
func (s *Server) shown(t *rental.Tenant) *rental.Tenant {
	t.ShowChatLink(s.db.AddFriendURL())
	return t
}

var tenantPosition = position(func(t rental.Tenant) rental.Time { return t.CreatedAt }, func(t rental.Tenant) string { return t.ID })

func tenantChange(body []byte, allowed ...string) (rental.TenantChange, error) {
	var ch rental.TenantChange
	f, err := parseObject(body, allowed...)
	if err != nil {
		return ch, err
	}
	return ch, read(
		into(&ch.Name, f.string, "name"),
		into(&ch.Phone, f.string, "phone"),
		into(&ch.Email, f.string, "email"),
		into(&ch.ChatEnabled, f.bool, "chat_enabled"),
		into(&ch.Occupants, f.int, "occupants"),
		into(&ch.MovedInAt, f.time, "moved_in_at"),
		into(&ch.Deposit, f.int, "deposit"),
		into(&ch.LeaseEnd, f.string, "lease_end"),
	)
}

func (s *Server) moveIn(c *call) (int, any, error) {
	ch, err := tenantChange(c.body, "name", "phone", "email", "chat_enabled", "occupants", "moved_in_at", "deposit", "lease_end")
	if err != nil {
		return 0, nil, err
	}
	t, err := rental.NewTenant(ch, rental.Time{Time: c.tx.Now})
	if err != nil {
		return 0, nil, err
	}
	in, err := c.tx.MoveIn(c.ctx, c.acct(), c.r.PathValue("room_id"), t)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{s.shown(in)}, nil
}

func (s *Server) moveOut(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	t, err := c.tx.MoveOut(c.ctx, c.acct(), c.r.PathValue("room_id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{s.shown(t)}, nil
}

func (s *Server) listTenants(c *call) (int, any, error) {
	q := c.params
	var f store.TenantFilter
	var err error
	if f.PropertyID, err = queryID(q, "property_id"); err != nil {
		return 0, nil, err
	}
	if f.RoomID, err = queryID(q, "room_id"); err != nil {
		return 0, nil, err
	}
	out, err := queryEnum(q, "include_moved_out", "true", "false")
	if err != nil {
		return 0, nil, err
	}
	f.MovedOut = out == "true"
	p, err := s.newPager(c, "property_id", "room_id", "include_moved_out")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListTenants(c.ctx, c.acct(), f, p.page)
	for i := range items {
		s.shown(&items[i])
	}
	return listed(s, p, tenantPosition, items, more, err)
}

func (s *Server) getTenant(c *call) (int, any, error) {
	t, err := c.q.GetTenant(c.ctx, c.acct(), c.r.PathValue("tenant_id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{s.shown(t)}, nil
}

func (s *Server) updateTenant(c *call) (int, any, error) {
	ch, err := tenantChange(c.body, "name", "phone", "email", "chat_enabled", "occupants", "deposit", "lease_end")
	if err != nil {
		return 0, nil, err
	}
	t, err := c.tx.UpdateTenant(c.ctx, c.acct(), c.r.PathValue("tenant_id"), ch)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{s.shown(t)}, nil
}
