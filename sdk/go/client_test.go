package rentapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	rentapi "rentapi/sdk/go"
)

// fault sits between the client and the real service: it passes each
// request on, or answers it itself as a failing network or server would,
// as its test says, and records what the client sent.
type fault struct {
	t     *testing.T
	proxy *httputil.ReverseProxy
	// decide is asked for each request, numbered from 0; nil passes it on.
	decide func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool
	mu     sync.Mutex
	seen   []*http.Request
}

func newFault(t *testing.T, decide func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool) (*fault, *rentapi.Client) {
	u, _ := url.Parse(baseURL)
	f := &fault{t: t, proxy: httputil.NewSingleHostReverseProxy(u), decide: decide}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, rentapi.NewClient(testKey, rentapi.WithBaseURL(srv.URL), rentapi.WithBackoff(10*time.Millisecond))
}

func (f *fault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	n := len(f.seen)
	f.seen = append(f.seen, r.Clone(context.Background()))
	f.mu.Unlock()
	if f.decide != nil && f.decide(n, w, r, func() { f.proxy.ServeHTTP(httptest.NewRecorder(), r) }) {
		return
	}
	f.proxy.ServeHTTP(w, r)
}

func (f *fault) requests() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request(nil), f.seen...)
}

func client() *rentapi.Client { return rentapi.NewClient(testKey, rentapi.WithBaseURL(baseURL)) }

func uniqueName(t *testing.T) string {
	return t.Name() + " " + time.Now().Format(time.RFC3339Nano)
}

// propertiesNamed counts the sandbox's properties of a name.
func propertiesNamed(t *testing.T, name string) int {
	t.Helper()
	n := 0
	for p, err := range client().ListProperties(t.Context(), &rentapi.ListPropertiesParams{Limit: 100}) {
		if err != nil {
			t.Fatal(err)
		}
		if p.Name == name {
			n++
		}
	}
	return n
}

// A write whose answer is lost is sent again with the same
// Idempotency-Key, so the service answers it from the first run: one
// property, whatever the number of attempts.
func TestRetryKeepsTheIdempotencyKey(t *testing.T) {
	for _, lose := range []string{"500", "connection"} {
		t.Run(lose, func(t *testing.T) {
			f, c := newFault(t, func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool {
				if n > 0 {
					return false
				}
				pass() // the service does the write; its answer is lost
				if lose == "500" {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusInternalServerError)
					w.Write([]byte(`{"error":{"code":"internal_error","message":"lost","request_id":"req_x","doc_url":"x"}}`))
					return true
				}
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					t.Error(err)
					return false
				}
				conn.Close()
				return true
			})
			name := uniqueName(t)
			p, err := c.CreateProperty(t.Context(), &rentapi.PropertyCreate{Name: name, ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))})
			if err != nil {
				t.Fatal(err)
			}
			seen := f.requests()
			if len(seen) != 2 {
				t.Fatalf("%d attempts, want 2", len(seen))
			}
			k0, k1 := seen[0].Header.Get("Idempotency-Key"), seen[1].Header.Get("Idempotency-Key")
			if k0 == "" || k0 != k1 {
				t.Fatalf("the attempts' keys: %q, %q", k0, k1)
			}
			if got := propertiesNamed(t, name); got != 1 || p.Name != name {
				t.Fatalf("%d properties named %q after a retried create", got, name)
			}
		})
	}
}

// A caller's own key is the one sent; each write without one gets a new
// key, and reads none.
func TestIdempotencyKeys(t *testing.T) {
	f, c := newFault(t, nil)
	name := uniqueName(t)
	for range 2 {
		if _, err := c.CreateProperty(t.Context(), &rentapi.PropertyCreate{Name: name, ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))}, rentapi.WithIdempotencyKey("sdk-test-"+name)); err != nil {
			t.Fatal(err)
		}
	}
	if got := propertiesNamed(t, name); got != 1 {
		t.Fatalf("one key, two calls: %d properties", got)
	}
	other := name + " again"
	for range 2 {
		if _, err := c.CreateProperty(t.Context(), &rentapi.PropertyCreate{Name: other, ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))}); err != nil {
			t.Fatal(err)
		}
	}
	if got := propertiesNamed(t, other); got != 2 {
		t.Fatalf("two calls without a key: %d properties", got)
	}
	seen := f.requests()
	if seen[0].Header.Get("Idempotency-Key") != "sdk-test-"+name || seen[2].Header.Get("Idempotency-Key") == seen[3].Header.Get("Idempotency-Key") {
		t.Fatalf("keys sent: %q %q %q %q", seen[0].Header.Get("Idempotency-Key"), seen[1].Header.Get("Idempotency-Key"),
			seen[2].Header.Get("Idempotency-Key"), seen[3].Header.Get("Idempotency-Key"))
	}
	if _, err := c.GetAccount(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k := f.requests()[4].Header.Get("Idempotency-Key"); k != "" {
		t.Fatalf("a read sent Idempotency-Key %q", k)
	}
}

