package rental

import (
	"slices"
	"testing"
)

// Events of a link need no scope; every other type needs its read scope.
func TestEventReadScopes(t *testing.T) {
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
