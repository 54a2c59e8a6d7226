package api_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// clockOf reads a sandbox's clock: its time and real time.
func clockOf(t *testing.T, h *harness, key string) (now, real time.Time) {
	t.Helper()
	res := h.do(req{key: key, method: "GET", path: "/v1/test-helpers/clock"})
	want(t, res, http.StatusOK)
	return parseTime(t, res.data()["now"]), parseTime(t, res.data()["real_now"])
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return at
}

// advance moves a sandbox's clock on by days and returns its new time.
func advance(t *testing.T, h *harness, key string, days int) time.Time {
	t.Helper()
	res := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"days": days}})
	want(t, res, http.StatusOK)
	if res.data()["object"] != "test_clock" {
		t.Fatalf("advance answered %s", res.body)
	}
	return parseTime(t, res.data()["now"])
}

// list reads a list endpoint's first page.
func list(t *testing.T, h *harness, key, path string) []map[string]any {
	t.Helper()
	res := h.do(req{key: key, method: "GET", path: path})
	want(t, res, http.StatusOK)
	var out []map[string]any
	for _, it := range res.json()["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// Every refusal of the clock's helpers is a clear 4xx naming the field,
// and a refused advance moves nothing.
func TestClockRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		now, real := clockOf(t, h, key)
		if !now.Equal(real) {
			t.Fatalf("a new sandbox's clock is at %v, real time %v", now, real)
		}
		p := newPayee(t, h, rental.LandlordStandard)
		want(t, h.do(req{key: p.key, method: "GET", path: "/v1/test-helpers/clock"}), http.StatusForbidden, "test_mode_only")
		want(t, h.do(req{key: p.key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"days": 1}}),
			http.StatusForbidden, "test_mode_only")
		far := real.Add(401 * 24 * time.Hour).Format(time.RFC3339)
		for _, tc := range []struct {
			name  string
			body  any
			code  string
			param string
		}{
			{"neither", map[string]any{}, "parameter_missing", "to"},
			{"both", map[string]any{"days": 1, "to": real.Add(48 * time.Hour).Format(time.RFC3339)}, "invalid_parameter", "days"},
			{"days as a string", `{"days": "3"}`, "invalid_parameter", "days"},
			{"days with a fraction", `{"days": 1.5}`, "invalid_parameter", "days"},
			{"zero days", map[string]any{"days": 0}, "invalid_parameter", "days"},
			{"401 days", map[string]any{"days": 401}, "invalid_parameter", "days"},
			{"to not a time", map[string]any{"to": "next tuesday"}, "invalid_parameter", "to"},
			{"to a number", `{"to": 1764000000}`, "invalid_parameter", "to"},
			{"to 401 days ahead", map[string]any{"to": far}, "invalid_parameter", "to"},
			{"an unknown field", map[string]any{"hours": 3}, "invalid_parameter", "hours"},
		} {
			res := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: tc.body})
			want(t, res, http.StatusBadRequest, tc.code)
			if got := res.errField("param"); got != tc.param {
				t.Errorf("%s: param %q, want %q", tc.name, got, tc.param)
			}
		}
		res := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance",
			body: map[string]any{"to": real.Add(-time.Hour).Format(time.RFC3339)}})
		want(t, res, http.StatusConflict, "invalid_state")
		if now, real := clockOf(t, h, key); !now.Equal(real) {
			t.Fatalf("refused advances moved the clock to %v (real %v)", now, real)
		}

		// Any scope will do; the same Idempotency-Key moves it once (an
		// hour: the key's 24 hours are the sandbox's too, see README).
		reader := h.testKey(f, rental.ScopeBillsRead)
		idem := []string{"Idempotency-Key: clock-1"}
		body := map[string]any{"to": real.Add(time.Hour).Format(time.RFC3339)}
		first := h.do(req{key: reader, method: "POST", path: "/v1/test-helpers/clock/advance", body: body, headers: idem})
		want(t, first, http.StatusOK)
		again := h.do(req{key: reader, method: "POST", path: "/v1/test-helpers/clock/advance", body: body, headers: idem})
		want(t, again, http.StatusOK)
		if again.header.Get("Idempotent-Replayed") != "true" || again.data()["now"] != first.data()["now"] {
			t.Fatalf("replay %s %s; first %s", again.header.Get("Idempotent-Replayed"), again.body, first.body)
		}
		advance(t, h, reader, 2)
		now, real = clockOf(t, h, key)
		if d := now.Sub(real); d < 49*time.Hour-time.Second || d > 49*time.Hour+time.Second {
			t.Fatalf("after two days and an hour the clock is %v ahead", d)
		}
		// Back to the clock's own time is backwards; to a later time is fine.
		res = h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"to": now.Add(-time.Minute).Format(time.RFC3339)}})
		want(t, res, http.StatusConflict, "invalid_state")
		to := now.Add(72 * time.Hour).Truncate(time.Second)
		res = h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"to": to.Format(time.RFC3339)}})
		want(t, res, http.StatusOK)
		if got := parseTime(t, res.data()["now"]); !got.Equal(to) {
			t.Fatalf("advanced to %v, want %v", got, to)
		}
	})
}

