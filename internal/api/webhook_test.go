package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"rentapi/internal/api"
	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/webhook"
	"rentapi/internal/webhook/webhooktest"
)

// received is one request that reached the receiver.
type received struct {
	header http.Header
	body   []byte
	event  string
	// verified[i] is the secret index that signature entry i verified with.
	verified []int
}

// receiver is a developer's webhook endpoint on this machine. It checks
// every header and verifies the signature with its own HMAC code, as the
// spec's four steps say, and answers with the statuses it is told.
type receiver struct {
	t     *testing.T
	url   string
	clock func() time.Time

	mu      sync.Mutex
	secrets []string // what the receiver verifies with
	answers []int    // statuses to answer in turn; 200 once used up
	body    []byte   // what it answers with; {"received":true} when nil
	got     []received
	arrived chan struct{}
}

func newReceiver(t *testing.T, clock func() time.Time) *receiver {
	rc := &receiver{t: t, clock: clock, arrived: make(chan struct{}, 100000)}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	rc.url = srv.URL + "/hooks/rentapi"
	return rc
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t := rc.t
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("receiver: %v", err)
		return
	}
	var ev struct {
		ID, Object, Type string
		Data             struct{ Object map[string]any }
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Object != "event" || ev.Data.Object["id"] == nil {
		t.Errorf("receiver: body %s", body)
	}
	h := r.Header
	for name, want := range map[string]string{
		"Content-Type": "application/json; charset=utf-8", "User-Agent": "SERVICE-Webhooks/1.0",
		"X-Service-Event": ev.Type, "X-Service-Event-Id": ev.ID,
	} {
		if got := h.Get(name); got != want || r.Method != http.MethodPost {
			t.Errorf("receiver: %s %s: %s is %q, want %q", r.Method, ev.ID, name, got, want)
		}
	}
	if !strings.HasPrefix(h.Get("X-Service-Delivery-Id"), "whdl_") {
		t.Errorf("receiver: delivery ID %q", h.Get("X-Service-Delivery-Id"))
	}
	if n, err := strconv.Atoi(h.Get("X-Service-Attempt")); err != nil || n < 1 {
		t.Errorf("receiver: attempt %q", h.Get("X-Service-Attempt"))
	}
	// Step 4: refuse a timestamp more than 5 minutes old.
	ts := h.Get("X-Service-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || rc.clock().Sub(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		t.Errorf("receiver: timestamp %q, clock %v", ts, rc.clock())
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	// Steps 1-3: HMAC-SHA256 over "<timestamp>.<raw body>", compared in
	// constant time with each sha256= entry.
	got := received{header: h.Clone(), body: body, event: ev.ID}
	for _, entry := range strings.Split(h.Get("X-Service-Signature"), ",") {
		sig, ok := strings.CutPrefix(entry, "sha256=")
		which := -1
		for i, s := range rc.secrets {
			m := hmac.New(sha256.New, []byte(s))
			m.Write([]byte(ts + "." + string(body)))
			if ok && subtle.ConstantTimeCompare([]byte(sig), []byte(hex.EncodeToString(m.Sum(nil)))) == 1 {
				which = i
			}
		}
		got.verified = append(got.verified, which)
	}
	if !slices.ContainsFunc(got.verified, func(i int) bool { return i >= 0 }) {
		t.Errorf("receiver: no signature of %s verifies: %q", ev.ID, h.Get("X-Service-Signature"))
	}
	rc.got = append(rc.got, got)
	status := http.StatusOK
	if len(rc.answers) > 0 {
		status, rc.answers = rc.answers[0], rc.answers[1:]
	}
	w.WriteHeader(status)
	if rc.body != nil {
		w.Write(rc.body)
	} else {
		io.WriteString(w, `{"received":true}`)
	}
	rc.arrived <- struct{}{}
}

// requests returns what arrived so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// waitFor waits until n requests have arrived in all.
func (rc *receiver) waitFor(n int) []received {
	rc.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if got := rc.requests(); len(got) >= n {
			return got
		}
		select {
		case <-rc.arrived:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			rc.t.Fatalf("%d requests arrived, want %d", len(rc.requests()), n)
		}
	}
}

// events returns the distinct event IDs received.
func (rc *receiver) events() map[string]int {
	out := map[string]int{}
	for _, r := range rc.requests() {
		out[r.event]++
	}
	return out
}

// noRescue is a RescueAfter for job clients on a test clock. River's rescuer
// measures how long a job has run against the wall clock, but River starts
// jobs at the test clock's time, which lags the wall clock by days: under a
// shorter RescueAfter every delivery in flight when the rescuer looks is
// taken as lost and sent again.
const noRescue = 100 * 365 * 24 * time.Hour

