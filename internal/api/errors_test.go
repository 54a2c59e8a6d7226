package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Every error code of the platform's surface is produced by a real request
// here, answered in the envelope with its documented status, and listed in
// the OpenAPI document.
func TestEveryErrorCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.AllScopes)
		live := h.liveKey(f, "")
		hdr := func(s ...string) []string { return s }
		prop := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("P")}).data()["id"].(string)
		ctx := t.Context()

		cases := []struct {
			code   string
			status int
			do     func(t *testing.T) *result
		}{
			{"api_key_in_query", 400, func(t *testing.T) *result {
				return h.do(req{method: "GET", path: "/v1/account?api_key=" + key})
			}},
			{"invalid_idempotency_key", 400, func(t *testing.T) *result {
				return h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("x"), headers: hdr("Idempotency-Key: " + strings.Repeat("x", 256))})
			}},
			{"invalid_cursor", 400, func(t *testing.T) *result {
				return h.do(req{key: key, method: "GET", path: "/v1/properties?cursor=abc"})
			}},
			{"unknown_parameter", 400, func(t *testing.T) *result {
				return h.do(req{key: key, method: "GET", path: "/v1/properties?page=2"})
			}},
			{"invalid_parameter", 400, func(t *testing.T) *result {
				return h.do(req{key: key, method: "GET", path: "/v1/properties?limit=101"})
			}},
			{"parameter_missing", 400, func(t *testing.T) *result {
				return h.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{}})
			}},
			{"invalid_json", 400, func(t *testing.T) *result {
				return h.do(req{key: key, method: "POST", path: "/v1/properties", body: "{not json"})
			}},
			{"invalid_api_key", 401, func(t *testing.T) *result {
				return h.do(req{key: "svc_test_" + strings.Repeat("A", 40), method: "GET", path: "/v1/account"})
			}},
			{"payment_required", 402, func(t *testing.T) *result {
				g := h.fixture(rental.PlanPro)
				a := g.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				k := h.liveKey(g, a.ID)
				e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, g.Developer.ID, false, true) })
				return h.do(req{key: k, method: "GET", path: "/v1/account"})
			}},
			{"insufficient_scope", 403, func(t *testing.T) *result {
				return h.do(req{key: h.testKey(f, rental.ScopePropertiesRead), method: "DELETE", path: "/v1/properties/" + prop})
			}},
			{"account_required", 403, func(t *testing.T) *result {
				return h.do(req{key: live, method: "GET", path: "/v1/properties"})
			}},
			{"account_not_connected", 403, func(t *testing.T) *result {
				return h.do(req{key: live, method: "GET", path: "/v1/properties", headers: hdr("SERVICE-Account: acct_000000000000000000000000")})
			}},
			{"account_access_revoked", 403, func(t *testing.T) *result {
				a := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, a.ID) })
				return h.do(req{key: live, method: "GET", path: "/v1/properties", headers: hdr("SERVICE-Account: " + a.ID)})
			}},
			{"account_mismatch", 403, func(t *testing.T) *result {
				return h.do(req{key: h.liveKey(f, acct.ID), method: "GET", path: "/v1/account", headers: hdr("SERVICE-Account: " + f.App.SandboxAccountID)})
			}},
			{"developer_suspended", 403, func(t *testing.T) *result {
				g := h.fixture(rental.PlanPro)
				k := h.testKey(g)
				e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, g.Developer.ID, true, false) })
				return h.do(req{key: k, method: "GET", path: "/v1/account"})
			}},
			{"application_disabled", 403, func(t *testing.T) *result {
				g := h.fixture(rental.PlanPro)
				k := h.testKey(g)
				e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, g.App.ID, true) })
				return h.do(req{key: k, method: "GET", path: "/v1/account"})
			}},
			{"plan_limit_reached", 403, func(t *testing.T) *result {
				k := h.liveKey(f, acct.ID)
				h.do(req{key: k, method: "POST", path: "/v1/properties", body: property("first")})
				return h.do(req{key: k, method: "POST", path: "/v1/properties", body: property("second")})
			}},
			{"resource_not_found", 404, func(t *testing.T) *result {
				return h.do(req{key: key, method: "GET", path: "/v1/properties/prop_000000000000000000000000"})
			}},
			{"route_not_found", 404, func(t *testing.T) *result {
				return h.do(req{key: key, method: "GET", path: "/v1/propertiez"})
			}},
			{"method_not_allowed", 405, func(t *testing.T) *result {
				res := h.do(req{key: key, method: "PUT", path: "/v1/properties/" + prop, body: property("x")})
				if !strings.Contains(res.header.Get("Allow"), "PATCH") {
					t.Errorf("Allow: %q", res.header.Get("Allow"))
				}
				return res
			}},
			{"property_not_empty", 409, func(t *testing.T) *result {
				want(t, h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop + "/rooms", body: map[string]any{"number": "101", "monthly_rent": 350000}}), http.StatusCreated)
				return h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + prop})
			}},
			{"idempotency_in_progress", 409, func(t *testing.T) *result {
				body := `{"name":"busy","electricity_rate":1,"water_rate":1}`
				return h.whileRunning(f.Sandbox(t, e.DB), req{key: key, method: "POST", path: "/v1/properties", body: body, headers: hdr("Idempotency-Key: busy")})
			}},
			{"request_too_large", 413, func(t *testing.T) *result {
				return h.do(req{key: key, method: "POST", path: "/v1/properties", body: `{"name":"` + strings.Repeat("x", 1<<20) + `"}`})
			}},
			{"request_timeout", 408, func(t *testing.T) *result {
				slow := newHarness(t, e, func(c *api.Config) { c.BodyTimeout = 200 * time.Millisecond })
				k := slow.testKey(slow.fixture(rental.PlanPro))
				pr, pw := io.Pipe()
				defer pw.Close()
				r, _ := http.NewRequest("POST", slow.url+"/v1/properties", pr)
				r.Header.Set("Authorization", "Bearer "+k)
				r.Header.Set("Content-Type", "application/json")
				go pw.Write([]byte("{")) // and then nothing
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				res := &result{status: resp.StatusCode, header: resp.Header, body: b}
				if err := checkContract(r, res); err != nil {
					t.Error(err)
				}
				return res
			}},
			{"request_header_too_large", 431, func(t *testing.T) *result {
				return h.do(req{key: key, method: "GET", path: "/v1/properties", headers: hdr("X-Padding: " + strings.Repeat("x", 80<<10))})
			}},
			{"unsupported_media_type", 415, func(t *testing.T) *result {
				return h.do(req{key: key, method: "POST", path: "/v1/properties", body: "name=x", headers: hdr("Content-Type: application/x-www-form-urlencoded")})
			}},
			{"idempotency_key_reused", 422, func(t *testing.T) *result {
				h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("a"), headers: hdr("Idempotency-Key: reuse")})
				return h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("b"), headers: hdr("Idempotency-Key: reuse")})
			}},
			{"rate_limited", 429, func(t *testing.T) *result {
				k := h.testKey(h.fixture(rental.PlanFree))
				for range rental.PlanFree.Limits().Burst {
					want(t, h.do(req{key: k, method: "GET", path: "/v1/account"}), 200)
				}
				return h.do(req{key: k, method: "GET", path: "/v1/account"})
			}},
			{"monthly_quota_exceeded", 429, func(t *testing.T) *result {
				g := h.fixture(rental.PlanFree)
				k := h.liveKey(g, g.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
				if _, err := e.DB.AddUsage(ctx, store.UsagePeriod{Developer: g.Developer.ID, Mode: rental.ModeLive, From: "2026-11-01", To: "2026-11-30"},
					map[store.UsageCell]int64{{Application: g.App.ID, Day: "2026-11-22"}: 1000}); err != nil {
					t.Fatal(err)
				}
				return h.do(req{key: k, method: "GET", path: "/v1/account"})
			}},
			{"sandbox_limit", 429, func(t *testing.T) *result {
				g := h.fixture(rental.PlanPro)
				if _, err := e.DB.AddUsage(ctx, store.UsagePeriod{Developer: g.Developer.ID, Mode: rental.ModeTest, From: "2026-11-22", To: "2026-11-22"},
					map[store.UsageCell]int64{{Application: g.App.ID, Day: "2026-11-22"}: 20_000}); err != nil {
					t.Fatal(err)
				}
				return h.do(req{key: h.testKey(g), method: "GET", path: "/v1/account"})
			}},
			{"too_many_failed_attempts", 429, func(t *testing.T) *result {
				bad := "svc_live_" + strings.Repeat("B", 40)
				h.e.Clock.Advance(time.Minute) // forget the failures of the cases before
				for range 30 {
					want(t, h.do(req{key: bad, method: "GET", path: "/v1/account"}), 401, "invalid_api_key")
				}
				res := h.do(req{key: bad, method: "GET", path: "/v1/account"})
				h.e.Clock.Advance(time.Minute) // let the other cases of this address in again
				return res
			}},
			{"internal_error", 500, func(t *testing.T) *result {
				broken := newHarness(t, storetest.SQLite(t))
				k := broken.testKey(broken.fixture(rental.PlanPro))
				broken.e.DB.Close()
				res := broken.do(req{key: k, method: "GET", path: "/v1/account"})
				if strings.Contains(string(res.body), "sql") || strings.Contains(string(res.body), "store") {
					t.Errorf("500 leaks internals: %s", res.body)
				}
				return res
			}},
			{"service_unavailable", 503, func(t *testing.T) *result {
				busy := newHarness(t, e, func(c *api.Config) { c.MaxInFlight, c.OverloadWait = 1, 50*time.Millisecond })
				k := busy.testKey(f)
				// A write that waits for the landlord's lock, held here,
				// holds the only place.
				tx, err := e.DB.Begin(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				if err := tx.Claim(t.Context(), f.Sandbox(t, e.DB)); err != nil {
					t.Fatal(err)
				}
				go busy.send(req{key: k, method: "POST", path: "/v1/properties", body: property("Waits")})
				// Until that request has taken the place, others are served.
				res := busy.do(req{key: k, method: "GET", path: "/v1/account"})
				for deadline := time.Now().Add(10 * time.Second); res.status == http.StatusOK && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
					res = busy.do(req{key: k, method: "GET", path: "/v1/account"})
				}
				if res.header.Get("Retry-After") == "" {
					t.Error("503 without Retry-After")
				}
				return res
			}},
		}
		for _, c := range cases {
			t.Run(c.code, func(t *testing.T) {
				res := c.do(t)
				want(t, res, c.status, c.code)
				env := res.json()["error"].(map[string]any)
				for _, field := range []string{"message", "request_id", "doc_url"} {
					if s, _ := env[field].(string); s == "" {
						t.Errorf("error.%s is empty", field)
					}
				}
				if env["request_id"] != res.header.Get("X-Request-ID") {
					t.Errorf("request_id %v differs from X-Request-ID %s", env["request_id"], res.header.Get("X-Request-ID"))
				}
				if (c.status == 429 || c.status == 503) && res.header.Get("Retry-After") == "" {
					t.Errorf("%d without Retry-After", c.status)
				}
				if !bytes.Contains(doc, []byte(c.code)) {
					t.Errorf("%s is not in openapi.yaml", c.code)
				}
			})
		}
	})
}

