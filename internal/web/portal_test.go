package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// portal is the service as serve runs it (the API and the pages, with the
// server secret) over a test engine's database.
type portal struct {
	t    *testing.T
	e    storetest.Engine
	hs   *httptest.Server
	base string
}

func newPortal(t *testing.T, e storetest.Engine) *portal {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	base := "http://" + hs.Listener.Addr().String()
	sec := storetest.Secret(t)
	srv, err := api.NewServer(api.Config{DB: e.DB, Secret: sec, PublicURL: base})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: e.DB, PublicURL: base, Secret: sec}, srv)
	hs.Start()
	return &portal{t: t, e: e, hs: hs, base: base}
}

// secondProcess is another process of the same deployment: its own
// database handle over the same database, and its own API server.
func (p *portal) secondProcess() string {
	t := p.t
	db, err := store.Open(t.Context(), p.e.DSN, store.Options{Secret: storetest.Secret(t), Now: p.e.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	srv, err := api.NewServer(api.Config{DB: db, Secret: storetest.Secret(t), PublicURL: "http://" + hs.Listener.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = srv
	hs.Start()
	return hs.URL
}

// developer signs a new developer up in a browser of their own.
func (p *portal) developer(email string) *browser {
	p.t.Helper()
	b := newBrowser(p.t, p.base, nil)
	if pg := b.post("/portal/signup", url.Values{"name": {"Dev " + email}, "email": {email}, "password": {"long enough pw"}}); pg.status != http.StatusSeeOther {
		p.t.Fatalf("sign-up: %+v", pg)
	}
	return b
}

// signIn signs the browser's developer in again (after the clock moved
// past a session's idle time).
func signIn(t *testing.T, b *browser, email string) {
	t.Helper()
	if pg := b.post("/portal/signin", url.Values{"email": {email}, "password": {"long enough pw"}}); pg.status != http.StatusSeeOther {
		t.Fatalf("sign-in: %+v", pg)
	}
}

var (
	appPath    = regexp.MustCompile(`^/portal/apps/(app_[A-Za-z0-9]+)/keys/(key_[A-Za-z0-9]+)/secret\?done=app_created$`)
	keyPath    = regexp.MustCompile(`^/portal/apps/app_[A-Za-z0-9]+/keys/(key_[A-Za-z0-9]+)/secret$`)
	secretText = regexp.MustCompile(`<p class="secret" id="secret">(svc_(?:test|live)_[A-Za-z0-9]{40})</p>`)
	keyIDs     = regexp.MustCompile(`/keys/(key_[A-Za-z0-9]+)/rotate`)
)

// newApp creates an application in the portal and returns its ID.
func newApp(t *testing.T, b *browser, scopes ...rental.Scope) string {
	t.Helper()
	app, _ := newAppKey(t, b, scopes...)
	return app
}

// newAppKey creates an application in the portal and returns its ID and
// the test key it comes with, read from the page the form's redirect
// leads to, which shows it once.
func newAppKey(t *testing.T, b *browser, scopes ...rental.Scope) (app, key string) {
	t.Helper()
	f := url.Values{"name": {"Dorm Books"}, "company": {"Baan Soft Co., Ltd."}, "description": {"Bookkeeping for dormitories"},
		"redirect_uris": {"https://books.example.com/cb\r\n\r\nhttp://localhost:3000/cb\r\n"}}
	for _, s := range scopes {
		f.Add("scope", string(s))
	}
	pg := b.post("/portal/apps/new", f)
	m := appPath.FindStringSubmatch(pg.location)
	if pg.status != http.StatusSeeOther || m == nil {
		t.Fatalf("create application: %d %s\n%s", pg.status, pg.location, pg.body)
	}
	shown := b.get(pg.location)
	k := secretText.FindStringSubmatch(shown.body)
	if shown.status != http.StatusOK || k == nil || !strings.Contains(shown.body, "with the test key below") {
		t.Fatalf("the new application's key: %d\n%s", shown.status, shown.body)
	}
	return m[1], k[1]
}

// newKey creates a key in the portal and returns its text, read from the
// page the form's redirect leads to, which shows it once.
func newKey(t *testing.T, b *browser, app string, f url.Values) string {
	t.Helper()
	_, secret := madeKey(t, b, b.post("/portal/apps/"+app+"/keys", f))
	return secret
}

// madeKey follows the redirect of a form that made a key (a new key, a
// rotation) to the page that shows it, and returns that page and the key.
func madeKey(t *testing.T, b *browser, pg page) (page, string) {
	t.Helper()
	if pg.status != http.StatusSeeOther || !keyPath.MatchString(pg.location) {
		t.Fatalf("a key form answered %d %q, not a redirect to the key's page:\n%s", pg.status, pg.location, pg.body)
	}
	shown := b.get(pg.location)
	m := secretText.FindStringSubmatch(shown.body)
	if shown.status != http.StatusOK || m == nil {
		t.Fatalf("the new key's page: %d\n%s", shown.status, shown.body)
	}
	return shown, m[1]
}

func keyForm(name string, mode rental.Mode, scopes ...rental.Scope) url.Values {
	f := url.Values{"name": {name}, "mode": {string(mode)}}
	for _, s := range scopes {
		f.Add("scope", string(s))
	}
	return f
}

// apiAnswer is an API response: status, error code, and the data.
type apiAnswer struct {
	status int
	code   string
	data   json.RawMessage
}

// callAPI sends an API request with the key (and an account header when
// account is not empty, and a JSON body when one is given).
func callAPI(t *testing.T, base, key, method, path, account string, body ...string) apiAnswer {
	t.Helper()
	var rb io.Reader
	if len(body) > 0 {
		rb = strings.NewReader(body[0])
	}
	r, _ := http.NewRequest(method, base+path, rb)
	r.Header.Set("Authorization", "Bearer "+key)
	if account != "" {
		r.Header.Set("SERVICE-Account", account)
	}
	if rb != nil {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", rental.NewID("idem"))
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out struct {
		Data  json.RawMessage `json:"data"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &out)
	return apiAnswer{status: resp.StatusCode, code: out.Error.Code, data: out.Data}
}

func wantAPI(t *testing.T, got apiAnswer, status int, code string) {
	t.Helper()
	if got.status != status || got.code != code {
		t.Fatalf("API: %d %q, want %d %q", got.status, got.code, status, code)
	}
}

// usableKeyNamed is the ID of the first key of the name listed on an
// application's page that can still be rotated (neither revoked nor
// expired).
func usableKeyNamed(t *testing.T, body, name string) string {
	t.Helper()
	for _, li := range strings.Split(body, `<li class="key">`)[1:] {
		li, _, _ = strings.Cut(li, "</li>")
		if m := keyIDs.FindStringSubmatch(li); m != nil && strings.Contains(li, "<strong>"+name+"</strong>") {
			return m[1]
		}
	}
	t.Fatalf("no usable key named %q on the page:\n%s", name, body)
	return ""
}

// keySection is the part of an application's page that lists one key.
func keySection(t *testing.T, body, keyID string) string {
	t.Helper()
	for _, li := range strings.Split(body, `<li class="key">`)[1:] {
		li, _, _ = strings.Cut(li, "</li>")
		if strings.Contains(li, keyID) || strings.Contains(li, keyID[:len(rental.KeyPrefixTest)+4]) {
			return li
		}
	}
	t.Fatalf("no key %s on the page:\n%s", keyID, body)
	return ""
}

// A developer creates an application with the portal, gets its sandbox of
// sample data and a test key there that works against the real API; the
// portal lists the key (prefix and last 4, never the secret) and its last
// use; settings change at once (a removed scope is refused at the next
// request); a bad form is a clear page, never a 500; a key's scopes stay
// within the application's, however the form is forged.
func TestPortalApplication(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("dev@example.com")
		if pg := b.get("/portal"); pg.status != http.StatusOK || !strings.Contains(pg.body, "No applications yet") {
			t.Fatalf("empty portal: %d\n%s", pg.status, pg.body)
		}
		if pg := b.get("/portal/apps/new"); pg.status != http.StatusOK || strings.Count(pg.body, `name="scope"`) != len(rental.AllScopes) ||
			!strings.Contains(pg.body, "ดูข้อมูลผู้เช่า (ข้อมูลส่วนบุคคล)") || !strings.Contains(pg.body, "See your tenants (personal data)") {
			t.Fatalf("new application form: %d\n%s", pg.status, pg.body)
		}
		bad := b.post("/portal/apps/new", url.Values{"name": {"X"}, "company": {"Y"}, "scope": {"bills:read"}, "redirect_uris": {"http://books.example.com/cb"}})
		if bad.status != http.StatusBadRequest || !strings.Contains(bad.body, "must be https") || !strings.Contains(bad.body, `value="X"`) {
			t.Fatalf("a plain-http redirect URI: %d\n%s", bad.status, bad.body)
		}
		if pg := b.post("/portal/apps/new", url.Values{"name": {"X"}, "company": {"Y"}, "scope": {"all"}}); pg.status != http.StatusBadRequest {
			t.Fatalf("a forged scope: %d", pg.status)
		}
		app := newApp(t, b, rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeBillsRead)
		got, err := e.DB.Read().GetApplication(t.Context(), app)
		if err != nil || got.Company != "Baan Soft Co., Ltd." || got.Description != "Bookkeeping for dormitories" || got.Scopes.String() != "properties:read rooms:read bills:read" ||
			strings.Join(got.RedirectURIs, " ") != "https://books.example.com/cb http://localhost:3000/cb" {
			t.Fatalf("stored application %+v (%v)", got, err)
		}

		// A test key made in the portal reaches the sandbox's sample data.
		key := newKey(t, b, app, keyForm("Sandbox key", rental.ModeTest, rental.ScopePropertiesRead, rental.ScopeBillsRead))
		props := callAPI(t, p.base, key, "GET", "/v1/properties", "")
		var list []map[string]any
		if json.Unmarshal(props.data, &list); props.status != http.StatusOK || len(list) != 2 {
			t.Fatalf("sandbox properties: %d %s", props.status, props.data)
		}
		home := b.get("/portal")
		if !strings.Contains(home.body, "Dorm Books") || !strings.Contains(home.body, "Keys</span> <strong>2</strong>") ||
			!strings.Contains(home.body, "Linked accounts</span> <strong>0</strong>") || !strings.Contains(home.body, "2026-11-22 10:00") {
			t.Fatalf("home:\n%s", home.body)
		}

		// Listed by prefix and last 4, with the last use (written beside the
		// request, so looked for until it lands); never the secret.
		lastUsed := func(want string) string {
			t.Helper()
			var li string
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if li = keySection(t, b.get("/portal/apps/"+app).body, key); strings.Contains(li, `last-used">`+want+`<`) {
					break
				}
			}
			return li
		}
		lastUsed("2026-11-22 10:00")
		page := b.get("/portal/apps/" + app)
		if page.status != http.StatusOK || strings.Contains(page.body, key) {
			t.Fatalf("application page %d shows the secret?\n%s", page.status, page.body)
		}
		li := keySection(t, page.body, key)
		shown := rental.KeyVisiblePrefix(key) + "…" + key[len(key)-4:]
		if !strings.Contains(li, shown) || !strings.Contains(li, "active") || !strings.Contains(li, "properties:read") ||
			strings.Contains(li, "rooms:read") || !strings.Contains(li, `<dd class="last-used">2026-11-22 10:00</dd>`) {
			t.Fatalf("key listing (want %s, used at 10:00):\n%s", shown, li)
		}

		// The last use is written at most once a minute.
		e.Clock.Advance(30 * time.Second)
		callAPI(t, p.base, key, "GET", "/v1/account", "")
		if li := keySection(t, b.get("/portal/apps/"+app).body, key); !strings.Contains(li, `last-used">2026-11-22 10:00<`) {
			t.Fatalf("a use 30 s later was written:\n%s", li)
		}
		e.Clock.Advance(2 * time.Minute)
		callAPI(t, p.base, key, "GET", "/v1/account", "")
		if li := lastUsed("2026-11-22 10:02"); !strings.Contains(li, `last-used">2026-11-22 10:02<`) {
			t.Fatalf("a use 2 min later was not written:\n%s", li)
		}

		// A key's scopes within the application's: a forged form is refused
		// and makes no key.
		for _, forged := range []url.Values{keyForm("k", rental.ModeTest, rental.ScopeTenantsRead), keyForm("k", rental.ModeTest, "all"),
			keyForm("k", rental.ModeTest, "bills:read bills:write")} {
			pg := b.post("/portal/apps/"+app+"/keys", forged)
			if pg.status != http.StatusBadRequest || secretText.MatchString(pg.body) || !strings.Contains(pg.body, "scopes") {
				t.Fatalf("forged scopes %v: %d\n%s", forged, pg.status, pg.body)
			}
		}
		if n := len(keyIDs.FindAllString(b.get("/portal/apps/"+app).body, -1)); n != 2 { // the application's own test key, and "Sandbox key"
			t.Fatalf("%d keys after forged forms", n)
		}

		// Removing a scope takes effect at the next request; adding one
		// leaves the grant as it was.
		wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/bills", ""), http.StatusOK, "")
		settings := url.Values{"name": {"Dorm Books 2"}, "company": {"Baan Soft"}, "description": {""}, "redirect_uris": {"https://books.example.com/cb"},
			"scope": {"properties:read", "tenants:read"}}
		if pg := b.post("/portal/apps/"+app+"/settings", settings); pg.status != http.StatusSeeOther {
			t.Fatalf("settings: %d\n%s", pg.status, pg.body)
		}
		wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/bills", ""), http.StatusForbidden, "insufficient_scope")
		wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/properties", ""), http.StatusOK, "")
		page = b.get("/portal/apps/" + app + "?done=app_saved")
		if !strings.Contains(page.body, "Dorm Books 2") || !strings.Contains(page.body, "Settings saved.") {
			t.Fatalf("saved settings:\n%s", page.body)
		}
		settings.Set("name", "")
		if pg := b.post("/portal/apps/"+app+"/settings", settings); pg.status != http.StatusBadRequest || !strings.Contains(pg.body, "ตรวจสอบชื่อ") {
			t.Fatalf("no name: %d\n%s", pg.status, pg.body)
		}
		// Bad input anywhere is a page of its own, never a 500.
		for _, path := range []string{"/portal/apps/app_nope", "/portal/apps/" + app + "/keys/key_nope/rotate", "/portal/apps/" + app + "/accounts/" + got.SandboxAccountID + "/disconnect",
			"/portal/apps/" + app + "/link", "/portal/apps/%00/keys/new"} {
			if pg := b.get(path); pg.status != http.StatusNotFound || !strings.Contains(pg.body, "This page does not exist") {
				t.Errorf("GET %s: %d", path, pg.status)
			}
		}
		if pg := b.post("/portal/apps/"+app+"/keys/key_nope/revoke", url.Values{}); pg.status != http.StatusNotFound {
			t.Errorf("revoke of no key: %d", pg.status)
		}
		nul := keyForm("k", rental.ModeLive, rental.ScopePropertiesRead)
		nul.Set("account", "acct_\x00")
		for _, f := range []url.Values{nul, keyForm("k\x00", rental.ModeTest, rental.ScopePropertiesRead), withExpiry(keyForm("k", rental.ModeTest), "2026\x00")} {
			if pg := b.post("/portal/apps/"+app+"/keys", f); pg.status != http.StatusBadRequest {
				t.Errorf("a key form with NUL %v: %d", f, pg.status)
			}
		}
		settings.Set("name", "App")
		for _, field := range []string{"name", "company", "description", "redirect_uris"} {
			f := url.Values{}
			for k, v := range settings {
				f[k] = v
			}
			f.Set(field, "x\x00y")
			if pg := b.post("/portal/apps/"+app+"/settings", f); pg.status != http.StatusBadRequest {
				t.Errorf("settings with NUL in %s: %d", field, pg.status)
			}
		}
	})
}

// Keys over their life, through the portal and the real API: rotation (the
// old key works 24 hours more, then is refused), revocation (refused from
// the next request, by every process of the deployment), an expiry date,
// no live key before a link, no test key bound to an account.
func TestPortalKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		other := p.secondProcess()
		b := p.developer("dev@example.com")
		app := newApp(t, b, rental.AllScopes...)
		key := newKey(t, b, app, keyForm("CI", rental.ModeTest, rental.ScopePropertiesRead))
		wantAPI(t, callAPI(t, other, key, "GET", "/v1/properties", ""), http.StatusOK, "")

		// Live keys wait for a linked landlord; a test key binds to nothing.
		live := b.post("/portal/apps/"+app+"/keys", keyForm("Prod", rental.ModeLive, rental.ScopePropertiesRead))
		if live.status != http.StatusConflict || !strings.Contains(live.body, "สร้างคีย์ live ได้หลังจากมีเจ้าของหอพักเชื่อมต่อ") ||
			!strings.Contains(live.body, "only after a landlord account is linked") || secretText.MatchString(live.body) {
			t.Fatalf("live key before a link: %d\n%s", live.status, live.body)
		}
		bound := keyForm("Bound", rental.ModeTest, rental.ScopePropertiesRead)
		bound.Set("account", "acct_someone")
		if pg := b.post("/portal/apps/"+app+"/keys", bound); pg.status != http.StatusBadRequest || secretText.MatchString(pg.body) {
			t.Fatalf("a bound test key: %d", pg.status)
		}

		// Rotation: the new key is shown once; both work for 24 hours.
		id := usableKeyNamed(t, b.get("/portal/apps/"+app).body, "CI")
		if pg := b.get("/portal/apps/" + app + "/keys/" + id + "/rotate"); pg.status != http.StatusOK || !strings.Contains(pg.body, "24 hours") {
			t.Fatalf("rotate confirmation: %d", pg.status)
		}
		rot, next := madeKey(t, b, b.post("/portal/apps/"+app+"/keys/"+id+"/rotate", url.Values{}))
		if next == key || !strings.Contains(rot.body, "keeps working until 2026-11-23 10:00") {
			t.Fatalf("rotate:\n%s", rot.body)
		}
		if li := keySection(t, b.get("/portal/apps/"+app).body, key); !strings.Contains(li, "expiring") || !strings.Contains(li, "2026-11-23 10:00") {
			t.Fatalf("the rotated key is not listed as expiring:\n%s", li)
		}
		e.Clock.Advance(24*time.Hour - time.Minute)
		wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/properties", ""), http.StatusOK, "")
		e.Clock.Advance(time.Minute)
		wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/properties", ""), http.StatusUnauthorized, "invalid_api_key")
		wantAPI(t, callAPI(t, other, key, "GET", "/v1/properties", ""), http.StatusUnauthorized, "invalid_api_key")
		wantAPI(t, callAPI(t, p.base, next, "GET", "/v1/properties", ""), http.StatusOK, "")
		signIn(t, b, "dev@example.com") // the session idled out meanwhile
		page := b.get("/portal/apps/" + app)
		if li := keySection(t, page.body, key); !strings.Contains(li, "expired") || strings.Contains(li, "/rotate") {
			t.Fatalf("the old key after 24 hours:\n%s", li)
		}

		// Revocation: refused at the next request, by this process and the other.
		nextID := usableKeyNamed(t, page.body, "CI")
		wantAPI(t, callAPI(t, other, next, "GET", "/v1/properties", ""), http.StatusOK, "")
		if pg := b.get("/portal/apps/" + app + "/keys/" + nextID + "/revoke"); pg.status != http.StatusOK || !strings.Contains(pg.body, "cannot be undone") {
			t.Fatalf("revoke confirmation: %d", pg.status)
		}
		if pg := b.post("/portal/apps/"+app+"/keys/"+nextID+"/revoke", url.Values{}); pg.status != http.StatusSeeOther {
			t.Fatalf("revoke: %+v", pg)
		}
		wantAPI(t, callAPI(t, p.base, next, "GET", "/v1/properties", ""), http.StatusUnauthorized, "invalid_api_key")
		wantAPI(t, callAPI(t, other, next, "GET", "/v1/properties", ""), http.StatusUnauthorized, "invalid_api_key")
		if pg := b.post("/portal/apps/"+app+"/keys/"+nextID+"/revoke", url.Values{}); pg.status != http.StatusSeeOther {
			t.Fatalf("revoked twice: %d", pg.status)
		}
		if pg := b.post("/portal/apps/"+app+"/keys/"+nextID+"/rotate", url.Values{}); pg.status != http.StatusConflict || secretText.MatchString(pg.body) {
			t.Fatalf("rotating a revoked key: %d", pg.status)
		}
		if li := keySection(t, b.get("/portal/apps/"+app+"?done=key_revoked").body, next); !strings.Contains(li, "revoked") {
			t.Fatalf("revoked key:\n%s", li)
		}

		// An expiry date: the key works through that day (Thailand time).
		if pg := b.post("/portal/apps/"+app+"/keys", withExpiry(keyForm("Old", rental.ModeTest, rental.ScopePropertiesRead), "2026-11-01")); pg.status != http.StatusBadRequest ||
			!strings.Contains(pg.body, "ตรวจสอบวันหมดอายุ") {
			t.Fatalf("an expiry in the past: %d\n%s", pg.status, pg.body)
		}
		short := newKey(t, b, app, withExpiry(keyForm("Short", rental.ModeTest, rental.ScopePropertiesRead), "2026-11-24")) // now: 2026-11-23 10:00 in Bangkok
		if li := keySection(t, b.get("/portal/apps/"+app).body, short); !strings.Contains(li, "2026-11-25 00:00") || !strings.Contains(li, "active") {
			t.Fatalf("a key with an expiry:\n%s", li)
		}
		e.Clock.Advance(38*time.Hour - time.Minute) // 2026-11-24 23:59
		wantAPI(t, callAPI(t, p.base, short, "GET", "/v1/properties", ""), http.StatusOK, "")
		e.Clock.Advance(time.Minute)
		wantAPI(t, callAPI(t, other, short, "GET", "/v1/properties", ""), http.StatusUnauthorized, "invalid_api_key")
		signIn(t, b, "dev@example.com")
		if li := keySection(t, b.get("/portal/apps/"+app).body, short); !strings.Contains(li, "expired") {
			t.Fatalf("an expired key:\n%s", li)
		}
	})
}