// webhookHarness is a harness that admits loopback receivers, with the job
// client running deliveries as the service does.
func webhookHarness(t *testing.T, e storetest.Engine) *harness {
	h := newHarness(t, e, func(c *api.Config) { c.Guard = webhook.Guard{AllowLoopback: true} })
	h.runJobs(slog.New(slog.DiscardHandler), jobs.Options{})
	return h
}

// runJobs starts a job client over the harness's database, as serve does,
// until the test ends: with the harness's secret, and a sender that admits
// loopback receivers unless o names another, and no rescue unless o sets
// one (see noRescue).
func (h *harness) runJobs(log *slog.Logger, o jobs.Options) {
	t := h.t
	o.Secret = h.sec
	if o.RescueAfter == 0 {
		o.RescueAfter = noRescue
	}
	if o.Sender == nil {
		o.Sender = webhook.NewSender(webhook.Guard{AllowLoopback: true}, nil)
	}
	c, err := jobs.New(h.e.DB, log, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c.Stop(stop)
	})
	h.jobs = c
}

// settleDeliveries waits for the delivery jobs themselves, not for a while:
// until River has none left that can run before the test clock moves (none
// available or running, no retry due). Every request the receivers will get
// until then has arrived, so a count taken now is exact and a late
// duplicate would be in it. It returns the jobs parked for a later retry.
func (h *harness) settleDeliveries() []*rivertype.JobRow {
	h.t.Helper()
	return h.settleKind(store.DeliveryArgs{}.Kind())
}

// settleKind is settleDeliveries for the jobs of any kind.
func (h *harness) settleKind(kind string) []*rivertype.JobRow {
	h.t.Helper()
	params := river.NewJobListParams().Kinds(kind).First(10000).States(rivertype.JobStateAvailable,
		rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := h.jobs.JobList(h.t.Context(), params)
		if err != nil {
			h.t.Fatal(err)
		}
		now := h.e.Clock.Now()
		var parked []*rivertype.JobRow
		for _, j := range res.Jobs {
			waiting := j.State == rivertype.JobStateRetryable || j.State == rivertype.JobStateScheduled
			if waiting && j.ScheduledAt.After(now) {
				parked = append(parked, j)
			} else if waiting {
				// Due by the test's clock: made available as River's
				// scheduler would, without waiting for its next run (every
				// 5 s, not configurable); only if it is still waiting (not
				// JobRetry, which would run a job done meanwhile again).
				if _, err := h.e.DB.WritePool().ExecContext(h.t.Context(),
					`UPDATE river_job SET state = 'available' WHERE id = $1 AND state IN ('retryable', 'scheduled')`, j.ID); err != nil {
					h.t.Fatal(err)
				}
			}
		}
		if len(parked) == len(res.Jobs) {
			return parked
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%d %s jobs still to run", len(res.Jobs)-len(parked), kind)
		}
	}
}

// createEndpoint registers the receiver and gives it the secret.
func (h *harness) createEndpoint(key string, rc *receiver, events ...string) map[string]any {
	h.t.Helper()
	if len(events) == 0 {
		events = []string{"*"}
	}
	res := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: map[string]any{"url": rc.url, "enabled_events": events}})
	want(h.t, res, http.StatusCreated)
	d := res.data()
	rc.mu.Lock()
	rc.secrets = append([]string{d["secret"].(string)}, rc.secrets...)
	rc.mu.Unlock()
	return d
}

func TestWebhookEndpointsAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.NoRateLimits = true })
		f := h.fixture(rental.PlanFree)
		key := h.testKey(f)
		create := func(k string, body any) *result {
			return h.do(req{key: k, method: "POST", path: "/v1/webhook-endpoints", body: body})
		}
		res := create(key, map[string]any{"url": "https://hooks.example.com/rentapi", "enabled_events": []string{"bill.created", "payment.paid"}, "description": "Accounting"})
		want(t, res, http.StatusCreated)
		ep := res.data()
		secret, _ := ep["secret"].(string)
		if !strings.HasPrefix(secret, "whsec_") || len(secret) != 38 || ep["mode"] != "test" || ep["status"] != "enabled" || ep["disabled_reason"] != nil {
			t.Fatalf("created %v", ep)
		}
		id := ep["id"].(string)
		got := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + id})
		want(t, got, http.StatusOK)
		if _, shown := got.data()["secret"]; shown || strings.Contains(string(got.body), secret) {
			t.Fatalf("the secret is shown again: %s", got.body)
		}
		// Every hostile URL is refused through the API too, naming url.
		for _, u := range []string{"http://hooks.example.com/x", "https://127.0.0.1/x", "https://169.254.169.254/", "https://[::ffff:10.0.0.1]/",
			"https://2130706433/", "https://localhost/x", "https://10.1.2.3/x", "https://[fd00::1]/x"} {
			res := create(key, map[string]any{"url": u, "enabled_events": []string{"*"}})
			want(t, res, http.StatusBadRequest, "invalid_url")
			if res.errField("param") != "url" {
				t.Fatalf("%s: param %q", u, res.errField("param"))
			}
		}
		// A receiver on the developer's own machine is told how to admit it.
		res = create(key, map[string]any{"url": "http://127.0.0.1:9000/hook", "enabled_events": []string{"*"}})
		want(t, res, http.StatusBadRequest, "invalid_url")
		if msg := res.errField("message"); !strings.Contains(msg, "--webhook-allow-loopback") {
			t.Fatalf("loopback refusal without the hint: %q", msg)
		}
		for body, param := range map[string]string{
			`{"enabled_events":["*"]}`:                                                    "url",
			`{"url":"https://a.example.com/"}`:                                            "enabled_events",
			`{"url":"https://a.example.com/","enabled_events":[]}`:                        "enabled_events",
			`{"url":"https://a.example.com/","enabled_events":["nope"]}`:                  "enabled_events",
			`{"url":"https://a.example.com/","enabled_events":["*","bill.created"]}`:      "enabled_events",
			`{"url":"https://a.example.com/","enabled_events":"*"}`:                       "enabled_events",
			`{"url":"https://a.example.com/","enabled_events":["*"],"mode":"live"}`:       "mode",
			`{"url":"https://a.example.com/","enabled_events":["*"],"status":"disabled"}`: "status",
		} {
			res := create(key, body)
			if res.status != http.StatusBadRequest || res.errField("param") != param {
				t.Fatalf("%s: %d %s", body, res.status, res.body)
			}
		}
		// The free plan allows two endpoints.
		res = create(key, map[string]any{"url": "https://b.example.com/", "enabled_events": []string{"*"}})
		want(t, res, http.StatusCreated)
		second := res.data()["id"].(string)
		want(t, create(key, map[string]any{"url": "https://c.example.com/", "enabled_events": []string{"*"}}), http.StatusForbidden, "plan_limit_reached")

		// Update: URL checked again; status disabled and enabled.
		upd := func(body any) *result {
			return h.do(req{key: key, method: "PATCH", path: "/v1/webhook-endpoints/" + id, body: body})
		}
		want(t, upd(map[string]any{"url": "https://192.168.0.1/"}), http.StatusBadRequest, "invalid_url")
		res = upd(map[string]any{"url": "https://new.example.com/hook", "enabled_events": []string{"*"}, "description": nil, "status": "disabled"})
		want(t, res, http.StatusOK)
		if d := res.data(); d["url"] != "https://new.example.com/hook" || d["status"] != "disabled" || d["disabled_reason"] == nil || d["description"] != nil {
			t.Fatalf("updated %v", d)
		}
		want(t, h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + id + "/test"}), http.StatusConflict, "webhook_endpoint_disabled")
		if d := upd(map[string]any{"status": "enabled"}).data(); d["status"] != "enabled" || d["disabled_reason"] != nil {
			t.Fatalf("enabled again %v", d)
		}
		// Rotation returns a new secret.
		rot := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + id + "/rotate-secret"})
		want(t, rot, http.StatusOK)
		if s, _ := rot.data()["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == secret {
			t.Fatalf("rotated secret %q", s)
		}
		// List, with paging.
		page := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints?limit=1"})
		want(t, page, http.StatusOK)
		cur := page.json()["pagination"].(map[string]any)["next_cursor"].(string)
		next := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints?limit=1&cursor=" + cur})
		if len(next.json()["data"].([]any)) != 1 || next.json()["pagination"].(map[string]any)["has_more"] != false {
			t.Fatalf("second page %s", next.body)
		}
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		live := h.liveKey(f, "")
		// The two are the plan's endpoints of both modes: a live one
		// waits until a test one goes.
		liveBody := map[string]any{"url": "https://live.example.com/", "enabled_events": []string{"*"}}
		want(t, create(live, liveBody), http.StatusForbidden, "plan_limit_reached")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/webhook-endpoints/" + second}), http.StatusNoContent)
		// An unbound live key manages the application's live endpoints
		// without naming an account, but a test event needs one.
		res = create(live, liveBody)
		want(t, res, http.StatusCreated)
		liveID := res.data()["id"].(string)
		if res.data()["mode"] != "live" {
			t.Fatalf("live endpoint %v", res.data())
		}
		want(t, h.do(req{key: live, method: "POST", path: "/v1/webhook-endpoints/" + liveID + "/test"}), http.StatusForbidden, "account_required")
		res = h.do(req{key: live, method: "POST", path: "/v1/webhook-endpoints/" + liveID + "/test", headers: []string{"SERVICE-Account: " + acct.ID}})
		want(t, res, http.StatusAccepted)
		if d := res.data(); d["event_type"] != "webhook.test" || d["status"] != "pending" || d["endpoint_id"] != liveID {
			t.Fatalf("test delivery %v", d)
		}
		// The scope: webhooks:manage, from the key and the application only.
		noScope := h.testKey(f, rental.ScopePropertiesRead)
		res = h.do(req{key: noScope, method: "GET", path: "/v1/webhook-endpoints"})
		want(t, res, http.StatusForbidden, "insufficient_scope")
		if res.errField("scope") != "webhooks:manage" {
			t.Fatalf("scope %q", res.errField("scope"))
		}
		// Deleting.
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/webhook-endpoints/" + id}), http.StatusNoContent)
		want(t, h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + id}), http.StatusNotFound, "resource_not_found")
		want(t, h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + id + "/deliveries"}), http.StatusNotFound, "resource_not_found")
	})
}