// The story: a sandbox's bills fall overdue, its pending payment expires
// and its unreachable tenant's notice fails once the clock is advanced
// past them, before the advance answers, stamped at the sandbox's time;
// another sandbox and a live landlord are untouched; a reset returns the
// clock to real time.
func TestClockStory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		other := h.testKey(h.fixture(rental.PlanEnterprise))
		live := newPayee(t, h, rental.LandlordStandard)

		bills := issuedBills(t, h, key, 5)
		var unreachable map[string]any
		for _, tn := range list(t, h, key, "/v1/tenants") {
			if tn["name"] == store.UnreachableSandboxTenant {
				unreachable = tn
			}
		}
		var notice string
		for _, b := range bills {
			if b["tenant_id"] == unreachable["id"] {
				res := h.do(req{key: key, method: "POST", path: "/v1/notifications", body: map[string]any{"type": "new_bill", "bill_id": b["id"]},
					headers: []string{"Idempotency-Key: notice"}})
				want(t, res, http.StatusAccepted)
				notice = res.data()["id"].(string)
			}
		}
		if notice == "" {
			t.Fatal("no bill of the unreachable tenant")
		}
		pay := bills[0]["id"].(string)
		res := h.do(req{key: key, method: "POST", path: "/v1/bills/" + pay + "/payment-link"})
		if res.status != http.StatusCreated && res.status != http.StatusOK {
			t.Fatalf("payment link: %d %s", res.status, res.body)
		}
		if status, body := open(t, res.data()["url"].(string)); status != http.StatusOK {
			t.Fatalf("payment page: %d %s", status, body)
		}
		payments := list(t, h, key, "/v1/payments?bill_id="+pay)
		if len(payments) != 1 || payments[0]["status"] != rental.PaymentPending {
			t.Fatalf("payments %v", payments)
		}

		before, _ := clockOf(t, h, key)
		// The sample bills of this month fall due on the 5th and 10th of
		// the next.
		to := advance(t, h, key, 20)
		if d := to.Sub(before); d < 20*24*time.Hour-time.Second || d > 20*24*time.Hour+time.Second {
			t.Fatalf("twenty days moved the clock by %v", d)
		}
		// Everything that fell due happened before the advance answered.
		overdue := list(t, h, key, "/v1/bills?status=overdue&limit=100")
		if len(overdue) != len(bills) {
			t.Fatalf("%d bills overdue of %d", len(overdue), len(bills))
		}
		for _, b := range overdue {
			if at := parseTime(t, b["overdue_at"]); at.Before(to.Add(-time.Second)) || at.After(to.Add(time.Minute)) {
				t.Fatalf("bill overdue at %v; the sandbox's clock is at %v", at, to)
			}
		}
		events := list(t, h, key, "/v1/events?type=bill.overdue&limit=100")
		if len(events) != len(bills) {
			t.Fatalf("%d bill.overdue events for %d bills", len(events), len(bills))
		}
		for _, ev := range events {
			if at := parseTime(t, ev["created_at"]); at.Before(to.Add(-time.Second)) || at.After(to.Add(time.Minute)) {
				t.Fatalf("bill.overdue at %v; the sandbox's clock is at %v", at, to)
			}
		}
		if p := list(t, h, key, "/v1/payments?bill_id="+pay); p[0]["status"] != rental.PaymentExpired {
			t.Fatalf("the pending payment is %v after twenty days", p[0]["status"])
		}
		if n := len(list(t, h, key, "/v1/events?type=payment.failed")); n != 1 {
			t.Fatalf("%d payment.failed events", n)
		}
		res = h.do(req{key: key, method: "GET", path: "/v1/notifications/" + notice})
		if res.data()["status"] != rental.NotificationFailed || res.data()["attempts"] != float64(rental.MaxSendAttempts) {
			t.Fatalf("the unreachable tenant's notice after twenty days: %s", res.body)
		}
		if n := len(list(t, h, key, "/v1/events?type=notification.failed")); n != 1 {
			t.Fatalf("%d notification.failed events", n)
		}
		// A write now is stamped at the sandbox's time too.
		created := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Later")})
		want(t, created, http.StatusCreated)
		if at := parseTime(t, created.data()["created_at"]); at.Before(to) {
			t.Fatalf("a property created at %v; the sandbox's clock is past %v", at, to)
		}

		// Another sandbox, and live mode, are untouched.
		if n := len(list(t, h, other, "/v1/bills?status=overdue")); n != 0 {
			t.Fatalf("another sandbox has %d overdue bills", n)
		}
		if n := len(list(t, h, other, "/v1/events")); n != 0 {
			t.Fatalf("another sandbox has %d events", n)
		}
		if now, real := clockOf(t, h, other); !now.Equal(real) {
			t.Fatalf("another sandbox's clock is at %v (real %v)", now, real)
		}
		res = h.do(req{key: live.key, method: "GET", path: "/v1/bills/" + live.bill})
		if res.data()["status"] != rental.BillIssued {
			t.Fatalf("a live bill is %v", res.data()["status"])
		}

		// A reset returns the clock to real time.
		want(t, h.do(req{key: key, method: "POST", path: "/v1/test-helpers/sandbox/reset"}), http.StatusOK)
		if now, real := clockOf(t, h, key); !now.Equal(real) {
			t.Fatalf("after a reset the clock is at %v, real time %v", now, real)
		}
		created = h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("After reset")})
		want(t, created, http.StatusCreated)
		if at := parseTime(t, created.data()["created_at"]); at.After(to.Add(-48 * time.Hour)) {
			t.Fatalf("a property created after the reset at %v", at)
		}
	})
}

