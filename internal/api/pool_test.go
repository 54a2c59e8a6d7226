package api_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// burst sends n requests at once, reads and writes (some idempotent),
// and returns the responses.
func burst(t *testing.T, h *harness, key string, n int) []*result {
	t.Helper()
	results := make([]*result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		rq := req{key: key, method: "GET", path: "/v1/account"}
		switch i % 5 {
		case 1:
			rq.path = "/v1/properties?limit=5"
		case 2: // a sandbox holds 20 properties, 2 of them samples
			rq = req{key: key, method: "POST", path: "/v1/properties", body: property(fmt.Sprintf("Pool %d", i))}
			if i%2 == 1 {
				rq.headers = []string{"Idempotency-Key: pool-" + rental.NewID("t")}
			}
		case 3:
			rq.path = "/v1/events?limit=5"
		}
		wg.Go(func() { results[i], errs[i] = h.send(rq) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	return results
}

// only2xxOr503 fails the test on any answer but a success or a 503
// service_unavailable with Retry-After, and returns how many were 503.
func only2xxOr503(t *testing.T, results []*result) (unavailable int) {
	t.Helper()
	for _, res := range results {
		switch {
		case res.status >= 200 && res.status < 300:
		case res.status == http.StatusServiceUnavailable:
			if res.code() != "service_unavailable" || res.header.Get("Retry-After") == "" {
				t.Errorf("503 without its code or Retry-After: %v %s", res.header, res.body)
			}
			unavailable++
		default:
			t.Errorf("status %d %s", res.status, res.body)
		}
	}
	return unavailable
}

// A process whose pool is exhausted answers 503 with Retry-After after the
// bounded wait, never 500, and serves again once connections come back.
func TestPoolExhaustionAnswers503(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	small, err := store.Open(t.Context(), e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, MaxConns: 2, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	h := newHarness(t, storetest.Engine{Name: e.Name, DB: small, Clock: e.Clock, DSN: e.DSN}, func(c *api.Config) { c.NoRateLimits = true })
	key := h.testKey(h.fixture(rental.PlanPro))

	// Both connections are taken: every request waits its bounded time and
	// is told to come back.
	var held []*sql.Conn
	for range 2 {
		c, err := small.WritePool().Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The wait is bounded on the server: a client that would wait for ever
	// hears back in time.
	r, _ := http.NewRequest("GET", h.url+"/v1/account", nil)
	r.Header.Set("Authorization", "Bearer "+key)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(r)
	if err != nil {
		t.Fatalf("with the pool held: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("with the pool held: %d %v", resp.StatusCode, resp.Header)
	}
	results := burst(t, h, key, 10)
	if n := only2xxOr503(t, results); n != len(results) {
		t.Fatalf("%d of %d requests were 503 with the pool held", n, len(results))
	}
	for _, c := range held {
		c.Close()
	}

	// 50 requests on 2 connections: each is served or told to retry.
	results = burst(t, h, key, 50)
	if n := only2xxOr503(t, results); n == len(results) {
		t.Fatal("no request was served on a free pool")
	}
}

// A database that refuses connections (here: too many for the role,
// SQLSTATE 53300) is 503 with Retry-After, never 500.
func TestDatabaseRefusalAnswers503(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	role := "t_limited_" + strings.TrimPrefix(rental.NewID("x"), "x_")
	schema := schemaOf(t, e.DSN)
	admin := e.DB.WritePool()
	exec := func(stmt string) {
		t.Helper()
		if _, err := admin.ExecContext(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	exec(`CREATE ROLE ` + role + ` LOGIN`)
	t.Cleanup(func() { // after the role's pool is closed below
		admin.Exec(`DROP OWNED BY ` + role)
		if _, err := admin.Exec(`DROP ROLE ` + role); err != nil {
			t.Logf("drop role %s: %v", role, err)
		}
	})
	exec(`GRANT USAGE ON SCHEMA ` + schema + ` TO ` + role)
	exec(`GRANT ALL ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role)
	exec(`GRANT ALL ON ALL SEQUENCES IN SCHEMA ` + schema + ` TO ` + role)
	u, _ := url.Parse(e.DSN)
	u.User = url.User(role)
	limited, err := store.Open(t.Context(), u.String(), store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, Wait: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { limited.Close() })
	limited.WritePool().SetMaxIdleConns(0) // every request opens its connection
	h := newHarness(t, storetest.Engine{Name: e.Name, DB: limited, Clock: e.Clock, DSN: u.String()}, func(c *api.Config) { c.NoRateLimits = true })
	key := h.testKey(h.fixture(rental.PlanPro))
	want(t, h.do(req{key: key, method: "GET", path: "/v1/account"}), http.StatusOK)

	exec(`ALTER ROLE ` + role + ` CONNECTION LIMIT 0`)
	for _, rq := range []req{
		{key: key, method: "GET", path: "/v1/account"},
		{key: key, method: "GET", path: "/v1/properties"},
		{key: key, method: "POST", path: "/v1/properties", body: property("Refused"), headers: []string{"Idempotency-Key: refused-1"}},
	} {
		res := h.do(rq)
		want(t, res, http.StatusServiceUnavailable, "service_unavailable")
		if res.header.Get("Retry-After") == "" {
			t.Fatalf("503 without Retry-After: %v", res.header)
		}
	}
	exec(`ALTER ROLE ` + role + ` CONNECTION LIMIT -1`)
	want(t, h.do(req{key: key, method: "GET", path: "/v1/account"}), http.StatusOK)
}

// schemaOf is the schema a storetest DSN puts its tables in: its
// search_path, or a database's own public schema.
func schemaOf(t *testing.T, dsn string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if s := u.Query().Get("search_path"); s != "" {
		return s
	}
	return "public" // a database of its own
}

// TestBodiesNotShared: answers are rendered into buffers the server reuses
// once sent; many requests at once for different objects each get their
// own object's bytes, whole, and a replayed write the bytes first sent.
func TestBodiesNotShared(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		key := h.liveKey(f, acct.ID)
		type made struct{ id, name, idem, body string }
		var props []made
		for i := range 3 {
			m := made{name: fmt.Sprintf("Baan %d %s", i, strings.Repeat("x", 60*i)), idem: fmt.Sprintf("bodies-%d", i)}
			res := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property(m.name), headers: []string{"Idempotency-Key: " + m.idem}})
			if res.status != http.StatusCreated {
				t.Fatalf("create: %d %s", res.status, res.body)
			}
			m.id, m.body = res.data()["id"].(string), string(res.body)
			props = append(props, m)
		}
		var wg sync.WaitGroup
		for i := range 120 {
			m := props[i%len(props)]
			wg.Go(func() {
				if i%4 == 0 {
					// A retry of the create: its first answer, byte for byte
					// (or, beside another retry of the same key, in progress).
					res, err := h.send(req{key: key, method: "POST", path: "/v1/properties", body: property(m.name), headers: []string{"Idempotency-Key: " + m.idem}})
					if err != nil || string(res.body) != m.body && res.code() != "idempotency_in_progress" {
						t.Errorf("replay of %s: %v", m.idem, err)
					}
					return
				}
				res, err := h.send(req{key: key, method: "GET", path: "/v1/properties/" + m.id})
				if err != nil || res.status != http.StatusOK || res.data()["id"] != m.id || res.data()["name"] != m.name {
					t.Errorf("GET %s: %v", m.id, err)
				}
			})
		}
		wg.Wait()
	})
}