func withExpiry(f url.Values, date string) url.Values {
	f.Set("expires", date)
	return f
}

// startLink presses "link an account" and returns the state the consent
// page was sent, checking the redirect and the state cookie.
func startLink(t *testing.T, p *portal, b *browser, app string) string {
	t.Helper()
	pg := b.post("/portal/apps/"+app+"/link", url.Values{})
	u, err := url.Parse(pg.location)
	if pg.status != http.StatusSeeOther || err != nil || u.Path != "/connect/"+app || u.Query().Get("redirect_uri") != p.base+"/portal/callback" {
		t.Fatalf("link: %d %s", pg.status, pg.location)
	}
	state := u.Query().Get("state")
	if rental.CheckState(state) != nil || len(pg.cookies) != 1 {
		t.Fatalf("state %q, cookies %v", state, pg.cookies)
	}
	c := pg.cookies[0]
	if c.Name != "rentapi_link_state" || c.Value != state || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" ||
		c.MaxAge <= 0 || c.MaxAge > 1800 {
		t.Fatalf("state cookie %+v", c)
	}
	return state
}

// approve plays the consent page's part (another engineer's page): the
// landlord approves, and the portal's link gets a code.
func approve(t *testing.T, e storetest.Engine, app, state, landlord string, scopes rental.Scopes) string {
	t.Helper()
	code, codeHash := identity.NewToken()
	err := e.DB.InTx(t.Context(), func(tx *store.Tx) error {
		return tx.IssuePortalCode(t.Context(), identity.HashToken(state), app, landlord, scopes, codeHash)
	})
	if err != nil {
		t.Fatal(err)
	}
	return code
}