// Two processes over one PostgreSQL database advance the same sandbox at
// once while the overdue sweep runs too: each bill turns overdue, with its
// event, exactly once.
func TestClockTwoProcesses(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	a := newHarness(t, e)
	second := e.Another(t)
	db := second.DB
	b := newHarness(t, second)
	key := a.testKey(a.fixture(rental.PlanEnterprise))
	bills := issuedBills(t, a, key, 5)
	var wg sync.WaitGroup
	for i, h := range []*harness{a, b, a, b} {
		wg.Go(func() {
			res, err := h.send(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"days": 20 + i}})
			if err != nil || res.status != http.StatusOK {
				t.Errorf("advance: %v %v", res, err)
			}
		})
	}
	wg.Go(func() {
		if _, err := jobs.SweepOverdue(t.Context(), db); err != nil {
			t.Errorf("sweep: %v", err)
		}
	})
	wg.Wait()
	seen := map[any]int{}
	for _, ev := range list(t, a, key, "/v1/events?type=bill.overdue&limit=100") {
		seen[ev["data"].(map[string]any)["object"].(map[string]any)["id"]]++
	}
	if len(seen) != len(bills) {
		t.Fatalf("%d bills got bill.overdue, want %d", len(seen), len(bills))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("bill %v: %d bill.overdue events", id, n)
		}
	}
	now, real := clockOf(t, b, key)
	if d := now.Sub(real); d < 86*24*time.Hour-time.Minute || d > 86*24*time.Hour+time.Minute {
		t.Fatalf("four advances of 20 to 23 days moved the clock %v", d)
	}
}

// A sandbox slip whose provider never answers (test_provider_unavailable)
// ends rejected with provider_unavailable once an advance passes its whole
// retry schedule, before the advance answers, with its slip.rejected
// event; a slip filed after the advance stays pending.
func TestClockEndsFailingSlips(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		bills := list(t, h, key, "/v1/bills?status=issued")
		if len(bills) == 0 {
			t.Fatal("the sandbox has no issued bill")
		}
		bill := bills[0]["id"].(string)
		res := fileSlip(h, key, bill, map[string]any{"qr_payload": "test_provider_unavailable"})
		want(t, res, http.StatusAccepted)
		failing := res.data()["id"].(string)
		advanced := advance(t, h, key, 1)
		res = h.do(req{key: key, method: "GET", path: "/v1/slips/" + failing})
		want(t, res, http.StatusOK)
		if s := res.data(); s["status"] != "rejected" || s["rejection_reason"] != "provider_unavailable" {
			t.Fatalf("after the advance the slip is %v, want rejected provider_unavailable", s)
		}
		var rejected []map[string]any
		for _, ev := range list(t, h, key, "/v1/events?type=slip.rejected") {
			if ev["data"].(map[string]any)["object"].(map[string]any)["id"] == failing {
				rejected = append(rejected, ev)
			}
		}
		if len(rejected) != 1 {
			t.Fatalf("%d slip.rejected events for the slip, want 1", len(rejected))
		}
		if at := parseTime(t, rejected[0]["created_at"]); at.Before(advanced.Add(-time.Minute)) {
			t.Errorf("slip.rejected at %v, before the sandbox's time %v", at, advanced)
		}
		res = fileSlip(h, key, bill, map[string]any{"qr_payload": "test_provider_unavailable"})
		want(t, res, http.StatusAccepted)
		fresh := res.data()["id"].(string)
		res = h.do(req{key: key, method: "GET", path: "/v1/slips/" + fresh})
		if s := res.data(); s["status"] != "pending" {
			t.Fatalf("a slip filed after the advance is %v, want pending until its schedule runs out", s)
		}
	})
}
