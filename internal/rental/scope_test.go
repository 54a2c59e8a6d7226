package rental

import (
	"strings"
	"testing"
)

// Every scope has words in both languages, distinct from each other's, the
// Thai in Thai script; an unknown scope reads as its own name.
func TestScopeText(t *testing.T) {
	seen := map[string]Scope{}
	for _, s := range AllScopes {
		th, en := ScopeText(s)
		if th == "" || en == "" || th == string(s) || en == string(s) {
			t.Errorf("%s: %q %q", s, th, en)
		}
		if !strings.ContainsFunc(th, func(r rune) bool { return r >= 0x0E00 && r <= 0x0E7F }) {
			t.Errorf("%s: the Thai text %q has no Thai", s, th)
		}
		if other, ok := seen[en]; ok {
			t.Errorf("%s and %s read the same: %q", s, other, en)
		}
		seen[en] = s
	}
	if len(scopeText) != len(AllScopes) {
		t.Errorf("%d texts for %d scopes", len(scopeText), len(AllScopes))
	}
	cases := []struct {
		scope  Scope
		th, en string
	}{
		{ScopeBillsRead, "ดูบิล", "Read bills"},
		{"bills:delete", "bills:delete", "bills:delete"},
		{"", "", ""},
	}
	for _, c := range cases {
		if th, en := ScopeText(c.scope); th != c.th || en != c.en {
			t.Errorf("%q: %q %q, want %q %q", c.scope, th, en, c.th, c.en)
		}
	}
}