func callback(code, state string) string {
	return "/portal/callback?" + url.Values{"code": {code}, "state": {state}}.Encode()
}

// setStateCookie puts a state cookie in a browser, as a browser that
// started a link would hold.
func setStateCookie(b *browser, state string) {
	u, _ := url.Parse(b.base)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "rentapi_link_state", Value: state, Path: "/"}})
}

func wantNothingLinked(t *testing.T, e storetest.Engine, app string, pg page, what string) {
	t.Helper()
	if pg.status != http.StatusBadRequest || !strings.Contains(pg.body, "Nothing was linked") {
		t.Fatalf("%s: %d\n%s", what, pg.status, pg.body)
	}
	if linked, err := e.DB.Read().HasLiveAccount(context.Background(), app); err != nil || linked {
		t.Fatalf("%s linked an account (%v)", what, err)
	}
}

// The portal's link flow: the callback links only with the code of the
// state in this browser's cookie, for the developer's session that
// started it, once, within 5 minutes; anything else links nothing. Then a
// live key works on the account until the developer disconnects it
// (403 account_access_revoked); relinking gives the same account back with
// its data. Cross-site posts and another developer's application are
// refused.
func TestPortalLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("dev@example.com")
		app := newApp(t, b, rental.AllScopes...)
		var landlord string
		e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
			landlord, err = tx.CreateLandlord(t.Context(), "Khun Somchai", rental.LandlordStandard)
			return err
		})
		granted := rental.Scopes{rental.ScopePropertiesRead, rental.ScopePropertiesWrite}

		// The landlord declines.
		state := startLink(t, p, b, app)
		if pg := b.get("/portal/callback?error=access_denied&state=" + url.QueryEscape(state)); pg.status != http.StatusOK ||
			!strings.Contains(pg.body, "The landlord declined") {
			t.Fatalf("declined: %d\n%s", pg.status, pg.body)
		}

		// No state cookie; a state cookie of another link; a forged code.
		state = startLink(t, p, b, app)
		code := approve(t, e, app, state, landlord, granted)
		u, _ := url.Parse(b.base)
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "rentapi_link_state", Path: "/", MaxAge: -1}})
		wantNothingLinked(t, e, app, b.get(callback(code, state)), "no state cookie")
		other := startLink(t, p, b, app)
		wantNothingLinked(t, e, app, b.get(callback(code, state)), "the cookie of another link")
		wantNothingLinked(t, e, app, b.get(callback(code, other)), "another link's state with this code")
		setStateCookie(b, state)
		forged, _ := identity.NewToken()
		wantNothingLinked(t, e, app, b.get(callback(forged, state)), "a forged code")

		// Another developer's session, with the right cookie, state and code.
		mallory := p.developer("mallory@example.com")
		setStateCookie(mallory, state)
		wantNothingLinked(t, e, app, mallory.get(callback(code, state)), "another developer's session")

		// Expired: the code lives 5 minutes.
		late := startLink(t, p, b, app)
		lateCode := approve(t, e, app, late, landlord, granted)
		e.Clock.Advance(rental.ConnectCodeValidity + time.Second)
		wantNothingLinked(t, e, app, b.get(callback(lateCode, late)), "an expired code")

		// The code of the state in the cookie, by the session that started it.
		state = startLink(t, p, b, app)
		code = approve(t, e, app, state, landlord, granted)
		ok := b.get(callback(code, state))
		acct := regexp.MustCompile(`<code id="account">(acct_[A-Za-z0-9]+)</code>`).FindStringSubmatch(ok.body)
		if ok.status != http.StatusOK || acct == nil || !strings.Contains(ok.body, "Khun Somchai") || !strings.Contains(ok.body, "properties:write") {
			t.Fatalf("linked: %d\n%s", ok.status, ok.body)
		}
		if len(ok.cookies) != 1 || ok.cookies[0].Name != "rentapi_link_state" || ok.cookies[0].MaxAge >= 0 {
			t.Fatalf("the state cookie is not cleared: %v", ok.cookies)
		}
		setStateCookie(b, state)
		if pg := b.get(callback(code, state)); pg.status != http.StatusBadRequest {
			t.Fatalf("a replayed code: %d", pg.status)
		}
		page := b.get("/portal/apps/" + app)
		if !strings.Contains(page.body, acct[1]) || !strings.Contains(page.body, "Khun Somchai") || !strings.Contains(page.body, "Linked since") {
			t.Fatalf("linked accounts:\n%s", page.body)
		}

		// A live key works on the account; disconnecting ends that.
		liveForm := keyForm("Prod", rental.ModeLive, rental.ScopePropertiesRead, rental.ScopePropertiesWrite)
		live := newKey(t, b, app, liveForm)
		if !strings.HasPrefix(live, rental.KeyPrefixLive) {
			t.Fatalf("live key %s", live)
		}
		boundForm := keyForm("Bound", rental.ModeLive, rental.ScopePropertiesRead)
		boundForm.Set("account", acct[1])
		boundKey := newKey(t, b, app, boundForm)
		wantAPI(t, callAPI(t, p.base, live, "GET", "/v1/properties", acct[1]), http.StatusOK, "")
		wantAPI(t, callAPI(t, p.base, boundKey, "GET", "/v1/account", ""), http.StatusOK, "")
		wantAPI(t, callAPI(t, p.base, live, "POST", "/v1/properties", acct[1],
			`{"name":"Baan Suk","address":"99 Sukhumvit 71","electricity_rate":800,"water_rate":1800}`), http.StatusCreated, "")
		disconnectPath := "/portal/apps/" + app + "/accounts/" + acct[1] + "/disconnect"
		if pg := b.get(disconnectPath); pg.status != http.StatusOK || !strings.Contains(pg.body, "account_access_revoked") {
			t.Fatalf("disconnect confirmation: %d", pg.status)
		}
		if pg := b.do("POST", disconnectPath, url.Values{}, "https://evil.example"); pg.status != http.StatusForbidden {
			t.Fatalf("a cross-site disconnect: %d", pg.status)
		}
		wantAPI(t, callAPI(t, p.base, live, "GET", "/v1/properties", acct[1]), http.StatusOK, "")
		if pg := b.post(disconnectPath, url.Values{}); pg.status != http.StatusSeeOther {
			t.Fatalf("disconnect: %+v", pg)
		}
		wantAPI(t, callAPI(t, p.base, live, "GET", "/v1/properties", acct[1]), http.StatusForbidden, "account_access_revoked")
		wantAPI(t, callAPI(t, p.base, boundKey, "GET", "/v1/account", ""), http.StatusForbidden, "account_access_revoked")
		if pg := b.get("/portal/apps/" + app + "?done=account_disconnected"); !strings.Contains(pg.body, "disconnected") || strings.Contains(pg.body, disconnectPath) {
			t.Fatalf("after disconnecting:\n%s", pg.body)
		}

		// Linking again needs approval again and gives the same account.
		state = startLink(t, p, b, app)
		code = approve(t, e, app, state, landlord, granted)
		if again := b.get(callback(code, state)); !strings.Contains(again.body, acct[1]) {
			t.Fatalf("relinked:\n%s", again.body)
		}
		if props := callAPI(t, p.base, live, "GET", "/v1/properties", acct[1]); props.status != http.StatusOK || !strings.Contains(string(props.data), "Baan Suk") {
			t.Fatalf("the landlord's data after relinking: %d %s", props.status, props.data)
		}

		// Cross-site posts change nothing; another developer's application is not found.
		keyID := keyIDs.FindStringSubmatch(b.get("/portal/apps/" + app).body)[1]
		if pg := b.do("POST", "/portal/apps/"+app+"/keys/"+keyID+"/revoke", url.Values{}, "https://evil.example"); pg.status != http.StatusForbidden {
			t.Fatalf("a cross-site revoke: %d", pg.status)
		}
		if pg := b.do("POST", "/portal/apps/"+app+"/keys", keyForm("x", rental.ModeTest), "https://evil.example"); pg.status != http.StatusForbidden {
			t.Fatalf("a cross-site key: %d", pg.status)
		}
		wantAPI(t, callAPI(t, p.base, boundKey, "GET", "/v1/account", ""), http.StatusOK, "")
		for _, path := range []string{"/portal/apps/" + app, "/portal/apps/" + app + "/keys/new", "/portal/apps/" + app + "/keys/" + keyID + "/revoke",
			disconnectPath} {
			if pg := mallory.get(path); pg.status != http.StatusNotFound {
				t.Errorf("another developer's GET %s: %d", path, pg.status)
			}
		}
		for _, path := range []string{"/portal/apps/" + app + "/keys/" + keyID + "/revoke", "/portal/apps/" + app + "/link", disconnectPath,
			"/portal/apps/" + app + "/settings", "/portal/apps/" + app + "/keys"} {
			if pg := mallory.post(path, keyForm("x", rental.ModeTest, rental.ScopePropertiesRead)); pg.status != http.StatusNotFound {
				t.Errorf("another developer's POST %s: %d", path, pg.status)
			}
		}
		wantAPI(t, callAPI(t, p.base, boundKey, "GET", "/v1/account", ""), http.StatusOK, "")
		if pg := mallory.get("/portal"); strings.Contains(pg.body, app) {
			t.Errorf("another developer's list shows the application")
		}
	})
}