// 429 and 503 are retried after their Retry-After; a monthly quota's wait
// (until the 1st) is not waited for, and a 400 is not retried.
func TestRetryAfter(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			f, c := newFault(t, func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool {
				if n > 0 {
					return false
				}
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(status)
				w.Write([]byte(`{"error":{"code":"rate_limited","message":"slow down","request_id":"req_1","doc_url":"x"}}`))
				return true
			})
			start := time.Now()
			if _, err := c.GetAccount(t.Context()); err != nil {
				t.Fatal(err)
			}
			if waited := time.Since(start); len(f.requests()) != 2 || waited < time.Second {
				t.Fatalf("%d attempts in %v; want 2, the second after Retry-After", len(f.requests()), waited)
			}
		})
	}
	t.Run("monthly quota", func(t *testing.T) {
		f, c := newFault(t, func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool {
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error":{"code":"monthly_quota_exceeded","message":"used","request_id":"req_2","doc_url":"x"}}`))
			return true
		})
		_, err := c.GetAccount(t.Context())
		var e *rentapi.Error
		if !errors.As(err, &e) || e.Code != "monthly_quota_exceeded" || e.RetryAfter != 24*time.Hour || len(f.requests()) != 1 {
			t.Fatalf("%v (%d attempts)", err, len(f.requests()))
		}
	})
	t.Run("server errors run out", func(t *testing.T) {
		f, c := newFault(t, func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool {
			w.WriteHeader(http.StatusInternalServerError)
			return true
		})
		_, err := c.GetAccount(t.Context())
		var e *rentapi.Error
		if !errors.As(err, &e) || e.StatusCode != 500 || e.Code != "unexpected_response" || len(f.requests()) != 4 {
			t.Fatalf("%v (%d attempts, want 1 and 3 retries)", err, len(f.requests()))
		}
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		_, c := newFault(t, func(n int, w http.ResponseWriter, r *http.Request, pass func()) bool {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		if _, err := c.GetAccount(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%v, want the context's error", err)
		}
	})
}

// An error answer is an *Error with the service's fields, and is not
// retried.
func TestErrorsAreTyped(t *testing.T) {
	f, c := newFault(t, nil)
	_, err := c.CreateProperty(t.Context(), &rentapi.PropertyCreate{Name: "x", ElectricityRate: -1})
	var e *rentapi.Error
	if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != "invalid_parameter" || e.Param != "electricity_rate" ||
		!strings.HasPrefix(e.RequestID, "req_") || !strings.HasSuffix(e.DocURL, "/docs/errors#invalid_parameter") {
		t.Fatalf("%#v", err)
	}
	if len(f.requests()) != 1 {
		t.Fatalf("a 400 was sent %d times", len(f.requests()))
	}
	if !rentapi.IsCode(err, "invalid_parameter") || !strings.Contains(err.Error(), "electricity_rate") {
		t.Fatalf("IsCode or Error(): %v", err)
	}
	bad := rentapi.NewClient("svc_test_wrong", rentapi.WithBaseURL(baseURL))
	if _, err := bad.GetAccount(t.Context()); !rentapi.IsCode(err, "invalid_api_key") {
		t.Fatalf("a wrong key: %v", err)
	}
}

// Lists follow cursors page by page as the loop goes, and a loop that
// stops early asks for no more pages.
func TestListsFollowCursors(t *testing.T) {
	ctx := t.Context()
	c := client()
	p, err := c.CreateProperty(ctx, &rentapi.PropertyCreate{Name: uniqueName(t), ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800))})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range []string{"A1", "A2", "A3", "A4", "A5"} {
		r, err := c.CreateRoom(ctx, p.ID, &rentapi.RoomCreate{Number: n, MonthlyRent: 300000})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r.ID)
	}
	f, fc := newFault(t, nil)
	var got []string
	for r, err := range fc.ListPropertyRooms(ctx, p.ID, &rentapi.ListPropertyRoomsParams{Limit: 2, Order: rentapi.OrderAsc}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || len(f.requests()) != 3 {
		t.Fatalf("rooms %v in %d pages, want %v in 3", got, len(f.requests()), want)
	}
	for r, err := range fc.ListPropertyRooms(ctx, p.ID, &rentapi.ListPropertyRoomsParams{Limit: 2}) {
		if err != nil || r == nil {
			t.Fatal(err)
		}
		break
	}
	if len(f.requests()) != 4 {
		t.Fatalf("a loop that stopped at its first item asked for %d pages", len(f.requests())-3)
	}
	for _, err := range fc.ListPropertyRooms(ctx, "prop_doesnotexist", nil) {
		if !rentapi.IsCode(err, "resource_not_found") {
			t.Fatalf("a list of a missing property: %v", err)
		}
	}
}

