package web_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/bucket"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// browser is a client with its own cookies that does not follow redirects,
// so each answer can be looked at; it sends the Origin a browser's form
// post carries.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newBrowser(t *testing.T, base string, tr http.RoundTripper) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: base, c: &http.Client{Jar: jar, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// page is an answer: status, where it redirects, its body.
type page struct {
	status   int
	location string
	body     string
	cookies  []*http.Cookie
	header   http.Header
}

func (b *browser) do(method, path string, form url.Values, origin string) page {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r, _ := http.NewRequest(method, b.base+path, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Site", map[bool]string{true: "same-origin", false: "cross-site"}[origin == b.base])
	}
	resp, err := b.c.Do(r)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(rb), cookies: resp.Cookies(), header: resp.Header}
}

func (b *browser) get(path string) page { return b.do("GET", path, nil, "") }

func (b *browser) post(path string, form url.Values) page { return b.do("POST", path, form, b.base) }

// site serves the API and the pages over a fresh database.
func site(t *testing.T, tls bool, buckets bucket.Store) (*httptest.Server, storetest.Engine) {
	e := storetest.SQLite(t)
	return siteOver(t, e.DB, tls, buckets), e
}

// siteOver serves the API and the pages over db (a test engine's database,
// or another process's handle on it).
func siteOver(t *testing.T, db *store.DB, tls bool, buckets bucket.Store) *httptest.Server {
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	base := scheme + hs.Listener.Addr().String()
	srv, err := api.NewServer(api.Config{DB: db, Secret: storetest.Secret(t), PublicURL: base})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: db, PublicURL: base, Buckets: buckets, Secret: storetest.Secret(t)}, srv)
	if tls {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	return hs
}

// A developer signs up and is signed in; the session cookie is HttpOnly,
// SameSite=Lax, and over https __Host- prefixed and Secure; a new session
// (a new token) at every sign-in; sign-out and a password change end
// sessions; no password or token is stored in clear.
func TestSessions(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		hs, e := site(t, tls, nil)
		b := newBrowser(t, hs.URL, hs.Client().Transport)
		name := "rentapi_portal"
		if tls {
			name = "__Host-rentapi_portal"
		}
		signup := b.post("/portal/signup", url.Values{"name": {"Dev"}, "email": {"Dev@Example.com"}, "password": {"long enough pw"}})
		if signup.status != http.StatusSeeOther || signup.location != "/portal" || len(signup.cookies) != 1 {
			t.Fatalf("sign-up: %+v", signup)
		}
		c := signup.cookies[0]
		if c.Name != name || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure != tls || c.Path != "/" || c.Domain != "" {
			t.Fatalf("cookie %+v", c)
		}
		first := c.Value
		in := b.post("/portal/signin", url.Values{"email": {"dev@example.com"}, "password": {"long enough pw"}})
		if in.status != http.StatusSeeOther || len(in.cookies) != 1 || in.cookies[0].Value == first {
			t.Fatalf("sign-in: %+v", in)
		}
		// The old token is dead: a browser holding it is signed out.
		old := newBrowser(t, hs.URL, hs.Client().Transport)
		u, _ := url.Parse(hs.URL)
		old.c.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: first, Path: "/"}})
		if p := old.get("/portal/password"); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/portal/signin") {
			t.Fatalf("the token before sign-in still works: %+v", p)
		}
		if p := b.get("/portal/password"); p.status != http.StatusOK {
			t.Fatalf("signed in: %d", p.status)
		}
		for table, row := range storetest.EveryRow(t, e.DB) {
			for _, secret := range []string{"long enough pw", first, in.cookies[0].Value} {
				if strings.Contains(row, secret) {
					t.Fatalf("%s holds %q in clear", table, secret)
				}
			}
		}
		// A password change ends every session, this one included.
		other := newBrowser(t, hs.URL, hs.Client().Transport)
		other.post("/portal/signin", url.Values{"email": {"dev@example.com"}, "password": {"long enough pw"}})
		if p := b.post("/portal/password", url.Values{"current": {"wrong password"}, "password": {"a new password"}}); p.status != http.StatusUnauthorized {
			t.Fatalf("wrong current password: %d", p.status)
		}
		if p := b.post("/portal/password", url.Values{"current": {"long enough pw"}, "password": {"a new password"}}); p.status != http.StatusSeeOther {
			t.Fatalf("password change: %+v", p)
		}
		for _, br := range []*browser{b, other} {
			if p := br.get("/portal/password"); p.status != http.StatusSeeOther {
				t.Fatalf("a session outlived the password change: %d", p.status)
			}
		}
		b.post("/portal/signin", url.Values{"email": {"dev@example.com"}, "password": {"a new password"}})
		if p := b.get("/portal/password"); p.status != http.StatusOK {
			t.Fatalf("the new password: %d", p.status)
		}
		b.post("/portal/signout", url.Values{})
		if p := b.get("/portal/password"); p.status != http.StatusSeeOther {
			t.Fatalf("signed out: %d", p.status)
		}
	}
}

