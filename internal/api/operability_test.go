package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/jobs"
	"rentapi/internal/metric"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/webhook"
)

// logBuffer collects JSON log lines from any goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// logger writes every level into the buffer as JSON, as serve does.
func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records decodes the lines written so far.
func (b *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line that is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// requestLine is the "request" line of the request with the ID.
func requestLine(t *testing.T, logs *logBuffer, id string) map[string]any {
	t.Helper()
	for _, r := range logs.records(t) {
		if r["msg"] == "request" && r["request_id"] == id {
			return r
		}
	}
	t.Fatalf("no request line for %s in\n%s", id, logs)
	return nil
}

// scrape reads the metrics as Prometheus would.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// sample is the value of one series, written as the text format writes it
// (labels in name order), or -1 when the series is not there.
func sample(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return f
		}
	}
	return -1
}

// The operator's metrics count what the API did, by route pattern, status
// and mode; refusals by their code; the requests in flight, the job queue
// and the pools at the time of the scrape. The public listener has no
// /metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		m := metric.New()
		if err := m.WatchDB(e.DB); err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, e, func(c *api.Config) {
			c.Metrics, c.MaxInFlight, c.OverloadWait = m, 1, 50*time.Millisecond
			c.Guard = webhook.Guard{AllowLoopback: true}
		})
		ms := httptest.NewServer(m.Handler(nil))
		t.Cleanup(ms.Close)
		expect := func(text string, want map[string]float64) {
			t.Helper()
			for series, v := range want {
				if got := sample(text, series); got != v {
					t.Errorf("%s = %v, want %v", series, got, v)
				}
			}
		}

		fx := h.fixture(rental.PlanFree)
		key := h.testKey(fx) // bursts of 20
		for range 3 {
			want(t, h.do(req{key: key, method: "GET", path: "/v1/account"}), http.StatusOK)
		}
		want(t, h.do(req{key: key, method: "GET", path: "/v1/bills/bill_nosuchbill"}), http.StatusNotFound, "resource_not_found")
		want(t, h.do(req{method: "GET", path: "/v1/no/such/route"}), http.StatusNotFound, "route_not_found")
		want(t, h.do(req{method: "GET", path: "/metrics"}), http.StatusNotFound, "route_not_found")
		want(t, h.do(req{key: "svc_test_" + strings.Repeat("x", 40), method: "GET", path: "/v1/account"}), http.StatusUnauthorized, "invalid_api_key")

		// A write waits for the landlord's lock, held here, while holding
		// the only in-flight place; the next request waits its 50 ms and is
		// refused.
		tx, err := e.DB.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := tx.Claim(t.Context(), fx.Sandbox(t, e.DB)); err != nil {
			t.Fatal(err)
		}
		created := make(chan int)
		go func() {
			res, err := h.send(req{key: key, method: "POST", path: "/v1/properties", body: property("Slow")})
			if err != nil {
				t.Error(err)
				created <- 0
				return
			}
			created <- res.status
		}()
		for deadline := time.Now().Add(10 * time.Second); sample(scrape(t, ms.URL), "rentapi_api_requests_in_flight") != 1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the slow write never took the in-flight place")
			}
		}
		want(t, h.do(req{key: key, method: "GET", path: "/v1/account"}), http.StatusServiceUnavailable, "service_unavailable")
		tx.Rollback()
		if status := <-created; status != http.StatusCreated {
			t.Fatalf("the slow write: %d", status)
		}

		// Rate limited, then a sandbox over its daily requests.
		for i := 0; ; i++ {
			res := h.do(req{key: key, method: "GET", path: "/v1/account"})
			if res.status == http.StatusTooManyRequests {
				want(t, res, http.StatusTooManyRequests, "rate_limited")
				break
			}
			if i > 40 {
				t.Fatal("never rate limited")
			}
		}
		full := h.fixture(rental.PlanPro)
		if _, err := e.DB.AddUsage(t.Context(), store.UsagePeriod{Developer: full.Developer.ID, Mode: rental.ModeTest, From: "2026-11-22", To: "2026-11-22"},
			map[store.UsageCell]int64{{Application: full.App.ID, Day: "2026-11-22"}: 20_000}); err != nil {
			t.Fatal(err)
		}
		want(t, h.do(req{key: h.testKey(full), method: "GET", path: "/v1/account"}), http.StatusTooManyRequests, "sandbox_limit")

		// A delivery queued and not yet worked (no job client runs here).
		other := h.testKey(h.fixture(rental.PlanPro))
		want(t, h.do(req{key: other, method: "POST", path: "/v1/webhook-endpoints",
			body: map[string]any{"url": "http://127.0.0.1:9/hook", "enabled_events": []string{"property.created"}}}), http.StatusCreated)
		want(t, h.do(req{key: other, method: "POST", path: "/v1/properties", body: property("Queued")}), http.StatusCreated)

		text := scrape(t, ms.URL)
		expect(text, map[string]float64{
			`rentapi_api_requests_total{mode="none",route="GET /v1/account",status="401"}`:                 1,
			`rentapi_api_requests_total{mode="test",route="GET /v1/account",status="503"}`:                 1,
			`rentapi_api_requests_total{mode="test",route="GET /v1/bills/{bill_id}",status="404"}`:         1,
			`rentapi_api_requests_total{mode="none",route="unmatched",status="404"}`:                       2,
			`rentapi_api_requests_total{mode="test",route="POST /v1/properties",status="201"}`:             2,
			`rentapi_api_requests_total{mode="test",route="POST /v1/webhook-endpoints",status="201"}`:      1,
			`rentapi_api_requests_total{mode="test",route="GET /v1/account",status="429"}`:                 2,
			`rentapi_api_request_duration_seconds_count{mode="test",route="GET /v1/account",status="503"}`: 1,
			`rentapi_api_requests_in_flight`:                                     0,
			`rentapi_api_overload_refusals_total`:                                1,
			`rentapi_api_limit_refusals_total{code="rate_limited"}`:              1,
			`rentapi_api_limit_refusals_total{code="sandbox_limit"}`:             1,
			`rentapi_api_limit_refusals_total{code="monthly_quota_exceeded"}`:    0,
			`rentapi_api_limit_refusals_total{code="too_many_failed_attempts"}`:  0,
			`rentapi_job_queue_depth{kind="webhook_delivery",state="available"}`: 1,
			`rentapi_webhook_attempts_total{result="failure"}`:                   0,
		})
		ok := sample(text, `rentapi_api_requests_total{mode="test",route="GET /v1/account",status="200"}`)
		if ok < 3 || sample(text, `rentapi_api_request_duration_seconds_count{mode="test",route="GET /v1/account",status="200"}`) != ok {
			t.Errorf("%v GET /v1/account answered 200, or a histogram that disagrees", ok)
		}
		pool := `go_sql_max_open_connections{db_name="write"}`
		if e.Name == "postgres" {
			pool = `go_sql_max_open_connections{db_name="main"}`
		}
		if sample(text, pool) < 1 || !strings.Contains(text, "go_sql_in_use_connections{") || !strings.Contains(text, "go_sql_wait_count_total{") {
			t.Errorf("no pool metrics in\n%s", text)
		}
		if strings.Contains(text, "/v1/no/such/route") || strings.Contains(text, "bill_nosuchbill") {
			t.Error("a raw path became a label")
		}
		if resp, err := http.Get(ms.URL + "/"); err != nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("the metrics listener serves more than /metrics: %v %v", resp, err)
		}
	})
}