// Over https the state cookie carries the __Host- prefix (Secure, Path=/,
// no Domain), so no sibling subdomain or plain-http page can plant one.
func TestPortalLinkCookieOverHTTPS(t *testing.T) {
	t.Parallel()
	hs, _ := site(t, true, nil)
	b := newBrowser(t, hs.URL, hs.Client().Transport)
	b.post("/portal/signup", url.Values{"name": {"Dev"}, "email": {"dev@example.com"}, "password": {"long enough pw"}})
	app := newApp(t, b, rental.ScopeBillsRead)
	pg := b.post("/portal/apps/"+app+"/link", url.Values{})
	if pg.status != http.StatusSeeOther || len(pg.cookies) != 1 {
		t.Fatalf("link: %+v", pg)
	}
	c := pg.cookies[0]
	if c.Name != "__Host-rentapi_link_state" || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("state cookie %+v", c)
	}
	u, _ := url.Parse(pg.location)
	if got := u.Query().Get("redirect_uri"); got != hs.URL+"/portal/callback" {
		t.Fatalf("redirect_uri %s", got)
	}
	if pg := b.get("/portal/callback?error=access_denied&state=x"); len(pg.cookies) != 1 || pg.cookies[0].Name != c.Name || pg.cookies[0].MaxAge >= 0 {
		t.Fatalf("the callback does not clear the cookie: %v", pg.cookies)
	}
}

