package api_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/bucket"
	"rentapi/internal/bucket/buckettest"
	"rentapi/internal/metric"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// redisEnv names the Redis URL for tests of the shared limits.
const redisEnv = "RENTAPI_TEST_REDIS"

// Two processes over one database and one Redis enforce one developer's
// limit together: over a short burst they admit what one process would,
// not twice as much.
func TestRateLimitSharedAcrossProcesses(t *testing.T) {
	t.Parallel()
	url := os.Getenv(redisEnv)
	if url == "" {
		t.Skip(redisEnv + " is not set")
	}
	e := storetest.SQLite(t)
	prefix := rental.NewID("t") + ":"
	shared := func(c *api.Config) { c.RedisURL, c.RedisPrefix = url, prefix }
	a, b := newHarness(t, e, shared), newHarness(t, e, shared)
	key := a.testKey(a.fixture(rental.PlanFree)) // 10/s, burst 20
	plan := rental.PlanFree.Limits()

	start := time.Now()
	allowed := 0
	for i := range 3 * plan.Burst {
		h := a
		if i%2 == 1 {
			h = b
		}
		res := h.do(req{key: key, method: "GET", path: "/v1/account"})
		switch res.status {
		case http.StatusOK:
			allowed++
		case http.StatusTooManyRequests:
			if res.code() != "rate_limited" || res.header.Get("Retry-After") == "" {
				t.Fatalf("429: %v %s", res.header, res.body)
			}
		default:
			t.Fatalf("status %d %s", res.status, res.body)
		}
	}
	// The bucket refills at the plan's rate while the loop runs.
	ceiling := plan.Burst + int(time.Since(start).Seconds()*float64(plan.RatePerSecond)) + 1
	if allowed < plan.Burst || allowed > ceiling {
		t.Fatalf("two processes admitted %d requests; one limit admits %d to %d", allowed, plan.Burst, ceiling)
	}

	// Failed keys from one address count across processes too.
	bad := "svc_test_" + strings.Repeat("Z", 40)
	for i := range 30 {
		h := a
		if i%2 == 1 {
			h = b
		}
		if res := h.do(req{key: bad, method: "GET", path: "/v1/account"}); res.status != http.StatusUnauthorized && res.code() != "too_many_failed_attempts" {
			t.Fatalf("bad key: %d %s", res.status, res.body)
		}
	}
	want(t, b.do(req{key: bad, method: "GET", path: "/v1/account"}), http.StatusTooManyRequests, "too_many_failed_attempts")
	want(t, a.do(req{key: bad, method: "GET", path: "/v1/account"}), http.StatusTooManyRequests, "too_many_failed_attempts")
}

// The headers tell a client where it stands.
func TestRateLimitHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanDeveloper))
	first := h.do(req{key: key, method: "GET", path: "/v1/account"})
	second := h.do(req{key: key, method: "GET", path: "/v1/account"})
	if first.header.Get("X-RateLimit-Limit") != "60" || first.header.Get("X-RateLimit-Remaining") != "59" || second.header.Get("X-RateLimit-Remaining") != "58" {
		t.Fatalf("headers %v, %v", first.header, second.header)
	}
	if first.header.Get("X-RateLimit-Reset") == "" {
		t.Fatal("no X-RateLimit-Reset")
	}
}