// The body is read with a limit even when no length is announced.
func TestChunkedBodyLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanPro))
	body := io.MultiReader(strings.NewReader(`{"name":"`), strings.NewReader(strings.Repeat("x", 2<<20)), strings.NewReader(`"}`))
	r, _ := http.NewRequest("POST", h.url+"/v1/properties", io.NopCloser(body))
	r.ContentLength = -1
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 413 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// Live requests count against the monthly quota; the headers say where the
// developer stands, and test mode is never counted against it.
func TestMonthlyQuotaHeaders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanFree)
		live := h.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
		test := h.testKey(f)
		var last *result
		for range 3 {
			last = h.do(req{key: live, method: "GET", path: "/v1/properties"})
			h.do(req{key: test, method: "GET", path: "/v1/properties"})
		}
		h.do(req{key: live, method: "GET", path: "/v1/properties?limit=0"}) // a 400 is billable too
		res := h.do(req{key: live, method: "GET", path: "/v1/account"})
		if last.header.Get("X-Quota-Limit") != "1000" || last.header.Get("X-Quota-Remaining") != "997" || res.header.Get("X-Quota-Remaining") != "995" {
			t.Fatalf("quota headers %v then %v", last.header, res.header)
		}
		reset := time.Date(2026, 12, 1, 0, 0, 0, 0, time.FixedZone("ICT", 7*3600)).Unix()
		if res.header.Get("X-Quota-Reset") != itoa(reset) {
			t.Fatalf("X-Quota-Reset %s, want %d", res.header.Get("X-Quota-Reset"), reset)
		}
		if h.do(req{key: test, method: "GET", path: "/v1/account"}).header.Get("X-Quota-Limit") != "" {
			t.Fatal("test mode has quota headers")
		}
	})
}

