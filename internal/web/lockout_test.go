package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/bucket"
	"rentapi/internal/bucket/buckettest"
	"rentapi/internal/request"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// proxiedSite serves the API and the pages over db behind a trusted proxy
// (this machine), so that each request can come from an address of the
// test's choosing; now is the pages' clock (nil: the database's).
func proxiedSite(t *testing.T, db *store.DB, buckets bucket.Store, now func() time.Time) string {
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	base := "http://" + hs.Listener.Addr().String()
	proxies, err := request.ParseProxies("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.NewServer(api.Config{DB: db, Secret: storetest.Secret(t), PublicURL: base, TrustedProxies: proxies})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: db, PublicURL: base, Buckets: buckets, TrustedProxies: proxies, Now: now}, srv)
	hs.Start()
	return base
}

// visitor is a browser at a client address of its own (told to the site
// by the trusted proxy), with its own cookies.
type visitor struct {
	t  *testing.T
	ip string
	c  *http.Client
}

func newVisitor(t *testing.T, ip string) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{t: t, ip: ip, c: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// post sends a same-origin form post to base+path.
func (v *visitor) post(base, path string, form url.Values) page {
	v.t.Helper()
	r, _ := http.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", base)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.Header.Set("X-Forwarded-For", v.ip)
	resp, err := v.c.Do(r)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{status: resp.StatusCode, location: resp.Header.Get("Location"), body: string(b), cookies: resp.Cookies(), header: resp.Header}
}

// sharedBuckets is the bucket store two processes of a test share: Redis
// when RENTAPI_TEST_REDIS is set (under a prefix of the test's own), else
// one process's memory handed to both.
func sharedBuckets(t *testing.T) bucket.Store {
	u := os.Getenv("RENTAPI_TEST_REDIS")
	if u == "" {
		return bucket.NewMemory()
	}
	r, err := bucket.NewRedis(t.Context(), u, "test:"+strings.ReplaceAll(t.Name(), "/", ":")+":"+storetest.Secret(t).Fingerprint(t.TempDir())[:8]+":")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// An attacker guessing at one address cannot keep the owner out: once that
// address is refused, its tries spend nothing of the email's budget, and
// the owner signs in, and changes the password, from another address;
// across two processes of one deployment.
func TestGuesserDoesNotLockOutTheOwner(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		shared := sharedBuckets(t)
		other, err := store.Open(t.Context(), e.DSN, store.Options{Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		one, two := proxiedSite(t, e.DB, shared, nil), proxiedSite(t, other, shared, nil)
		owner := newVisitor(t, "198.51.100.20")
		if p := owner.post(one, "/app/signup", url.Values{"name": {"Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
			t.Fatalf("sign-up: %d", p.status)
		}
		attacker := newVisitor(t, "203.0.113.66")
		judged := 0
		for i := range 60 {
			p := attacker.post([]string{one, two}[i%2], "/app/signin", url.Values{"email": {"Somchai@example.com"}, "password": {fmt.Sprintf("guess %d", i)}})
			switch p.status {
			case http.StatusUnauthorized:
				judged++
			case http.StatusTooManyRequests:
			default:
				t.Fatalf("guess %d: %d", i, p.status)
			}
		}
		if judged != 10 {
			t.Fatalf("the guessing address had %d of 60 guesses judged; want 10", judged)
		}
		if p := owner.post(two, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
			t.Fatalf("the owner signing in from another address: %d", p.status)
		}
		if p := owner.post(one, "/app/password", url.Values{"current": {"long enough pw"}, "password": {"a new password"}}); p.status != http.StatusSeeOther {
			t.Fatalf("the owner changing the password: %d", p.status)
		}
		if p := attacker.post(one, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"a new password"}}); p.status != http.StatusTooManyRequests {
			t.Fatalf("the guessing address, with the right password: %d", p.status)
		}
	})
}

// However many addresses guess at one email, at most 100 guesses are
// judged in 15 minutes: ten from each address, and none from an address
// already refused for its failures; past the hundred every address waits,
// the owner's too, until the budget refills.
func TestGuessesAtAnEmailAreBounded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		base := proxiedSite(t, e.DB, bucket.NewMemory(), e.Clock.Now)
		newVisitor(t, "198.51.100.20").post(base, "/app/signup", url.Values{"name": {"Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}})
		judged := 0
		guess := func(ip string, n int) {
			v := newVisitor(t, ip)
			for i := range n {
				p := v.post(base, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {fmt.Sprintf("guess %d", i)}})
				switch p.status {
				case http.StatusUnauthorized:
					judged++
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("%s guess %d: %d", ip, i, p.status)
				}
			}
		}
		guess("203.0.113.1", 50)
		for i := 2; i <= 20; i++ {
			guess(fmt.Sprintf("203.0.113.%d", i), 11)
		}
		if judged != 100 {
			t.Fatalf("%d guesses judged from 20 addresses; want 100", judged)
		}
		if p := newVisitor(t, "198.51.100.21").post(base, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusTooManyRequests {
			t.Fatalf("past the email's budget: %d", p.status)
		}
		e.Clock.Advance(10 * time.Second) // a try's worth of refill
		if p := newVisitor(t, "198.51.100.21").post(base, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
			t.Fatalf("after the budget refilled: %d", p.status)
		}
	})
}

// While Redis is down no sign-in, sign-up or password change is judged (a
// count of one process's own would let every process allow a full budget):
// each is answered 503 with Retry-After, not 500; when Redis is back they
// are judged again, by themselves.
func TestSignInWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		redis := buckettest.StartRedis(t)
		buckets, err := bucket.NewRedis(t.Context(), redis.URL, "test:")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { buckets.Close() })
		base := proxiedSite(t, e.DB, buckets, nil)
		owner := newVisitor(t, "198.51.100.20")
		if p := owner.post(base, "/app/signup", url.Values{"name": {"Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
			t.Fatalf("sign-up: %d", p.status)
		}
		redis.Stop()
		for what, p := range map[string]page{
			"sign-in":         newVisitor(t, "198.51.100.21").post(base, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}}),
			"sign-up":         newVisitor(t, "198.51.100.22").post(base, "/portal/signup", url.Values{"name": {"Dev"}, "email": {"dev@example.com"}, "password": {"long enough pw"}}),
			"password change": owner.post(base, "/app/password", url.Values{"current": {"long enough pw"}, "password": {"a new password"}}),
		} {
			if p.status != http.StatusServiceUnavailable || p.header.Get("Retry-After") == "" || !strings.Contains(p.body, "try again") {
				t.Errorf("%s with Redis down: %d %v\n%s", what, p.status, p.header, p.body)
			}
		}
		redis.Start()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			p := newVisitor(t, "198.51.100.21").post(base, "/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}})
			if p.status == http.StatusSeeOther {
				break
			}
			if p.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("sign-in with Redis back: %d", p.status)
			}
		}
	})
}