// Every request gets one log line with its ID, route pattern, status,
// duration and address, and an error's code; the payment page and the
// provider's callback too, without the page's token.
func TestRequestLogs(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	h := newHarness(t, storetest.SQLite(t), func(c *api.Config) { c.Log = logs.logger() })
	p := newPayee(t, h, rental.LandlordStandard)

	res := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill})
	want(t, res, http.StatusOK)
	line := requestLine(t, &logs, res.header.Get("X-Request-ID"))
	if line["route"] != "GET /v1/bills/{bill_id}" || line["path"] != "/v1/bills/"+p.bill || line["status"] != 200.0 ||
		line["mode"] != "live" || line["remote"] != "127.0.0.1" || line["duration_ms"] == nil || line["code"] != nil || line["level"] != "INFO" {
		t.Errorf("request line %v", line)
	}
	res = h.do(req{key: p.key, method: "POST", path: "/v1/properties", body: "{"})
	line = requestLine(t, &logs, res.header.Get("X-Request-ID"))
	if line["status"] != 400.0 || line["code"] != "invalid_json" {
		t.Errorf("error line %v", line)
	}
	res = h.do(req{method: "GET", path: "/v1/properties/" + p.key})
	line = requestLine(t, &logs, res.header.Get("X-Request-ID"))
	if line["code"] != "invalid_api_key" || line["path"] != "/v1/properties/[redacted]" || line["mode"] != "" {
		t.Errorf("a key in the path: %v", line)
	}

	url := p.link(t, h)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	line = requestLine(t, &logs, resp.Header.Get("X-Request-ID"))
	if line["route"] != "GET /pay/{token}" || line["status"] != 200.0 || line["method"] != "GET" || line["remote"] != "127.0.0.1" || line["duration_ms"] == nil {
		t.Errorf("page line %v", line)
	}

	conf := h.confirm(confirmation{at: h.e.Clock.Now(), body: confirmationBody("TXN-LOG-1", "pay_nosuchpayment", 100), signature: "sha256=00"})
	want(t, conf, http.StatusUnauthorized, "invalid_signature")
	line = requestLine(t, &logs, conf.header.Get("X-Request-ID"))
	if line["route"] != "POST /provider/v1/confirmations/{provider}" || line["status"] != 401.0 || line["code"] != "invalid_signature" {
		t.Errorf("callback line %v", line)
	}

	token := url[strings.LastIndex(url, "/")+1:]
	for _, secret := range []string{token, p.key, testProviderSecret} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds %q:\n%s", secret, logs.String())
		}
	}
}

