package api

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// eventScopes is the read scope each event type prefix needs: a reader sees
// only the events about data it could read.
var eventScopes = []struct {
	prefix string
	scope  rental.Scope
}{
	{"property.", rental.ScopePropertiesRead},
	{"room.", rental.ScopeRoomsRead},
	{"tenant.", rental.ScopeTenantsRead},
	{"meter.", rental.ScopeMetersRead},
	{"bill.", rental.ScopeBillsRead},
	{"payment.", rental.ScopePaymentsRead},
	{"notification.", rental.ScopeNotificationsRead},
	{"webhook.", rental.ScopeWebhooksManage},
}

// eventType is an event type, or a type prefix ending in ".*".
var eventType = regexp.MustCompile(`^[a-z_]{1,40}(\.[a-z_]{1,40}){0,3}(\.\*)?$`)

// eventView is the event object as the API shows it to one account.
type eventView struct {
	ID         string      `json:"id"`
	Object     string      `json:"object"`
	Type       string      `json:"type"`
	APIVersion string      `json:"api_version"`
	Mode       rental.Mode `json:"mode"`
	AccountID  string      `json:"account_id"`
	CreatedAt  rental.Time `json:"created_at"`
	Data       eventData   `json:"data"`
}

type eventData struct {
	Object json.RawMessage `json:"object"`
}

func view(acct *rental.Account, e store.StoredEvent) eventView {
	return eventView{ID: e.ID, Object: "event", Type: e.Type, APIVersion: "v1", Mode: e.Mode, AccountID: acct.ID,
		CreatedAt: e.CreatedAt, Data: eventData{Object: e.Data}}
}

// readable returns the event filter of the types the caller may read.
func readable(c *call) store.EventFilter {
	var f store.EventFilter
	for _, es := range eventScopes {
		if c.caller.scopes.Has(es.scope) {
			f.Prefixes = append(f.Prefixes, es.prefix)
		}
	}
	return f
}

func (s *Server) listEvents(c *call) (int, any, error) {
	q := c.r.URL.Query()
	f := readable(c)
	if q.Has("type") {
		t := q.Get("type")
		if !eventType.MatchString(t) {
			return 0, nil, rental.Invalid("type", "type must be an event type such as bill.created, or a prefix such as bill.*.")
		}
		f.Type = strings.TrimSuffix(t, "*")
	}
	var err error
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
	views := make([]eventView, len(items))
	for i, e := range items {
		views[i] = view(c.acct(), e)
	}
	return http.StatusOK, result(s, p, views, more, position(
		func(e eventView) rental.Time { return e.CreatedAt }, func(e eventView) string { return e.ID })), nil
}

func (s *Server) getEvent(c *call) (int, any, error) {
	e, err := c.q.GetEvent(c.ctx, c.acct(), c.r.PathValue("event_id"), readable(c), s.now())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{view(c.acct(), *e)}, nil
}

// testModeOnly refuses a test helper to a live key.
func testModeOnly(c *call) error {
	if c.caller.mode != rental.ModeTest {
		return rental.Errorf(rental.KindForbidden, "test_mode_only", "Test helpers work only with test keys (svc_test_...).")
	}
	return nil
}

func (s *Server) resetSandbox(c *call) (int, any, error) {
	if err := testModeOnly(c); err != nil {
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