// TestWebhookEndpointCountBothModes: the plan's number of webhook
// endpoints is the developer account's, test and live endpoints together,
// across its applications (the Free plan's 2 in all, not 2 of each mode).
func TestWebhookEndpointCountBothModes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.NoRateLimits = true })
		f := h.fixture(rental.PlanFree)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		test, live := h.testKey(f), h.liveKey(f, acct.ID)
		create := func(key, host string) *result {
			t.Helper()
			return h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: map[string]any{"url": "https://" + host + "/hook", "enabled_events": []string{"*"}}})
		}
		res := create(test, "test.example.com")
		want(t, res, http.StatusCreated)
		testID := res.data()["id"].(string)
		want(t, create(live, "live.example.com"), http.StatusCreated)
		for _, key := range []string{test, live} {
			res := create(key, "third.example.com")
			want(t, res, http.StatusForbidden, "plan_limit_reached")
			if msg := res.errField("message"); !strings.Contains(msg, "2 webhook endpoints") || !strings.Contains(msg, "test and live together") {
				t.Fatalf("refusal says %q", msg)
			}
		}
		// Another application of the same developer shares the count.
		var other *rental.Application
		if err := e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
			other, err = tx.CreateApplication(t.Context(), store.ApplicationSpec{DeveloperID: f.Developer.ID, Name: "Other", Company: "Co", Scopes: rental.AllScopes})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		otherKey := h.testKey(storetest.Fixture{Developer: f.Developer, App: other})
		want(t, create(otherKey, "other.example.com"), http.StatusForbidden, "plan_limit_reached")
		// Deleting an endpoint of one mode frees a place for the other.
		want(t, h.do(req{key: test, method: "DELETE", path: "/v1/webhook-endpoints/" + testID}), http.StatusNoContent)
		want(t, create(live, "second-live.example.com"), http.StatusCreated)
		want(t, create(otherKey, "other.example.com"), http.StatusForbidden, "plan_limit_reached")
	})
}

