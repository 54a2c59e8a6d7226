package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// The pages take text by the API's one rule (rental.CheckText and
// CheckLines): a name, company, key name or description with a C0 or C1
// control, a text-direction override or only spaces is refused with the
// form shown again (400); a description may run over lines.
func TestPagesTakeTheTextRule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		for i, name := range []string{"De\u0085v", "Dev\tOne", "\u202eveD", "Dev\x1b[2J"} {
			b := newBrowser(t, p.base, nil)
			email := fmt.Sprintf("x%d@example.com", i)
			if pg := b.post("/portal/signup", url.Values{"name": {name}, "email": {email}, "password": {"long enough pw"}}); pg.status != http.StatusBadRequest {
				t.Errorf("sign-up as %q: %d", name, pg.status)
			}
		}
		b := p.developer("dev@example.com")
		app := newApp(t, b, rental.ScopePropertiesRead)
		settings := url.Values{"name": {"Dorm Books"}, "company": {"Baan Soft"}, "description": {"Line one\r\nline two"},
			"redirect_uris": {"https://books.example.com/cb"}, "scope": {"properties:read"}}
		if pg := b.post("/portal/apps/"+app+"/settings", settings); pg.status != http.StatusSeeOther {
			t.Fatalf("a description of two lines: %d\n%s", pg.status, pg.body)
		}
		for _, field := range []string{"name", "company", "description"} {
			for _, bad := range []string{"x\u009b31my", "x\ty", "x\u200by", "x\x1b[2Jy"} {
				f := url.Values{}
				for k, v := range settings {
					f[k] = v
				}
				f.Set(field, bad)
				if pg := b.post("/portal/apps/"+app+"/settings", f); pg.status != http.StatusBadRequest {
					t.Errorf("settings with %s %q: %d", field, bad, pg.status)
				}
			}
		}
		for _, name := range []string{"k\u0085ey", "key\tone", "a\nb", "\u2066key\u2069"} {
			if pg := b.post("/portal/apps/"+app+"/keys", keyForm(name, rental.ModeTest, rental.ScopePropertiesRead)); pg.status != http.StatusBadRequest {
				t.Errorf("a key named %q: %d", name, pg.status)
			}
		}
	})
}