// While Redis is down the API keeps its limits in this process's own
// buckets, not none: the per-second limit and failed-key protection still
// refuse; the fallback is logged once and counted in the metrics; when
// Redis is back the limits are shared by every process again, by
// themselves.
func TestRateLimitsWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	redis := buckettest.StartRedis(t)
	e := storetest.SQLite(t)
	m := metric.New()
	ms := httptest.NewServer(m.Handler(nil))
	t.Cleanup(ms.Close)
	logs := &logBuffer{}
	prefix := rental.NewID("t") + ":"
	shared := func(c *api.Config) {
		r, err := bucket.NewRedis(t.Context(), redis.URL, prefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		c.Buckets = r
	}
	a := newHarness(t, e, shared, func(c *api.Config) { c.Metrics, c.Log = m, logs.logger() })
	b := newHarness(t, e, shared)
	key := a.testKey(a.fixture(rental.PlanFree)) // 10/s, burst 20
	plan := rental.PlanFree.Limits()
	// burst sends three bursts' worth over the processes (a only, or a
	// and b in turn) and returns how many were served and how many the
	// limit admits at most in the time it took.
	burst := func(hs ...*harness) (allowed, ceiling int) {
		start := time.Now()
		for i := range 3 * plan.Burst {
			res := hs[i%len(hs)].do(req{key: key, method: "GET", path: "/v1/account"})
			switch {
			case res.status == http.StatusOK:
				allowed++
			case res.status != http.StatusTooManyRequests || res.code() != "rate_limited" || res.header.Get("Retry-After") == "":
				t.Fatalf("status %d %v %s", res.status, res.header, res.body)
			}
		}
		return allowed, plan.Burst + int(time.Since(start).Seconds()*float64(plan.RatePerSecond)) + 1
	}

	redis.Stop()
	if allowed, ceiling := burst(a); allowed < plan.Burst || allowed > ceiling {
		t.Fatalf("with Redis down one process admitted %d requests; its own limit admits %d to %d", allowed, plan.Burst, ceiling)
	}
	bad := "svc_test_" + strings.Repeat("Z", 40)
	for i := range 30 {
		if res := a.do(req{key: bad, method: "GET", path: "/v1/account"}); res.status != http.StatusUnauthorized {
			t.Fatalf("bad key %d: %d %s", i+1, res.status, res.body)
		}
	}
	want(t, a.do(req{key: bad, method: "GET", path: "/v1/account"}), http.StatusTooManyRequests, "too_many_failed_attempts")
	if n := sample(scrape(t, ms.URL), "rentapi_rate_limit_fallbacks_total"); n < float64(3*plan.Burst+31) {
		t.Fatalf("rentapi_rate_limit_fallbacks_total %v after %d decisions taken alone", n, 3*plan.Burst+31)
	}
	failed := 0
	for _, r := range logs.records(t) {
		if r["msg"] == "rate limit store failed: the limits are kept in this process's memory until it answers again" {
			if r["level"] != "ERROR" || !strings.Contains(r["error"].(string), "connect") {
				t.Fatalf("the fallback's line: %v", r)
			}
			failed++
		}
	}
	if failed != 1 {
		t.Fatalf("the fallback was logged %d times; want once:\n%s", failed, logs)
	}

	redis.Start()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "rate limit store is back"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Redis is back, the limits are still this process's alone:\n%s", logs)
		}
		a.do(req{key: key, method: "GET", path: "/v1/properties"})
	}
	time.Sleep(time.Duration(plan.Burst/plan.RatePerSecond+1) * time.Second) // every bucket full again
	before := sample(scrape(t, ms.URL), "rentapi_rate_limit_fallbacks_total")
	if allowed, ceiling := burst(a, b); allowed < plan.Burst || allowed > ceiling {
		t.Fatalf("with Redis back two processes admitted %d requests; one shared limit admits %d to %d", allowed, plan.Burst, ceiling)
	}
	if after := sample(scrape(t, ms.URL), "rentapi_rate_limit_fallbacks_total"); after != before {
		t.Fatalf("decisions taken alone with Redis back: %v, then %v", before, after)
	}
}

// TestFailedKeysRefuseOnlyInvalidKeys: an address that sent over 30
// invalid keys in a minute gets 429 too_many_failed_attempts for its
// further invalid keys (unknown, malformed, revoked), while its requests
// with a valid key are served as usual: many tenants share one address
// behind a carrier's NAT. A minute on, its invalid keys get 401 again.
func TestFailedKeysRefuseOnlyInvalidKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		valid, live := h.testKey(f), h.liveKey(f, acct.ID)
		revoked := h.liveKey(f, "")
		revokeKeys(t, e, f, func(k rental.APIKey) bool { return k.Mode == rental.ModeLive && k.AccountID == "" })
		unknown := "svc_test_" + strings.Repeat("U", 40)
		get := func(key string) *result {
			t.Helper()
			return h.do(req{key: key, method: "GET", path: "/v1/account"})
		}
		want(t, get(valid), http.StatusOK)
		for range 30 {
			want(t, get(unknown), http.StatusUnauthorized, "invalid_api_key")
		}
		for _, key := range []string{unknown, "svc_test_short", revoked, ""} {
			res := get(key)
			want(t, res, http.StatusTooManyRequests, "too_many_failed_attempts")
			if res.header.Get("Retry-After") == "" {
				t.Fatalf("429 for %q without Retry-After", key)
			}
		}
		for _, key := range []string{valid, live} {
			res := get(key)
			want(t, res, http.StatusOK)
			if res.header.Get("X-RateLimit-Limit") == "" {
				t.Fatalf("a valid key from the address: %v", res.header)
			}
		}
		res := h.do(req{key: valid, method: "POST", path: "/v1/properties", body: property("Behind the NAT")})
		want(t, res, http.StatusCreated)
		want(t, get(unknown), http.StatusTooManyRequests, "too_many_failed_attempts")
		e.Clock.Advance(time.Minute)
		want(t, get(unknown), http.StatusUnauthorized, "invalid_api_key")
	})
}