// A month of activity reaches the endpoint: every event listed by the
// events API arrives, signed and with every header, at least once; an
// endpoint subscribed to one type gets only that type; a live endpoint
// gets nothing from the sandbox.
func TestWebhookDeliversTheMonth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := webhookHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		all := newReceiver(t, e.Clock.Now)
		bills := newReceiver(t, e.Clock.Now)
		liveRc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(key, all)
		h.createEndpoint(key, bills, "bill.created")
		f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		h.createEndpoint(h.liveKey(f, ""), liveRc)

		do := func(method, path string, body any) map[string]any {
			t.Helper()
			res := h.do(req{key: key, method: method, path: path, body: body})
			if res.status >= 300 {
				t.Fatalf("%s %s: %d %s", method, path, res.status, res.body)
			}
			return res.data()
		}
		prop := do("POST", "/v1/properties", map[string]any{"name": "Baan Webhook", "electricity_rate": 800, "water_rate": 1800, "due_day": 5})
		for i := range 4 {
			room := do("POST", "/v1/properties/"+prop["id"].(string)+"/rooms", map[string]any{"number": "W" + strconv.Itoa(i), "monthly_rent": 350000})
			rid := room["id"].(string)
			do("POST", "/v1/rooms/"+rid+"/tenant", map[string]any{"name": "Tenant " + strconv.Itoa(i), "phone": "0812345678"})
			for m, month := range []string{"2026-10", "2026-11"} {
				do("POST", "/v1/meter-readings", map[string]any{"room_id": rid, "month": month,
					"electricity": map[string]any{"previous": 100 * m, "current": 100*m + 90}, "water": map[string]any{"previous": 10 * m, "current": 10*m + 6}})
				do("POST", "/v1/bills", map[string]any{"room_id": rid, "month": month})
			}
		}
		do("PATCH", "/v1/properties/"+prop["id"].(string), map[string]any{"name": "Baan Webhook 2"})

		var listed []string
		path := "/v1/events?limit=100"
		for {
			res := h.do(req{key: key, method: "GET", path: path})
			for _, ev := range res.json()["data"].([]any) {
				listed = append(listed, ev.(map[string]any)["id"].(string))
			}
			pg := res.json()["pagination"].(map[string]any)
			if pg["has_more"] != true {
				break
			}
			path = "/v1/events?limit=100&cursor=" + pg["next_cursor"].(string)
		}
		if len(listed) < 25 {
			t.Fatalf("only %d events", len(listed))
		}
		if parked := h.settleDeliveries(); len(parked) != 0 {
			t.Fatalf("%d deliveries wait for a retry", len(parked))
		}
		got := all.events()
		for _, id := range listed {
			if got[id] == 0 {
				t.Errorf("event %s never arrived", id)
			}
		}
		// Bodies are the events as the API lists them.
		for _, r := range all.requests()[:3] {
			ev := h.do(req{key: key, method: "GET", path: "/v1/events/" + r.event})
			var a, b any
			json.Unmarshal(r.body, &a)
			json.Unmarshal(ev.body, &b)
			if !jsonEqual(a, b.(map[string]any)["data"]) {
				t.Fatalf("delivered %s\nlisted %s", r.body, ev.body)
			}
		}
		for _, r := range bills.requests() {
			if r.header.Get("X-Service-Event") != "bill.created" {
				t.Fatalf("the bill.created endpoint got %s", r.header.Get("X-Service-Event"))
			}
		}
		if n := len(bills.events()); n != 8 {
			t.Fatalf("%d bill.created events, want 8", n)
		}
		if n := len(liveRc.requests()); n != 0 {
			t.Fatalf("the live endpoint got %d sandbox events", n)
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// An endpoint receives an event only if the landlord granted the read
// scope of its type.
func TestWebhookNeedsTheLandlordsGrant(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := webhookHarness(t, e)
		f := h.fixture(rental.PlanPro)
		granted := slices.DeleteFunc(slices.Clone(rental.AllScopes), func(s rental.Scope) bool { return s == rental.ScopeRoomsRead })
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, granted)
		key := h.liveKey(f, acct.ID)
		rc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(h.liveKey(f, ""), rc)
		res := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Granted")})
		want(t, res, http.StatusCreated)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties/" + res.data()["id"].(string) + "/rooms",
			body: map[string]any{"number": "1", "monthly_rent": 100000}}), http.StatusCreated)
		want(t, h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + res.data()["id"].(string), body: map[string]any{"name": "Granted 2"}}), http.StatusOK)
		if parked := h.settleDeliveries(); len(parked) != 0 {
			t.Fatalf("%d deliveries wait for a retry", len(parked))
		}
		got := rc.requests()
		var types []string
		for _, r := range got {
			types = append(types, r.header.Get("X-Service-Event"))
		}
		if !slices.Equal(types, []string{"property.created", "property.updated"}) && !slices.Equal(types, []string{"property.updated", "property.created"}) {
			t.Fatalf("delivered %v; room.created needs rooms:read, which the landlord did not grant", types)
		}
	})
}