// A field that may be null is left out, set, or set to null: a PATCH
// changes only what it names, and null removes a property's late fee.
func TestNullable(t *testing.T) {
	ctx := t.Context()
	c := client()
	p, err := c.CreateProperty(ctx, &rentapi.PropertyCreate{Name: uniqueName(t), ElectricityRate: 800, WaterRate: rentapi.Ptr(int64(1800)),
		LateFee: rentapi.Value(rentapi.LateFeeInput{Amount: 5000, Per: rentapi.LateFeePerDay, GraceDays: rentapi.Ptr(2), MaxAmount: rentapi.Value(int64(50000))})})
	if err != nil {
		t.Fatal(err)
	}
	if p.LateFee == nil || p.LateFee.Amount != 5000 || p.LateFee.MaxAmount == nil || *p.LateFee.MaxAmount != 50000 {
		t.Fatalf("late fee %+v", p.LateFee)
	}
	p, err = c.UpdateProperty(ctx, p.ID, &rentapi.PropertyUpdate{Name: rentapi.Ptr("renamed " + p.Name)})
	if err != nil || p.LateFee == nil {
		t.Fatalf("a PATCH of the name touched the late fee: %+v %v", p, err)
	}
	p, err = c.UpdateProperty(ctx, p.ID, &rentapi.PropertyUpdate{LateFee: rentapi.Null[rentapi.LateFeeInput]()})
	if err != nil || p.LateFee != nil {
		t.Fatalf("late_fee null: %+v %v", p, err)
	}
}

// ForAccount and WithAccount send SERVICE-Account: a test key's own
// sandbox is accepted, another account refused with account_mismatch.
func TestAccountHeader(t *testing.T) {
	acct, err := client().GetAccount(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client().GetAccount(t.Context(), rentapi.ForAccount(acct.ID)); err != nil {
		t.Fatal(err)
	}
	other := rentapi.NewClient(testKey, rentapi.WithBaseURL(baseURL), rentapi.WithAccount("acct_000000000000000000000000"))
	if _, err := other.GetAccount(t.Context()); !rentapi.IsCode(err, "account_mismatch") {
		t.Fatalf("another account: %v", err)
	}
}

// A write whose parameters are all optional can be called with nil: it
// sends {}, not null.
func TestNilParams(t *testing.T) {
	if _, err := client().AdvanceTestClock(t.Context(), nil); rentapi.IsCode(err, "invalid_json") {
		t.Fatalf("AdvanceTestClock(nil) sent no JSON object: %v", err)
	}
	f, c := newFault(t, nil)
	if _, err := c.UpdateProperty(t.Context(), "prop_doesnotexist", nil); !rentapi.IsCode(err, "resource_not_found") {
		t.Fatalf("UpdateProperty(nil): %v", err)
	}
	if r := f.requests(); len(r) != 1 || r[0].ContentLength != 2 {
		t.Fatalf("the body sent: %d bytes, want {}", r[0].ContentLength)
	}
}