// A new application comes with one test key, of all the application's
// scopes, shown once on the page the form's redirect leads to, and working
// on the sandbox at once; a look at that page again shows it no more, and
// makes no key.
func TestPortalNewApplicationKey(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("dev@example.com")
		f := url.Values{"name": {"Dorm Books"}, "company": {"Baan Soft Co., Ltd."}, "scope": {"properties:read", "bills:read", "bills:write"}}
		created := b.post("/portal/apps/new", f)
		m := appPath.FindStringSubmatch(created.location)
		if created.status != http.StatusSeeOther || m == nil || strings.Contains(created.body, rental.KeyPrefixTest) {
			t.Fatalf("create application: %d %q\n%s", created.status, created.location, created.body)
		}
		app, keyID := m[1], m[2]
		shown := b.get(created.location)
		k := secretText.FindStringSubmatch(shown.body)
		if shown.status != http.StatusOK || k == nil || !strings.HasPrefix(k[1], rental.KeyPrefixTest) ||
			!strings.Contains(shown.body, "with the test key below") || !strings.Contains(shown.body, "Test key") {
			t.Fatalf("the new application's key page: %d\n%s", shown.status, shown.body)
		}
		key := k[1]
		var props []map[string]any
		list := callAPI(t, p.base, key, "GET", "/v1/properties", "")
		if json.Unmarshal(list.data, &props); list.status != http.StatusOK || len(props) != 2 {
			t.Fatalf("the test key on the sandbox: %d %s", list.status, list.data)
		}
		stored, err := e.DB.Read().APIKeys(t.Context(), app)
		if err != nil || len(stored) != 1 || stored[0].ID != keyID || stored[0].Mode != rental.ModeTest || stored[0].Name != "Test key" ||
			stored[0].Scopes.String() != "properties:read bills:read bills:write" || stored[0].AccountID != "" || stored[0].ExpiresAt != nil {
			t.Fatalf("the application's keys: %+v (%v)", stored, err)
		}
		for range 3 {
			again := b.get(created.location)
			if again.status != http.StatusGone || strings.Contains(again.body, key) || secretText.MatchString(again.body) || !strings.Contains(again.body, "was shown already") {
				t.Fatalf("the key's page again: %d\n%s", again.status, again.body)
			}
		}
		if keys, _ := e.DB.Read().APIKeys(t.Context(), app); len(keys) != 1 {
			t.Fatalf("%d keys after looking again", len(keys))
		}
		if home := b.get("/portal"); !strings.Contains(home.body, "Keys</span> <strong>1</strong>") {
			t.Fatalf("home:\n%s", home.body)
		}
	})
}