// The receiver fails twice and then takes the delivery: attempts 1 to 3
// are made on the schedule (1 minute, then 5), logged, and carry the
// byte-identical body. A resend delivers the same event again.
func TestWebhookRetriesOnSchedule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := webhookHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		rc := newReceiver(t, e.Clock.Now)
		rc.answers = []int{500, 503}
		ep := h.createEndpoint(key, rc, "property.created")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Retry")}), http.StatusCreated)
		rc.waitFor(1)
		deliveries := func() map[string]any {
			t.Helper()
			for range 100 { // the log is written just after the receiver answers
				res := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + ep["id"].(string) + "/deliveries"})
				want(t, res, http.StatusOK)
				list := res.json()["data"].([]any)
				if len(list) == 1 {
					d := list[0].(map[string]any)
					if d["attempt_count"] == float64(len(rc.requests())) {
						return d
					}
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatal("the delivery log does not show the attempt")
			return nil
		}
		d := deliveries()
		if d["status"] != "pending" || d["next_attempt_at"] == nil {
			t.Fatalf("after attempt 1: %v", d)
		}
		// The job is parked until the retry the log announces, and nothing
		// runs before the clock moves.
		parked := h.settleDeliveries()
		if len(parked) != 1 || parked[0].ScheduledAt.UTC().Format(time.RFC3339) != d["next_attempt_at"] {
			t.Fatalf("after attempt 1: %d jobs parked (%v), the log says next at %v", len(parked), parked, d["next_attempt_at"])
		}
		if n := len(rc.requests()); n != 1 {
			t.Fatalf("%d attempts before the clock moved", n)
		}
		e.Clock.Advance(time.Minute + 7*time.Second) // the gap plus its largest jitter
		h.settleDeliveries()
		rc.waitFor(2)
		deliveries()
		e.Clock.Advance(5*time.Minute + 31*time.Second)
		h.settleDeliveries()
		got := rc.waitFor(3)
		d = deliveries()
		if d["status"] != "succeeded" || d["next_attempt_at"] != nil {
			t.Fatalf("after attempt 3: %v", d)
		}
		attempts := d["attempts"].([]any)
		at := func(i int) time.Time {
			v, _ := time.Parse(time.RFC3339, attempts[i].(map[string]any)["attempted_at"].(string))
			return v
		}
		for i, code := range []float64{500, 503, 200} {
			a := attempts[i].(map[string]any)
			if a["attempt"] != float64(i+1) || a["status_code"] != code || a["error"] != nil {
				t.Fatalf("attempt %d: %v", i+1, a)
			}
			if got[i].header.Get("X-Service-Attempt") != strconv.Itoa(i+1) || string(got[i].body) != string(got[0].body) {
				t.Fatalf("request %d: attempt %s, body %s", i+1, got[i].header.Get("X-Service-Attempt"), got[i].body)
			}
			if got[i].header.Get("X-Service-Delivery-Id") != d["id"] {
				t.Fatalf("delivery ID %s", got[i].header.Get("X-Service-Delivery-Id"))
			}
		}
		if gap := at(1).Sub(at(0)); gap < time.Minute || gap > time.Minute+8*time.Second {
			t.Fatalf("gap 1→2 is %v, want 1 minute plus up to 10%%", gap)
		}
		if gap := at(2).Sub(at(1)); gap < 5*time.Minute || gap > 5*time.Minute+32*time.Second {
			t.Fatalf("gap 2→3 is %v, want 5 minutes plus up to 10%%", gap)
		}
		if !strings.Contains(attempts[0].(map[string]any)["response_body"].(string), "received") {
			t.Fatalf("response body not logged: %v", attempts[0])
		}
		// Resend: the same event and body again, as attempt 4.
		res := h.do(req{key: key, method: "POST", path: "/v1/webhook-deliveries/" + d["id"].(string) + "/resend"})
		want(t, res, http.StatusAccepted)
		again := rc.waitFor(4)[3]
		if again.event != got[0].event || string(again.body) != string(got[0].body) || again.header.Get("X-Service-Attempt") != "4" {
			t.Fatalf("resent %s attempt %s", again.body, again.header.Get("X-Service-Attempt"))
		}
		one := h.do(req{key: key, method: "GET", path: "/v1/webhook-deliveries/" + d["id"].(string)})
		want(t, one, http.StatusOK)
		filtered := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + ep["id"].(string) + "/deliveries?status=failed"})
		if len(filtered.json()["data"].([]any)) != 0 {
			t.Fatalf("failed deliveries %s", filtered.body)
		}
	})
}

