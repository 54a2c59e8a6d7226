package api_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// secondServer is another process of the deployment: its own database
// handle over the same database and its own API server (its own meter).
func secondServer(t *testing.T, h *harness) *harness {
	t.Helper()
	db, err := store.Open(t.Context(), h.e.DSN, store.Options{Secret: storetest.Secret(t), Now: h.e.Clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := h.e
	e.DB = db
	two := newHarness(t, e, func(c *api.Config) { c.Secret = h.sec })
	two.sec = h.sec
	return two
}

// flush writes the server's counted requests to the database, as it does
// on its own within a second.
func (h *harness) flush() {
	h.t.Helper()
	if err := h.srv.Close(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

// billableLive makes n live requests that count, 100 ms apart on the
// clock (within the Free plan's 10 a second).
func (h *harness) billableLive(key string, n int) *result {
	h.t.Helper()
	var res *result
	for range n {
		h.e.Clock.Advance(100 * time.Millisecond)
		res = h.do(req{key: key, method: "GET", path: "/v1/properties"})
		if res.status != http.StatusOK {
			h.t.Fatalf("billable request: %d %s", res.status, res.body)
		}
	}
	return res
}

// The Free plan's 1,001st billable live request of the month is refused
// with 429 monthly_quota_exceeded until 00:00 on the 1st, Thailand time;
// 401s, 429s and test-mode requests on the way never count. A new month
// starts a new count.
func TestFreePlanMonthlyQuota(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanFree)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		live, test := h.liveKey(f, acct.ID), h.testKey(f)
		bad := "svc_live_" + strings.Repeat("Z", 40)
		var counted int64
		for i := range 10 {
			h.billableLive(live, 50)
			counted += 50
			// Not billable: an unknown key (401), test mode, and a burst
			// past the per-second limit (429 rate_limited; the burst's
			// own 200s count).
			if i < 5 {
				want(t, h.do(req{key: bad, method: "GET", path: "/v1/properties"}), 401, "invalid_api_key")
			}
			want(t, h.do(req{key: test, method: "GET", path: "/v1/properties"}), http.StatusOK)
			h.e.Clock.Advance(3 * time.Second)
			for limited := false; !limited; {
				switch res := h.do(req{key: live, method: "GET", path: "/v1/properties"}); res.status {
				case http.StatusOK:
					counted++
				case http.StatusTooManyRequests:
					want(t, res, http.StatusTooManyRequests, "rate_limited")
					limited = true
				default:
					t.Fatalf("burst: %d %s", res.status, res.body)
				}
			}
			h.e.Clock.Advance(3 * time.Second)
			if n := h.quotaUsed(live); n != counted {
				t.Fatalf("round %d: %d counted, want %d (the 200s only)", i, n, counted)
			}
		}
		h.billableLive(live, int(1000-counted))
		if used := h.quotaUsed(live); used != 1000 {
			t.Fatalf("%d counted, want 1000", used)
		}
		h.e.Clock.Advance(time.Second)
		res := h.do(req{key: live, method: "GET", path: "/v1/properties"})
		want(t, res, http.StatusTooManyRequests, "monthly_quota_exceeded")
		reset := time.Date(2026, 12, 1, 0, 0, 0, 0, rental.Bangkok)
		retry, _ := strconv.Atoi(res.header.Get("Retry-After"))
		if left := int(reset.Sub(e.Clock.Now()).Seconds()); retry < left || retry > left+2 {
			t.Fatalf("Retry-After %d, want about %d (until 00:00 on 1 December, Thailand)", retry, left)
		}
		if res.header.Get("X-Quota-Remaining") != "0" || res.header.Get("X-Quota-Reset") != strconv.FormatInt(reset.Unix(), 10) {
			t.Fatalf("quota headers %v", res.header)
		}
		// Test mode is unaffected; the refusals did not count.
		want(t, h.do(req{key: test, method: "GET", path: "/v1/properties"}), http.StatusOK)
		h.flush()
		first, last := rental.MonthDays(time.Date(2026, 11, 1, 0, 0, 0, 0, rental.Bangkok))
		if n, _ := e.DB.Read().UsageTotal(t.Context(), store.UsagePeriod{Developer: f.Developer.ID, Mode: rental.ModeLive, From: first, To: last}); n != 1000 {
			t.Fatalf("%d billable requests stored, want 1000", n)
		}
		// 00:00 on the 1st: a new month, a new count.
		e.Clock.Advance(reset.Sub(e.Clock.Now()))
		res = h.do(req{key: live, method: "GET", path: "/v1/properties"})
		want(t, res, http.StatusOK)
		if res.header.Get("X-Quota-Remaining") != "999" {
			t.Fatalf("X-Quota-Remaining %s on the 1st", res.header.Get("X-Quota-Remaining"))
		}
	})
}

// quotaUsed is the month's live count in the database once the server has
// flushed what it counted: the number the quota enforces.
func (h *harness) quotaUsed(key string) int64 {
	h.t.Helper()
	h.flush()
	owner, err := h.e.DB.Read().KeyByFingerprint(h.t.Context(), h.sec.Fingerprint(key), h.e.Clock.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	first, last := rental.MonthDays(rental.MonthStart(h.e.Clock.Now()))
	n, err := h.e.DB.Read().UsageTotal(h.t.Context(), store.UsagePeriod{Developer: owner.Developer.ID, Mode: rental.ModeLive, From: first, To: last})
	if err != nil {
		h.t.Fatal(err)
	}
	return n
}

// Two processes over one database share the Free plan's quota: what one
// counted, the other refuses past, within a second.
func TestMonthlyQuotaAcrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one := newHarness(t, e)
		two := secondServer(t, one)
		f := one.fixture(rental.PlanFree)
		live := one.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
		one.billableLive(live, 600)
		one.flush()
		res := two.billableLive(live, 400)
		if res.header.Get("X-Quota-Remaining") != "0" {
			t.Fatalf("X-Quota-Remaining %s after 1,000 across two processes", res.header.Get("X-Quota-Remaining"))
		}
		two.e.Clock.Advance(time.Second)
		want(t, two.do(req{key: live, method: "GET", path: "/v1/properties"}), http.StatusTooManyRequests, "monthly_quota_exceeded")
		two.flush()
		// The first process reads the total again within a second.
		time.Sleep(1100 * time.Millisecond)
		one.e.Clock.Advance(time.Second)
		want(t, one.do(req{key: live, method: "GET", path: "/v1/properties"}), http.StatusTooManyRequests, "monthly_quota_exceeded")
		if n := one.quotaUsed(live); n != 1000 {
			t.Fatalf("%d counted across two processes, want 1000", n)
		}
	})
}

