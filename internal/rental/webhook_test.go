package rental

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// An endpoint change is judged the same wherever it comes from (the API's
// JSON, the portal's form): url and enabled_events required for a new
// endpoint, neither null, the URL through the guard, known event types,
// a description of at most 500 characters, status only on a change.
func TestEndpointChangeCheck(t *testing.T) {
	t.Parallel()
	guard := func(u string) (string, error) {
		if !strings.HasPrefix(u, "https://") {
			return "", errors.New("the URL must use https://")
		}
		return u, nil
	}
	url, events := Of("https://hooks.example.com/"), Of([]string{"*"})
	long := Of(strings.Repeat("ก", MaxEndpointDescription+1))
	cases := []struct {
		name   string
		create bool
		ch     EndpointChange
		code   string
		param  string
	}{
		{"new", true, EndpointChange{URL: url, EnabledEvents: events}, "", ""},
		{"new without url", true, EndpointChange{EnabledEvents: events}, "parameter_missing", "url"},
		{"new without events", true, EndpointChange{URL: url}, "parameter_missing", "enabled_events"},
		{"new with a status", true, EndpointChange{URL: url, EnabledEvents: events, Status: Of(EndpointDisabled)}, "invalid_parameter", "status"},
		{"plain http", true, EndpointChange{URL: Of("http://hooks.example.com/"), EnabledEvents: events}, "invalid_url", "url"},
		{"unknown type", true, EndpointChange{URL: url, EnabledEvents: Of([]string{"bill.paid"})}, "invalid_parameter", "enabled_events"},
		{"no types", true, EndpointChange{URL: url, EnabledEvents: Of([]string{})}, "invalid_parameter", "enabled_events"},
		{"description too long", true, EndpointChange{URL: url, EnabledEvents: events, Description: long}, "invalid_parameter", "description"},
		{"nothing changed", false, EndpointChange{}, "", ""},
		{"null url", false, EndpointChange{URL: Optional[string]{Set: true, Null: true}}, "invalid_parameter", "url"},
		{"null events", false, EndpointChange{EnabledEvents: Optional[[]string]{Set: true, Null: true}}, "invalid_parameter", "enabled_events"},
		{"disable", false, EndpointChange{Status: Of(EndpointDisabled)}, "", ""},
		{"unknown status", false, EndpointChange{Status: Of("paused")}, "invalid_parameter", "status"},
	}
	for _, c := range cases {
		_, err := c.ch.Check(c.create, guard)
		if got := code(err); got != c.code {
			t.Errorf("%s: %q, want %q (%v)", c.name, got, c.code, err)
		}
		if e, ok := AsError(err); ok && e.Param != c.param {
			t.Errorf("%s: param %q, want %q", c.name, e.Param, c.param)
		}
	}
	spec, err := EndpointChange{URL: url, EnabledEvents: Of([]string{"bill.created", "bill.updated"}),
		Description: Optional[string]{Set: true, Null: true}}.Check(false, guard)
	if err != nil || *spec.URL != url.Value || len(spec.EnabledEvents) != 2 || spec.Description == nil || *spec.Description != nil || spec.Status != nil {
		t.Fatalf("spec %+v, %v", spec, err)
	}
}

// Events of a link need no scope; every other type needs its read scope.
func TestEventReadScopes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scopes Scopes
		typ    string
		ok     bool
	}{
		{nil, EventAccountLinked, true},
		{Scopes{}, EventAccountUnlinked, true},
		{Scopes{ScopeBillsRead}, "bill.created", true},
		{Scopes{ScopeBillsWrite}, "bill.created", false},
		{Scopes{ScopeMetersRead}, "meter.reading.created", true},
		{Scopes{ScopeWebhooksManage}, "webhook.test", true},
		{AllScopes, "unknown.thing", false},
	}
	for _, c := range cases {
		if got := c.scopes.CanRead(c.typ); got != c.ok {
			t.Errorf("%v reading %s: %v, want %v", c.scopes, c.typ, got, c.ok)
		}
	}
	if got := (Scopes{ScopeBillsRead}).EventPrefixes(); !slices.Equal(got, []string{"account.", "bill."}) {
		t.Errorf("prefixes %v", got)
	}
	for _, typ := range EventTypes {
		if !AllScopes.CanRead(typ) {
			t.Errorf("no scope reads %s", typ)
		}
	}
}
