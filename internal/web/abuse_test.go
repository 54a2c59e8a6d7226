package web_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// Wrong passwords for one email sent all at once are no faster than sent
// one by one: each try is counted before its password is checked, so at
// most ten are let through in 15 minutes. One let through is judged (401),
// or, when the password hashes ahead of it kept it waiting more than 5 s
// (a loaded machine under the race detector), refused as busy (503): either
// way one of the ten. Every other try is throttled (429).
func TestParallelGuessesAreThrottled(t *testing.T) {
	t.Parallel()
	hs, _ := site(t, false, nil)
	newBrowser(t, hs.URL, nil).post("/app/signup", url.Values{"name": {"Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}})
	var mu sync.Mutex
	judged, busy := 0, 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			p := newBrowser(t, hs.URL, nil).post("/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"guess " + string(rune('a'+i%26))}})
			mu.Lock()
			defer mu.Unlock()
			switch p.status {
			case http.StatusUnauthorized:
				judged++
			case http.StatusServiceUnavailable:
				busy++
			case http.StatusTooManyRequests:
			default:
				t.Errorf("a guess got %d", p.status)
			}
		})
	}
	wg.Wait()
	if judged+busy > 10 {
		t.Fatalf("%d of 40 parallel guesses were let through (%d judged, %d waited too long to be); at most 10 may be", judged+busy, judged, busy)
	}
}

// Only a POST changes anything: a HEAD of the sandbox-reset page (which
// cross-origin protection lets through as a safe method) resets nothing.
func TestHeadChangesNothing(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	p := newPortal(t, e)
	b := p.developer("dev@example.com")
	app := newApp(t, b, rental.AllScopes...)
	key := newKey(t, b, app, keyForm("k", rental.ModeTest, rental.AllScopes...))
	wantAPI(t, callAPI(t, p.base, key, "POST", "/v1/properties", "", `{"name":"Extra","electricity_rate":800,"water_rate":1800}`), http.StatusCreated, "")
	count := func() int {
		var n int
		e.DB.WritePool().QueryRow(`SELECT COUNT(*) FROM properties p JOIN accounts a ON a.landlord_id = p.landlord_id WHERE a.application_id = $1`, app).Scan(&n)
		return n
	}
	before := count()
	for _, path := range []string{"/portal/apps/" + app + "/sandbox/reset", "/portal/password"} {
		if pg := b.do("HEAD", path, nil, "https://evil.example"); pg.status >= 300 {
			t.Errorf("HEAD %s: %d %s", path, pg.status, pg.location)
		}
	}
	if got := count(); got != before || before != 3 {
		t.Fatalf("properties %d before, %d after a HEAD", before, got)
	}
}

// Odd bytes (NUL, invalid UTF-8) in a path or a form field are a clear 4xx
// page, never a 500, on either engine.
func TestOddBytesArePages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		env := newConnectEnv(t, e, rental.Scopes{rental.ScopeBillsRead})
		b := env.landlord("Somchai", "somchai@example.com")
		for _, path := range []string{"/connect/x%00", "/connect/x%FF", "/app/connections/x%00/disconnect", "/portal/apps/x%FF"} {
			if pg := b.get(path); pg.status != http.StatusNotFound {
				t.Errorf("GET %s: %d", path, pg.status)
			}
		}
		anon := newBrowser(t, env.hs.URL, nil)
		for _, f := range []url.Values{
			{"email": {"a\x00@example.com"}, "password": {"long enough pw"}},
			{"email": {"a@example.com"}, "password": {"bad \xff utf-8"}},
		} {
			if pg := anon.post("/app/signin", f); pg.status != http.StatusBadRequest {
				t.Errorf("sign-in with %q: %d", f, pg.status)
			}
		}
		if pg := anon.post("/app/signup", url.Values{"name": {"So\xffmchai"}, "email": {"b@example.com"}, "password": {"long enough pw"}}); pg.status != http.StatusBadRequest {
			t.Errorf("sign-up with invalid UTF-8: %d", pg.status)
		}
	})
}

// A consent page shown before its application was disabled cannot link
// anything once it is.
func TestNoLinkToADisabledApplication(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		env := newConnectEnv(t, e, rental.Scopes{rental.ScopeBillsRead})
		b := env.landlord("Somchai", "somchai@example.com")
		_, token := b.consent(env.connectPath(clientCallback, "state-disabled-1"))
		if err := e.DB.InTx(t.Context(), func(tx *store.Tx) error { return tx.SetApplicationDisabled(t.Context(), env.f.App.ID, true) }); err != nil {
			t.Fatal(err)
		}
		p := b.answer(env.f.App.ID, token, "approve")
		if p.status < 400 || strings.Contains(p.location, "account_id") {
			t.Fatalf("approved for a disabled application: %d %s", p.status, p.location)
		}
		accts, _ := e.DB.Read().LiveAccounts(t.Context(), env.f.App.ID)
		if len(accts) != 0 {
			t.Fatalf("linked: %+v", accts)
		}
	})
}

// Behind a trusted proxy, each client is throttled by its own address (from
// X-Forwarded-For), not by the proxy's: ten failures of one client do not
// lock out another.
func TestThrottleBehindAProxy(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	base := "http://" + hs.Listener.Addr().String()
	proxies, _ := request.ParseProxies("127.0.0.1")
	srv, err := api.NewServer(api.Config{DB: e.DB, Secret: storetest.Secret(t), PublicURL: base, TrustedProxies: proxies})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: e.DB, PublicURL: base, TrustedProxies: proxies}, srv)
	hs.Start()
	newBrowser(t, base, nil).post("/app/signup", url.Values{"name": {"Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}})
	from := func(ip string, f url.Values) page {
		r, _ := http.NewRequest("POST", base+"/app/signin", strings.NewReader(f.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Origin", base)
		r.Header.Set("X-Forwarded-For", ip)
		c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return page{status: resp.StatusCode}
	}
	for i := range 12 {
		from("198.51.100.1", url.Values{"email": {fmt.Sprintf("guess%d@example.com", i)}, "password": {"wrong password"}})
	}
	if p := from("198.51.100.1", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusTooManyRequests {
		t.Fatalf("the guessing client: %d", p.status)
	}
	if p := from("198.51.100.2", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
		t.Fatalf("another client behind the same proxy: %d", p.status)
	}
}