// A path with empty or dot segments is no route: the envelope's 404, never
// the mux's redirect to the cleaned path (which would send a write to
// another route). The payment pages answer such paths with their own 404.
func TestNoRedirectForUncleanPaths(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanPro))
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1//properties"},
		{"POST", "/v1//properties"},
		{"POST", "/v1/bills//issue"},
		{"GET", "/v1/./properties"},
		{"GET", "/v1/properties/../account"},
		{"DELETE", "/v1/properties/"},
		{"GET", "//v1/account"},
	} {
		r, _ := http.NewRequest(c.method, h.url+c.path, strings.NewReader(`{"name":"x"}`))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		resp, err := noRedirect.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res := &result{status: resp.StatusCode, header: resp.Header, body: b}
		if res.status != http.StatusNotFound || res.code() != "route_not_found" || resp.Header.Get("Location") != "" {
			t.Errorf("%s %s: %d %s (Location %q)", c.method, c.path, res.status, b, resp.Header.Get("Location"))
		}
	}
	for _, p := range []string{"/pay//x", "/pay/./abc", "/pay/abc/../def"} {
		resp, err := noRedirect.Get(h.url + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || resp.Header.Get("Location") != "" {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}

// IDs and headers that cannot be ours are 4xx on both engines, never 500.
func TestHostileIdentifiers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		for _, path := range []string{"/v1/properties/%ff", "/v1/properties/%00", "/v1/properties/prop_%c3%28", "/v1/rooms/" + strings.Repeat("a", 65)} {
			want(t, h.do(req{key: key, method: "GET", path: path}), http.StatusNotFound, "resource_not_found")
			want(t, h.do(req{key: key, method: "PATCH", path: path, body: map[string]any{"name": "x"}}), http.StatusNotFound, "resource_not_found")
		}
		want(t, h.do(req{key: key, method: "GET", path: "/v1/rooms?property_id=%ff"}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "GET", path: "/v1/events?type=bill.%00"}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills", body: `{"room_id":"room_\u0000","month":"2026-11"}`}), http.StatusNotFound, "resource_not_found")
		f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		unbound := h.liveKey(f, "")
		want(t, h.do(req{key: unbound, method: "GET", path: "/v1/account", headers: []string{"SERVICE-Account: acct_\xff\xfe"}}), http.StatusForbidden, "account_not_connected")
	})
}