// A receiver may answer anything: NUL bytes and invalid UTF-8 included.
// Each attempt is recorded with what can be kept of the answer (a NUL, and
// each run of invalid bytes, becomes U+FFFD), and the deliveries follow the retry schedule: one request
// per attempt, each retry parked for the time the log announces, success
// on the second attempt.
func TestWebhookReceiverAnswersAnything(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := webhookHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		rc := newReceiver(t, e.Clock.Now)
		rc.answers = []int{500, 500}
		rc.body = []byte("oops\x00\xff\xfe{\"nul\":\"\x00\"}")
		ep := h.createEndpoint(key, rc, "property.created")
		for _, name := range []string{"Nul One", "Nul Two"} {
			want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property(name)}), http.StatusCreated)
		}
		list := func(n int) []any {
			t.Helper()
			for range 100 { // the log is written just after the receiver answers
				res := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + ep["id"].(string) + "/deliveries"})
				want(t, res, http.StatusOK)
				data := res.json()["data"].([]any)
				done := len(data) == 2
				for _, d := range data {
					done = done && d.(map[string]any)["attempt_count"] == float64(n)
				}
				if done {
					return data
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatalf("the delivery log does not show attempt %d of both deliveries", n)
			return nil
		}
		rc.waitFor(2)
		first := list(1)
		parked := h.settleDeliveries()
		if n := len(rc.requests()); n != 2 {
			t.Fatalf("%d requests for 2 events before the clock moved", n)
		}
		if len(parked) != 2 {
			t.Fatalf("%d delivery jobs parked for their retry, want 2", len(parked))
		}
		next := map[string]bool{}
		for _, j := range parked {
			next[j.ScheduledAt.UTC().Format(time.RFC3339)] = true
		}
		for _, v := range first {
			d := v.(map[string]any)
			if d["status"] != "pending" || d["next_attempt_at"] == nil || !next[d["next_attempt_at"].(string)] {
				t.Fatalf("after attempt 1: %v; jobs parked until %v", d, next)
			}
			one := h.do(req{key: key, method: "GET", path: "/v1/webhook-deliveries/" + d["id"].(string)})
			want(t, one, http.StatusOK)
			a := one.data()["attempts"].([]any)[0].(map[string]any)
			if a["status_code"] != float64(500) || a["response_body"] != "oops\uFFFD\uFFFD{\"nul\":\"\uFFFD\"}" {
				t.Fatalf("attempt 1 recorded as %v", a)
			}
		}
		rc.mu.Lock()
		rc.body = []byte("\x00ok")
		rc.mu.Unlock()
		e.Clock.Advance(time.Minute + 7*time.Second) // the gap plus its largest jitter
		rc.waitFor(4)
		for _, v := range list(2) {
			d := v.(map[string]any)
			one := h.do(req{key: key, method: "GET", path: "/v1/webhook-deliveries/" + d["id"].(string)})
			want(t, one, http.StatusOK)
			a := one.data()["attempts"].([]any)[1].(map[string]any)
			if one.data()["status"] != "succeeded" || a["status_code"] != float64(200) || a["response_body"] != "\uFFFDok" {
				t.Fatalf("after attempt 2: %s", one.body)
			}
		}
		if parked := h.settleDeliveries(); len(parked) != 0 || len(rc.requests()) != 4 {
			t.Fatalf("%d jobs parked, %d requests after both succeeded", len(parked), len(rc.requests()))
		}
	})
}

// A delivery whose job runs out of runs without recording an attempt (here
// its endpoint's signing secret does not open: the jobs run under another
// server secret) ends failed, not pending with no job left to send it.
func TestWebhookDeliveryEndsWithItsJob(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.Guard, c.NoRateLimits = webhook.Guard{AllowLoopback: true}, true })
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		rc := newReceiver(t, e.Clock.Now)
		ep := h.createEndpoint(key, rc, "property.created")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Lost Secret")}), http.StatusCreated)
		other, err := secret.New("another-secret-another-secret-0123456789")
		if err != nil {
			t.Fatal(err)
		}
		h.sec = other
		h.runJobs(slog.New(slog.DiscardHandler), jobs.Options{})
		for range 300 {
			res := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + ep["id"].(string) + "/deliveries"})
			want(t, res, http.StatusOK)
			data := res.json()["data"].([]any)
			if len(data) == 1 && data[0].(map[string]any)["status"] == "failed" {
				if d := data[0].(map[string]any); d["next_attempt_at"] != nil || len(rc.requests()) != 0 {
					t.Fatalf("failed delivery %v after %d requests", d, len(rc.requests()))
				}
				return
			}
			h.settleDeliveries()
		}
		t.Fatalf("the delivery is still not failed once its job is over: %d jobs to run", len(h.settleDeliveries()))
	})
}