// A paid plan past its included requests keeps serving (the quota headers
// say 0 remaining), and the month's invoice bills each started 1,000 extra
// requests at the plan's price, with the fee.
func TestPaidPlanPastQuotaIsBilled(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanDeveloper)
		live := h.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
		// 51,000 of the month's requests already made elsewhere.
		if _, err := e.DB.AddUsage(t.Context(), store.UsagePeriod{Developer: f.Developer.ID, Mode: rental.ModeLive, From: "2026-11-01", To: "2026-11-30"},
			map[store.UsageCell]int64{{Application: f.App.ID, Day: "2026-11-20"}: 51_000}); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			h.e.Clock.Advance(50 * time.Millisecond)
			res := h.do(req{key: live, method: "GET", path: "/v1/properties"})
			want(t, res, http.StatusOK)
			if res.header.Get("X-Quota-Remaining") != "0" || res.header.Get("X-Quota-Limit") != "50000" {
				t.Fatalf("quota headers %v", res.header)
			}
		}
		h.flush()
		e.Clock.Advance(time.Date(2026, 12, 1, 0, 0, 1, 0, rental.Bangkok).Sub(e.Clock.Now()))
		var inv *rental.Invoice
		err := e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
			inv, err = tx.CloseMonth(t.Context(), f.Developer.ID, "2026-11")
			return err
		})
		if err != nil || inv == nil {
			t.Fatalf("invoice %v (%v)", inv, err)
		}
		// 1,020 extra requests: two started thousands at 15 THB, and the fee.
		if len(inv.Lines) != 2 || inv.Lines[1].Quantity != 2 || inv.Lines[1].Amount != 30_00 || inv.Total != 490_00+30_00 {
			t.Fatalf("invoice lines %+v total %d", inv.Lines, inv.Total)
		}
		if inv.Number != "INV-2026-000001" || inv.Month != "2026-11" || inv.Status != rental.InvoiceOpen ||
			!inv.DueAt.Equal(inv.IssuedAt.AddDate(0, 0, 14)) {
			t.Fatalf("invoice %+v", inv)
		}
	})
}