// Every form that makes a secret answers with a redirect (POST-redirect-
// GET), and the page it leads to shows the secret once: reloading it makes
// no key (three reloads, still one key) and shows the secret no more (410);
// the secret goes there in a cookie of its own, HttpOnly, SameSite=Strict,
// short-lived, sealed to the session that made it (another session of the
// same developer cannot open it), and is never stored.
func TestPortalSecretShownOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("dev@example.com")
		app := newApp(t, b, rental.AllScopes...)
		count := func() int {
			t.Helper()
			keys, err := e.DB.Read().APIKeys(t.Context(), app)
			if err != nil {
				t.Fatal(err)
			}
			return len(keys)
		}

		made := b.post("/portal/apps/"+app+"/keys", keyForm("Reloaded", rental.ModeTest, rental.ScopePropertiesRead))
		if made.status != http.StatusSeeOther || !keyPath.MatchString(made.location) || secretText.MatchString(made.body) {
			t.Fatalf("a new key answered %d %q\n%s", made.status, made.location, made.body)
		}
		if len(made.cookies) != 1 {
			t.Fatalf("cookies %v", made.cookies)
		}
		c := made.cookies[0]
		if !strings.HasPrefix(c.Name, "rentapi_shown_key_") || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.MaxAge <= 0 || c.MaxAge > 600 ||
			strings.Contains(c.Value, rental.KeyPrefixTest) {
			t.Fatalf("the key's cookie %+v", c)
		}
		// Another session of the same developer, with the cookie copied,
		// sees no secret.
		other := newBrowser(t, p.base, nil)
		signIn(t, other, "dev@example.com")
		u, _ := url.Parse(p.base)
		other.c.Jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: c.Value, Path: "/"}})
		if pg := other.get(made.location); pg.status != http.StatusGone || secretText.MatchString(pg.body) {
			t.Fatalf("another session's look: %d\n%s", pg.status, pg.body)
		}
		shown := b.get(made.location)
		m := secretText.FindStringSubmatch(shown.body)
		if shown.status != http.StatusOK || m == nil || len(shown.cookies) != 1 || shown.cookies[0].Name != c.Name || shown.cookies[0].MaxAge >= 0 {
			t.Fatalf("the key's page: %d %v\n%s", shown.status, shown.cookies, shown.body)
		}
		key := m[1]
		wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/account", ""), http.StatusOK, "")
		for range 3 {
			if pg := b.get(made.location); pg.status != http.StatusGone || strings.Contains(pg.body, key) || !strings.Contains(pg.body, "rotate the key") {
				t.Fatalf("reloaded: %d\n%s", pg.status, pg.body)
			}
		}
		// A cookie replayed (kept by a browser that ignores the clearing)
		// shows it no more once it is over revealLife.
		b.c.Jar.SetCookies(u, []*http.Cookie{{Name: c.Name, Value: c.Value, Path: "/"}})
		e.Clock.Advance(6 * time.Minute)
		if pg := b.get(made.location); pg.status != http.StatusGone || strings.Contains(pg.body, key) {
			t.Fatalf("an old cookie replayed: %d", pg.status)
		}
		if n := count(); n != 2 {
			t.Fatalf("%d keys after three reloads, want 2 (the application's own and this one)", n)
		}

		// A rotation too: the successor shown once, with the old key's end.
		rot := b.post("/portal/apps/"+app+"/keys/"+usableKeyNamed(t, b.get("/portal/apps/"+app).body, "Reloaded")+"/rotate", url.Values{})
		page, next := madeKey(t, b, rot)
		if next == key || !strings.Contains(page.body, "The key's successor") || !strings.Contains(page.body, "keeps working until") {
			t.Fatalf("the successor's page:\n%s", page.body)
		}
		for range 3 {
			if pg := b.get(rot.location); pg.status != http.StatusGone || strings.Contains(pg.body, next) {
				t.Fatalf("the successor's page reloaded: %d", pg.status)
			}
		}
		if n := count(); n != 3 {
			t.Fatalf("%d keys after a rotation and three reloads, want 3", n)
		}
		// Another developer's key page is not found, as any of theirs.
		mallory := p.developer("mallory@example.com")
		if pg := mallory.get(rot.location); pg.status != http.StatusNotFound {
			t.Fatalf("another developer's key page: %d", pg.status)
		}
		if pg := b.get("/portal/apps/" + app + "/keys/key_nope/secret"); pg.status != http.StatusNotFound {
			t.Fatalf("no such key: %d", pg.status)
		}
		// No key is kept in clear anywhere.
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, key) || strings.Contains(row, next) {
				t.Fatalf("table %s holds a key in clear", table)
			}
		}
	})
}

// Over https the cookie that carries a made secret to its page is
// __Host- prefixed and Secure, as the session's is.
func TestPortalSecretCookieOverHTTPS(t *testing.T) {
	t.Parallel()
	hs, _ := site(t, true, nil)
	b := newBrowser(t, hs.URL, hs.Client().Transport)
	b.post("/portal/signup", url.Values{"name": {"Dev"}, "email": {"dev@example.com"}, "password": {"long enough pw"}})
	made := b.post("/portal/apps/new", url.Values{"name": {"Dorm Books"}, "company": {"Baan Soft"}, "scope": {"bills:read"}})
	if made.status != http.StatusSeeOther || len(made.cookies) != 1 {
		t.Fatalf("new application: %+v", made)
	}
	c := made.cookies[0]
	if !strings.HasPrefix(c.Name, "__Host-rentapi_shown_key_") || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteStrictMode {
		t.Fatalf("the secret's cookie %+v", c)
	}
	if pg := b.get(made.location); pg.status != http.StatusOK || !secretText.MatchString(pg.body) {
		t.Fatalf("the key's page over https: %d\n%s", pg.status, pg.body)
	}
}