// After a rotation both secrets sign for 24 hours; then only the new one.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := webhookHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanPro))
		rc := newReceiver(t, e.Clock.Now)
		ep := h.createEndpoint(key, rc, "webhook.test") // rc.secrets = [old]
		rot := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + ep["id"].(string) + "/rotate-secret"})
		want(t, rot, http.StatusOK)
		rc.mu.Lock()
		rc.secrets = []string{rot.data()["secret"].(string), rc.secrets[0]} // [new, old]
		rc.mu.Unlock()
		test := func() received {
			t.Helper()
			n := len(rc.requests())
			want(t, h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + ep["id"].(string) + "/test"}), http.StatusAccepted)
			return rc.waitFor(n + 1)[n]
		}
		during := test()
		if !slices.Equal(during.verified, []int{0, 1}) {
			t.Fatalf("during the overlap: signatures verified by %v (want new, old): %s", during.verified, during.header.Get("X-Service-Signature"))
		}
		e.Clock.Advance(24*time.Hour + time.Minute)
		after := test()
		if !slices.Equal(after.verified, []int{0}) {
			t.Fatalf("after the overlap: signatures verified by %v (want only new): %s", after.verified, after.header.Get("X-Service-Signature"))
		}
	})
}

// A URL's host name is resolved when it is registered or changed: a name
// of a private or loopback address, or of none, is 400 invalid_url with
// the reason, and nothing is made or changed.
func TestWebhookURLResolvedAtRegistration(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		create := func(url string) *result {
			return h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: map[string]any{"url": url, "enabled_events": []string{"*"}}})
		}
		for url, says := range map[string]string{
			"https://private.example.com/hook":       "resolves to 10.0.0.5, which is not a public internet address",
			"https://loopback.example.com:8443/hook": "resolves to 127.0.0.1",
			"https://nowhere.example.com/hook":       "nowhere.example.com does not resolve",
		} {
			res := create(url)
			want(t, res, http.StatusBadRequest, "invalid_url")
			if res.errField("param") != "url" || !strings.Contains(res.errField("message"), says) {
				t.Errorf("%s: %s", url, res.body)
			}
		}
		list := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints"})
		if n := len(list.json()["data"].([]any)); n != 0 {
			t.Fatalf("%d endpoints made from refused URLs", n)
		}
		res := create("https://hooks.example.com/hook")
		want(t, res, http.StatusCreated)
		id := res.data()["id"].(string)
		patch := h.do(req{key: key, method: "PATCH", path: "/v1/webhook-endpoints/" + id, body: map[string]any{"url": "https://private.example.com/hook"}})
		want(t, patch, http.StatusBadRequest, "invalid_url")
		if got := h.do(req{key: key, method: "GET", path: "/v1/webhook-endpoints/" + id}).data()["url"]; got != "https://hooks.example.com/hook" {
			t.Fatalf("a refused change made the URL %v", got)
		}
		// With loopback receivers allowed, a name of a loopback address is
		// one, as the address itself is; a private one is still refused.
		lo := newHarness(t, e, func(c *api.Config) { c.Guard = webhook.Guard{AllowLoopback: true} })
		want(t, lo.do(req{key: lo.testKey(f), method: "POST", path: "/v1/webhook-endpoints",
			body: map[string]any{"url": "https://loopback.example.com/hook", "enabled_events": []string{"*"}}}), http.StatusCreated)
		want(t, lo.do(req{key: lo.testKey(f), method: "POST", path: "/v1/webhook-endpoints",
			body: map[string]any{"url": "https://private.example.com/hook", "enabled_events": []string{"*"}}}), http.StatusBadRequest, "invalid_url")
	})
}

// The lookup runs before the write's transaction: while a registration
// waits on a slow DNS server, other writes go on (on SQLite, one
// connection writes for the whole process).
func TestWebhookURLLookupHoldsNoWriter(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		entered, release := make(chan struct{}, 8), make(chan struct{})
		dns := webhooktest.Internet(t)
		slow := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return dns.Dial(ctx, network, addr)
		}}
		h := newHarness(t, e, func(c *api.Config) { c.Guard = webhook.Guard{Resolver: slow} })
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		done := make(chan *result, 1)
		go func() {
			res, err := h.send(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: map[string]any{"url": "https://hooks.example.com/hook", "enabled_events": []string{"*"}}})
			if err != nil {
				res = &result{body: []byte(err.Error())}
			}
			done <- res
		}()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the registration never asked DNS")
		}
		start := time.Now()
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Written meanwhile")}), http.StatusCreated)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("a write took %s while a registration waited on DNS", d)
		}
		close(release)
		if res := <-done; res.status != http.StatusCreated {
			t.Fatalf("registration: %d %s", res.status, res.body)
		}
	})
}