// A receiver that fails is the developer's problem: each attempt is one
// info line from the worker with the endpoint, delivery, status and
// duration, counted in the metrics, and River adds no warning of its own.
func TestWebhookAttemptLogs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var logs logBuffer
		log := logs.logger()
		m := metric.New()
		h := newHarness(t, e, func(c *api.Config) { c.Guard, c.Log, c.Metrics = webhook.Guard{AllowLoopback: true}, log, m })
		h.runJobs(log, jobs.Options{Metrics: m})
		key := h.testKey(h.fixture(rental.PlanPro))
		failing, taking := newReceiver(t, e.Clock.Now), newReceiver(t, e.Clock.Now)
		failing.answers = []int{500}
		bad := h.createEndpoint(key, failing, "property.created")
		good := h.createEndpoint(key, taking, "property.created")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Hooked")}), http.StatusCreated)
		failing.waitFor(1)
		taking.waitFor(1)

		attempts := map[any]map[string]any{} // by endpoint
		for deadline := time.Now().Add(10 * time.Second); len(attempts) < 2; time.Sleep(20 * time.Millisecond) {
			for _, r := range logs.records(t) {
				if r["msg"] == "webhook attempt" {
					attempts[r["endpoint_id"]] = r
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d attempt lines in\n%s", len(attempts), logs.String())
			}
		}
		for _, want := range []struct {
			endpoint map[string]any
			status   float64
			result   string
		}{{bad, 500, "failure"}, {good, 200, "success"}} {
			a := attempts[want.endpoint["id"]]
			if a["level"] != "INFO" || !strings.HasPrefix(a["delivery_id"].(string), "whdl_") || a["status"] != want.status ||
				a["result"] != want.result || a["attempt"] != 1.0 || a["duration_ms"] == nil {
				t.Errorf("attempt to %s: %v", want.endpoint["id"], a)
			}
		}
		if attempts[bad["id"]]["next_attempt_at"] == nil {
			t.Errorf("the failed attempt does not say when the next is: %v", attempts[bad["id"]])
		}
		time.Sleep(500 * time.Millisecond) // River reports the failed run after the worker returns
		for _, r := range logs.records(t) {
			if msg, _ := r["msg"].(string); strings.Contains(msg, "Job errored") || r["level"] == "WARN" {
				t.Errorf("a warning for an expected failure: %v", r)
			}
		}
		ms := httptest.NewServer(m.Handler(nil))
		t.Cleanup(ms.Close)
		text := scrape(t, ms.URL)
		if sample(text, `rentapi_webhook_attempts_total{result="failure"}`) != 1 || sample(text, `rentapi_webhook_attempts_total{result="success"}`) != 1 {
			t.Errorf("attempts counted:\n%s", text)
		}
		for _, ep := range []map[string]any{bad, good} {
			if strings.Contains(logs.String(), ep["secret"].(string)) {
				t.Error("the log holds a signing secret")
			}
		}
	})
}