// TestAccountRefusalsCountAgainstTheRate: a request whose key is valid
// counts against the developer's per-second limit and carries the
// X-RateLimit headers even when it is refused at account selection (403
// account_*, developer_suspended, application_disabled, 402
// payment_required): a burst of them runs the bucket down like any other
// requests, and the next is 429 rate_limited.
func TestAccountRefusalsCountAgainstTheRate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		h := newHarness(t, e)
		set := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := e.DB.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct {
			code   string
			status int
			// setup returns the key and the headers of the refused request.
			setup func(f storetest.Fixture) (string, []string)
		}{
			{"account_required", http.StatusForbidden, func(f storetest.Fixture) (string, []string) {
				f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				return h.liveKey(f, ""), nil
			}},
			{"account_not_connected", http.StatusForbidden, func(f storetest.Fixture) (string, []string) {
				f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				return h.liveKey(f, ""), []string{"SERVICE-Account: acct_000000000000000000000000"}
			}},
			{"account_mismatch", http.StatusForbidden, func(f storetest.Fixture) (string, []string) {
				a := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				b := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				return h.liveKey(f, a.ID), []string{"SERVICE-Account: " + b.ID}
			}},
			{"account_access_revoked", http.StatusForbidden, func(f storetest.Fixture) (string, []string) {
				a := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
				key := h.liveKey(f, a.ID)
				set(func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, a.ID) })
				return key, nil
			}},
			{"developer_suspended", http.StatusForbidden, func(f storetest.Fixture) (string, []string) {
				key := h.testKey(f)
				set(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, true, false) })
				return key, nil
			}},
			{"application_disabled", http.StatusForbidden, func(f storetest.Fixture) (string, []string) {
				key := h.testKey(f)
				set(func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, f.App.ID, true) })
				return key, nil
			}},
			{"payment_required", http.StatusPaymentRequired, func(f storetest.Fixture) (string, []string) {
				key := h.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
				set(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, false, true) })
				return key, nil
			}},
		} {
			f := h.fixture(rental.PlanFree) // burst 20
			key, headers := c.setup(f)
			burst := rental.PlanFree.Limits().Burst
			for i := range burst {
				res := h.do(req{key: key, method: "GET", path: "/v1/properties", headers: headers})
				want(t, res, c.status, c.code)
				if got, left := res.header.Get("X-RateLimit-Limit"), res.header.Get("X-RateLimit-Remaining"); got != itoa(int64(burst)) || left != itoa(int64(burst-1-i)) {
					t.Fatalf("%s, refusal %d: X-RateLimit-Limit %q, X-RateLimit-Remaining %q; want %d and %d", c.code, i, got, left, burst, burst-1-i)
				}
				if res.header.Get("X-RateLimit-Reset") == "" {
					t.Fatalf("%s without X-RateLimit-Reset", c.code)
				}
			}
			res := h.do(req{key: key, method: "GET", path: "/v1/properties", headers: headers})
			want(t, res, http.StatusTooManyRequests, "rate_limited")
			if res.header.Get("Retry-After") == "" || res.header.Get("X-RateLimit-Remaining") != "0" {
				t.Fatalf("%s past the burst: %v", c.code, res.header)
			}
		}
	})
}
