package rental

import (
	"slices"
	"testing"
)

// Every scope has its words, and its resource a name; grouped, the scopes
// an application asks for come by resource in the order of AllScopes, each
// group saying whether it reads, writes or both, and no scope is lost or
// repeated.
func TestGroupScopes(t *testing.T) {
	t.Parallel()
	for _, sc := range AllScopes {
		if th, en := ScopeText(sc); th == string(sc) || en == string(sc) {
			t.Errorf("%s has no words", sc)
		}
	}
	all := GroupScopes(AllScopes)
	var back Scopes
	for _, g := range all {
		if _, known := resourceText[g.Resource]; !known || g.TH == g.Resource || g.EN == g.Resource {
			t.Errorf("resource %q has no name", g.Resource)
		}
		back = append(back, g.Scopes...)
	}
	if !slices.Equal(back, AllScopes) || len(all) != len(resourceText) {
		t.Fatalf("grouped %v", all)
	}
	type want struct {
		resource    string
		read, write bool
		n           int
	}
	got := func(gs []ScopeGroup) []want {
		var out []want
		for _, g := range gs {
			out = append(out, want{g.Resource, g.Read, g.Write, len(g.Scopes)})
		}
		return out
	}
	for _, c := range []struct {
		scopes Scopes
		want   []want
	}{
		{nil, nil},
		{Scopes{ScopePropertiesRead, ScopeRoomsRead, ScopeRoomsWrite, ScopeBillsWrite, ScopeWebhooksManage},
			[]want{{"properties", true, false, 1}, {"rooms", true, true, 2}, {"bills", false, true, 1}, {"webhooks", false, true, 1}}},
		{AllScopes[:2], []want{{"properties", true, true, 2}}},
		{Scopes{"calendar:read"}, []want{{"calendar", true, false, 1}}},
	} {
		if g := got(GroupScopes(c.scopes)); !slices.Equal(g, c.want) {
			t.Errorf("GroupScopes(%v) = %v, want %v", c.scopes, g, c.want)
		}
	}
}
