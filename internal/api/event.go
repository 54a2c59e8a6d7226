package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// view shows a stored event to the account that reads it.
func view(acct *rental.Account, e store.StoredEvent) rental.Event {
	return rental.NewEvent(e.ID, e.Type, e.Mode, acct.ID, e.CreatedAt, e.Data)
}

// readable returns the event filter of the types the caller may read.
func readable(c *call) store.EventFilter {
	return store.EventFilter{Prefixes: c.caller.scopes.EventPrefixes()}
}

func (s *Server) listEvents(c *call) (int, any, error) {
	q := c.params
	f := readable(c)
	var err error
	if q.Has("type") {
		if f.Type, err = rental.EventTypeFilter(q.Get("type")); err != nil {
			return 0, nil, err
		}
	}
	if f.CreatedAfter, err = queryTime(q, "created_after"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "type", "created_after")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListEvents(c.ctx, c.acct(), f, s.now(), p.page)
	if err != nil {
		return 0, nil, err
	}
	views := make([]rental.Event, len(items))
	for i, e := range items {
		views[i] = view(c.acct(), e)
	}
	return http.StatusOK, result(s, p, views, more, position(
		func(e rental.Event) rental.Time { return e.CreatedAt }, func(e rental.Event) string { return e.ID })), nil
}

func (s *Server) getEvent(c *call) (int, any, error) {
	e, err := c.q.GetEvent(c.ctx, c.acct(), c.r.PathValue("event_id"), readable(c), s.now())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{view(c.acct(), *e)}, nil
}

func (s *Server) resetSandbox(c *call) (int, any, error) {
	if err := rental.CheckTestHelper(c.caller.mode); err != nil {
		return 0, nil, err
	}
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	if err := c.tx.ResetSandbox(c.ctx, c.acct()); err != nil {
		return 0, nil, err
	}
	return s.getAccount(c)
}