// A client that hangs up while its request waits is a client abort in the
// log (status 499, code client_closed_request), not a 500 of ours, and its
// Idempotency-Key is free for the retry.
func TestClientAbortIsNoServerError(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var buf logBuffer
		h := newHarness(t, e, func(c *api.Config) { c.Log = buf.logger() })
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		tx, err := e.DB.Begin(t.Context()) // the write will wait for this lock
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		r, _ := http.NewRequestWithContext(ctx, "POST", h.url+"/v1/properties", strings.NewReader(`{"name":"P","electricity_rate":800,"water_rate":1800}`))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", "abandoned-write")
		if err := tx.Claim(t.Context(), f.Sandbox(t, e.DB)); err != nil {
			t.Fatal(err)
		}
		if _, err := http.DefaultClient.Do(r); err == nil {
			t.Fatal("the request was answered while the lock was held")
		}
		var line map[string]any
		for deadline := time.Now().Add(10 * time.Second); line == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if strings.TrimSpace(buf.String()) == "" {
				continue
			}
			for _, m := range buf.records(t) {
				if m["msg"] == "request" && m["route"] == "POST /v1/properties" {
					line = m
				}
			}
		}
		tx.Rollback()
		if line == nil || line["status"] != 499.0 || line["code"] != "client_closed_request" {
			t.Fatalf("request line %v\n%s", line, buf.String())
		}
		if strings.Contains(buf.String(), "internal error") {
			t.Fatalf("logged as an internal error:\n%s", buf.String())
		}
		// The abandoned write's transaction may still be ending on the
		// database (PostgreSQL hears of the cancellation on its own time),
		// holding the key: a client retries a 409 idempotency_in_progress
		// after a moment, as the error says.
		retry := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("P"), headers: []string{"Idempotency-Key: abandoned-write"}})
		for deadline := time.Now().Add(5 * time.Second); retry.code() == "idempotency_in_progress" && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			retry = h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("P"), headers: []string{"Idempotency-Key: abandoned-write"}})
		}
		if retry.status != http.StatusCreated || retry.header.Get("Idempotent-Replayed") != "false" {
			t.Fatalf("the retry: %d %s", retry.status, retry.body)
		}
	})
}
