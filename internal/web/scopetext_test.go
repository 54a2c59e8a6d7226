package web

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"rentapi/internal/rental"
)

// Every scope has its words, and its resource a name; grouped, the scopes
// an application asks for come by resource in the order of
// rental.AllScopes, each group saying whether it reads, writes or both, and
// no scope is lost or repeated.
func TestGroupScopes(t *testing.T) {
	for _, sc := range rental.AllScopes {
		if th, en := ScopeText(sc); th == string(sc) || en == string(sc) {
			t.Errorf("%s has no words", sc)
		}
	}
	all := GroupScopes(rental.AllScopes)
	var back rental.Scopes
	for _, g := range all {
		if _, known := resourceText[g.Resource]; !known || g.TH == g.Resource || g.EN == g.Resource {
			t.Errorf("resource %q has no name", g.Resource)
		}
		back = append(back, g.Scopes...)
	}
	if !slices.Equal(back, rental.AllScopes) || len(all) != len(resourceText) {
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
		scopes rental.Scopes
		want   []want
	}{
		{nil, nil},
		{rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeRoomsWrite, rental.ScopeBillsWrite, rental.ScopeWebhooksManage},
			[]want{{"properties", true, false, 1}, {"rooms", true, true, 2}, {"bills", false, true, 1}, {"webhooks", false, true, 1}}},
		{rental.AllScopes[:2], []want{{"properties", true, true, 2}}},
		{rental.Scopes{"calendar:read"}, []want{{"calendar", true, false, 1}}},
	} {
		if g := got(GroupScopes(c.scopes)); !slices.Equal(g, c.want) {
			t.Errorf("GroupScopes(%v) = %v, want %v", c.scopes, g, c.want)
		}
	}
}

// Every scope has its own plain description in Thai and in English; a name
// that is no scope is shown as it is.
func TestScopeTextEveryScope(t *testing.T) {
	seen := map[string]rental.Scope{}
	for _, s := range rental.AllScopes {
		th, en := ScopeText(s)
		if !strings.ContainsFunc(th, func(r rune) bool { return unicode.Is(unicode.Thai, r) }) || en == "" || en == string(s) {
			t.Errorf("%s: %q / %q", s, th, en)
		}
		for _, text := range []string{th, en} {
			if other, dup := seen[text]; dup {
				t.Errorf("%s and %s both read %q", s, other, text)
			}
			seen[text] = s
		}
	}
	if th, en := ScopeText("rooms:delete"); th != "rooms:delete" || en != "rooms:delete" {
		t.Errorf("unknown scope: %q / %q", th, en)
	}
}