// Changing plan changes the per-second limit at the next request on every
// process: an upgrade at once, a downgrade at 00:00 on the 1st.
func TestPlanChangeRateLimitHeaders(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one := newHarness(t, e)
		two := secondServer(t, one)
		f := one.fixture(rental.PlanFree)
		key := one.testKey(f)
		limit := func(h *harness) string {
			t.Helper()
			h.e.Clock.Advance(time.Second)
			return h.do(req{key: key, method: "GET", path: "/v1/account"}).header.Get("X-RateLimit-Limit")
		}
		change := func(to rental.DeveloperPlan) rental.PlanState {
			t.Helper()
			var st rental.PlanState
			if err := e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
				st, err = tx.ChangeDeveloperPlan(t.Context(), f.Developer.ID, to)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return st
		}
		if limit(one) != "20" || limit(two) != "20" {
			t.Fatal("the Free plan's burst is not 20")
		}
		change(rental.PlanPro)
		if limit(one) != "200" || limit(two) != "200" {
			t.Fatal("an upgrade to Pro is not seen at the next request")
		}
		st := change(rental.PlanDeveloper)
		if st.Pending != rental.PlanDeveloper || !st.PendingFrom.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, rental.Bangkok)) {
			t.Fatalf("downgrade %+v", st)
		}
		if limit(one) != "200" || limit(two) != "200" {
			t.Fatal("a downgrade took effect before the 1st")
		}
		e.Clock.Advance(time.Date(2026, 11, 30, 23, 59, 0, 0, rental.Bangkok).Sub(e.Clock.Now()))
		if limit(one) != "200" {
			t.Fatal("a downgrade took effect before the 1st")
		}
		e.Clock.Advance(time.Minute)
		if limit(one) != "60" || limit(two) != "60" {
			t.Fatal("the downgrade to Developer (burst 60) is not in effect on the 1st")
		}
	})
}

// An open invoice past its due time turns live requests into 402
// payment_required on every process, at once, no job needed; test mode is
// unaffected; paying it restores them at the next request.
func TestOverdueInvoicePaymentRequired(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one := newHarness(t, e)
		two := secondServer(t, one)
		f := one.fixture(rental.PlanPro)
		live, test := one.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID), one.testKey(f)
		e.Clock.Advance(time.Date(2026, 12, 1, 0, 0, 1, 0, rental.Bangkok).Sub(e.Clock.Now()))
		var inv *rental.Invoice
		if err := e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
			inv, err = tx.CloseMonth(t.Context(), f.Developer.ID, "2026-11")
			return err
		}); err != nil || inv == nil {
			t.Fatalf("invoice %v (%v)", inv, err)
		}
		for _, h := range []*harness{one, two} {
			want(t, h.do(req{key: live, method: "GET", path: "/v1/account"}), http.StatusOK)
		}
		e.Clock.Advance(inv.DueAt.Sub(e.Clock.Now()) + time.Second)
		for _, h := range []*harness{one, two} {
			want(t, h.do(req{key: live, method: "GET", path: "/v1/account"}), http.StatusPaymentRequired, "payment_required")
			want(t, h.do(req{key: test, method: "GET", path: "/v1/account"}), http.StatusOK)
		}
		if err := e.DB.InTx(t.Context(), func(tx *store.Tx) error { _, err := tx.PayInvoice(t.Context(), inv.Number); return err }); err != nil {
			t.Fatal(err)
		}
		for _, h := range []*harness{one, two} {
			want(t, h.do(req{key: live, method: "GET", path: "/v1/account"}), http.StatusOK)
		}
	})
}