// An unknown email and a wrong password get the same answer; a landlord's
// login is not a developer's; the 11th failed sign-in of an email in 15
// minutes (per email and per address) is throttled, shared by every
// process through the bucket store
// (Redis when RENTAPI_TEST_REDIS is set); a cross-site form post is refused.
func TestSignIn(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var shared bucket.Store = bucket.NewMemory()
		if u := os.Getenv("RENTAPI_TEST_REDIS"); u != "" {
			r, err := bucket.NewRedis(t.Context(), u, "test:"+strings.ReplaceAll(t.Name(), "/", ":")+":"+storetest.Secret(t).Fingerprint(t.TempDir())[:8]+":")
			if err != nil {
				t.Fatal(err)
			}
			shared = r
		}
		// Two processes of one deployment: one database, one throttle.
		other, err := store.Open(t.Context(), e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		one, two := siteOver(t, e.DB, false, shared), siteOver(t, other, false, shared)
		signInAcross(t, one, two)
	})
}

// signInAcross checks the sign-in answers with two processes of one
// deployment.
func signInAcross(t *testing.T, one, two *httptest.Server) {
	b := newBrowser(t, one.URL, nil)
	b.post("/app/signup", url.Values{"name": {"Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}})
	anon := newBrowser(t, one.URL, nil)
	unknown := anon.post("/app/signin", url.Values{"email": {"nobody@example.com"}, "password": {"long enough pw"}})
	wrong := anon.post("/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"not the password"}})
	if unknown.status != http.StatusUnauthorized || wrong.status != unknown.status ||
		strings.ReplaceAll(unknown.body, "nobody@", "somchai@") != wrong.body {
		t.Fatalf("unknown email %d, wrong password %d:\n%s\n%s", unknown.status, wrong.status, unknown.body, wrong.body)
	}
	if p := anon.post("/portal/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusUnauthorized {
		t.Fatalf("a landlord signed in to the portal: %d", p.status)
	}
	// Three failures from this address so far; six more, spread over the
	// two processes, make nine; the tenth is still judged, the next is not.
	for i := range 6 {
		srv := []*httptest.Server{one, two}[i%2]
		newBrowser(t, srv.URL, nil).post("/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"guess " + string(rune('a'+i))}})
	}
	if p := newBrowser(t, two.URL, nil).post("/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"guess x"}}); p.status != http.StatusUnauthorized {
		t.Fatalf("10th failure: %d", p.status)
	}
	p := newBrowser(t, one.URL, nil).post("/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}})
	if p.status != http.StatusTooManyRequests || !strings.Contains(p.body, "try again in") {
		t.Fatalf("11th try: %d %s", p.status, p.body)
	}
	cross := b.do("POST", "/app/signout", url.Values{}, "https://evil.example")
	if cross.status != http.StatusForbidden {
		t.Fatalf("cross-site post: %d", cross.status)
	}
}
