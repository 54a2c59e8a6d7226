package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/promptpay"
	"rentapi/internal/promptpay/promptpaytest"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/webhook"
)

// payee is a real landlord linked to an application, with a PromptPay
// receiver and one issued bill, reached with a bound live key.
type payee struct {
	app     storetest.Fixture
	key     string
	acct    *rental.Account
	bill    string
	total   int64
	reading string
}

func newPayee(t *testing.T, h *harness, plan rental.LandlordPlan) payee {
	t.Helper()
	f := h.fixture(rental.PlanPro)
	acct := f.LinkLandlord(t, h.e.DB, plan, f.App.Scopes)
	err := h.e.DB.InTx(t.Context(), func(tx *store.Tx) error {
		_, err := tx.SetPromptPay(t.Context(), acct.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "081-234-5678"}, "")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p := payee{app: f, key: h.liveKey(f, acct.ID), acct: acct}
	do := func(path string, body any) map[string]any {
		t.Helper()
		res := h.do(req{key: p.key, method: "POST", path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
		want(t, res, http.StatusCreated)
		return res.data()
	}
	prop := do("/v1/properties", map[string]any{"name": "Baan Suk", "electricity_rate": 800, "water_rate": 1800, "due_day": 5})
	room := do("/v1/properties/"+prop["id"].(string)+"/rooms", map[string]any{"number": "204", "monthly_rent": 350000})["id"].(string)
	do("/v1/rooms/"+room+"/tenant", map[string]any{"name": "Malee Sukjai", "phone": "0812345678"})
	p.reading = do("/v1/meter-readings", map[string]any{"room_id": room, "month": "2026-11",
		"electricity": map[string]any{"previous": 1000, "current": 1100}, "water": map[string]any{"previous": 50, "current": 55}})["id"].(string)
	bill := do("/v1/bills", map[string]any{"room_id": room, "month": "2026-11"})
	p.bill, p.total = bill["id"].(string), int64(bill["total"].(float64))
	return p
}

// link makes (or gets) the bill's payment link and returns its URL.
func (p payee) link(t *testing.T, h *harness) string {
	t.Helper()
	res := h.do(req{key: p.key, method: "POST", path: "/v1/bills/" + p.bill + "/payment-link"})
	if res.status != http.StatusCreated && res.status != http.StatusOK {
		t.Fatalf("payment link: %d %s", res.status, res.body)
	}
	return res.data()["url"].(string)
}

// payments lists the bill's payments, newest first.
func (p payee) payments(t *testing.T, h *harness) []map[string]any {
	t.Helper()
	res := h.do(req{key: p.key, method: "GET", path: "/v1/payments?bill_id=" + p.bill})
	want(t, res, http.StatusOK)
	var out []map[string]any
	for _, it := range res.json()["data"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// open is a tenant's phone opening the payment page.
func open(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// confirmation is a provider's callback: the body and how it is signed.
type confirmation struct {
	provider, secret string
	at               time.Time
	body             string
	signature        string // replaces the computed header when set
}

func (h *harness) confirm(c confirmation) *result {
	h.t.Helper()
	if c.provider == "" {
		c.provider, c.secret = testProvider, testProviderSecret
	}
	ts := c.at.Unix()
	r, _ := http.NewRequest("POST", h.url+"/provider/v1/confirmations/"+c.provider, strings.NewReader(c.body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Provider-Timestamp", strconv.FormatInt(ts, 10))
	sig := webhook.SignatureHeader([]string{c.secret}, ts, []byte(c.body))
	if c.signature != "" {
		sig = c.signature
	}
	r.Header.Set("X-Provider-Signature", sig)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &result{status: resp.StatusCode, header: resp.Header, body: b}
}

func confirmationBody(txn, payment string, amount int64) string {
	b, _ := json.Marshal(map[string]any{"transaction_id": txn, "payment_id": payment, "amount": amount, "currency": "THB",
		"paid_at": "2026-11-22T03:00:00Z"})
	return string(b)
}

func count(t *testing.T, h *harness, acct *rental.Account, typ string) int {
	t.Helper()
	n, err := h.e.DB.Read().CountEvents(t.Context(), acct, typ)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// eventTypes lists the account's event types oldest first.
func eventTypes(t *testing.T, h *harness, key, filter string) []string {
	t.Helper()
	res := h.do(req{key: key, method: "GET", path: "/v1/events?order=asc&limit=100" + filter})
	want(t, res, http.StatusOK)
	var types []string
	for _, it := range res.json()["data"].([]any) {
		ev := it.(map[string]any)
		types = append(types, ev["type"].(string)+":"+fmt.Sprint(ev["data"].(map[string]any)["object"].(map[string]any)["status"]))
	}
	return types
}

func TestPaymentLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		bills := h.do(req{key: key, method: "GET", path: "/v1/bills?status=issued&limit=1"}).json()["data"].([]any)
		bill := bills[0].(map[string]any)
		path := "/v1/bills/" + bill["id"].(string) + "/payment-link"
		first := h.do(req{key: key, method: "POST", path: path})
		want(t, first, http.StatusCreated)
		l := first.data()
		if l["object"] != "payment_link" || l["active"] != true || l["amount"] != bill["total"] || l["currency"] != "THB" ||
			!strings.HasPrefix(l["url"].(string), h.url+"/pay/") || len(l["url"].(string)) != len(h.url)+5+32 {
			t.Fatalf("link %v", l)
		}
		again := h.do(req{key: key, method: "POST", path: path, body: map[string]any{}})
		want(t, again, http.StatusOK)
		if again.data()["id"] != l["id"] || again.data()["url"] != l["url"] {
			t.Fatalf("second link %v, first %v", again.data(), l)
		}
		// A paid bill (last month's samples are) has nothing to pay.
		paid := h.do(req{key: key, method: "GET", path: "/v1/bills?status=paid&limit=1"}).json()["data"].([]any)[0].(map[string]any)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills/" + paid["id"].(string) + "/payment-link"}), http.StatusConflict, "bill_not_payable")
		want(t, h.do(req{key: key, method: "POST", path: path, body: map[string]any{"amount": 1}}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: h.testKey(f, rental.ScopePaymentsRead), method: "POST", path: path}), http.StatusForbidden, "insufficient_scope")
		// Another application's key may filter by the bill.
		other := h.testKey(h.fixture(rental.PlanPro))
		want(t, h.do(req{key: other, method: "GET", path: "/v1/payments?bill_id=" + bill["id"].(string)}), http.StatusOK)
		// A draft bill is not payable either.
		live := newPayee(t, h, rental.LandlordStandard)
		room := h.do(req{key: live.key, method: "GET", path: "/v1/rooms"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		h.do(req{key: live.key, method: "POST", path: "/v1/meter-readings", body: map[string]any{"room_id": room, "month": "2026-12",
			"electricity": map[string]any{"current": 1200}, "water": map[string]any{"current": 60}}})
		draft := h.do(req{key: live.key, method: "POST", path: "/v1/bills", body: map[string]any{"room_id": room, "month": "2026-12", "issue": false}}).data()
		want(t, h.do(req{key: live.key, method: "POST", path: "/v1/bills/" + draft["id"].(string) + "/payment-link"}), http.StatusConflict, "bill_not_payable")
		// A free-plan landlord takes no QR payments.
		free := newPayee(t, h, rental.LandlordFree)
		want(t, h.do(req{key: free.key, method: "POST", path: "/v1/bills/" + free.bill + "/payment-link"}), http.StatusConflict, "bill_not_payable")
	})
}

func TestSimulatedPayments(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		issued := issuedBills(t, h, key, 4)
		simulate := func(body map[string]any, status int, code ...string) map[string]any {
			t.Helper()
			res := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/payments", body: body})
			want(t, res, status, code...)
			return res.data()
		}
		// The sample payments were made (and the sample bills paid) minutes before now.
		since := "&created_after=" + e.Clock.Now().Add(-time.Minute).Format(time.RFC3339)

		// Paid in full: pending, paid, and the bill paid, in that order.
		full := issued[0]
		p := simulate(map[string]any{"bill_id": full["id"], "outcome": "paid"}, http.StatusOK)
		if p["object"] != "payment" || p["status"] != "paid" || p["amount"] != full["total"] || p["amount_paid"] != full["total"] ||
			p["paid_at"] == nil || p["payment_link_id"] == nil || !strings.HasPrefix(p["qr_payload"].(string), "000201") {
			t.Fatalf("payment %v", p)
		}
		if got := eventTypes(t, h, key, since); fmt.Sprint(got) != "[payment.pending:pending payment.paid:paid bill.updated:paid]" {
			t.Fatalf("events %v", got)
		}
		bill := h.do(req{key: key, method: "GET", path: "/v1/bills/" + full["id"].(string)}).data()
		if bill["status"] != "paid" || bill["amount_paid"] != full["total"] || bill["paid_at"] == nil {
			t.Fatalf("bill %v", bill)
		}
		want(t, h.do(req{key: key, method: "GET", path: "/v1/payments/" + p["id"].(string)}), http.StatusOK)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills/" + full["id"].(string) + "/payment-link"}), http.StatusConflict, "bill_not_payable")
		simulate(map[string]any{"bill_id": full["id"], "outcome": "paid"}, http.StatusConflict, "bill_not_payable")

		// A part, then the rest: paid only after the second.
		part := issued[1]
		total := int64(part["total"].(float64))
		p1 := simulate(map[string]any{"bill_id": part["id"], "outcome": "paid", "amount_paid": 100000}, http.StatusOK)
		if p1["status"] != "paid" || p1["amount_paid"] != 100000.0 || p1["amount"] != part["total"] {
			t.Fatalf("partial payment %v", p1)
		}
		bill = h.do(req{key: key, method: "GET", path: "/v1/bills/" + part["id"].(string)}).data()
		if bill["status"] != "issued" || bill["amount_paid"] != 100000.0 {
			t.Fatalf("partly paid bill %v", bill)
		}
		p2 := simulate(map[string]any{"bill_id": part["id"], "outcome": "paid"}, http.StatusOK)
		if p2["id"] == p1["id"] || p2["amount"] != float64(total-100000) || p2["amount_paid"] != float64(total-100000) {
			t.Fatalf("second payment %v", p2)
		}
		bill = h.do(req{key: key, method: "GET", path: "/v1/bills/" + part["id"].(string)}).data()
		if bill["status"] != "paid" || bill["amount_paid"] != float64(total) {
			t.Fatalf("bill after the rest %v", bill)
		}

		// Ending unpaid.
		for i, outcome := range []string{"expired", "canceled"} {
			b := issued[2+i]
			p := simulate(map[string]any{"bill_id": b["id"], "outcome": outcome}, http.StatusOK)
			if p["status"] != outcome || p["amount_paid"] != 0.0 || p["failure_reason"] == nil || p["paid_at"] != nil {
				t.Fatalf("%s payment %v", outcome, p)
			}
			if bill := h.do(req{key: key, method: "GET", path: "/v1/bills/" + b["id"].(string)}).data(); bill["status"] != "issued" {
				t.Fatalf("bill after %s %v", outcome, bill)
			}
		}
		failed := eventTypes(t, h, key, "&type=payment.failed")
		if fmt.Sprint(failed) != "[payment.failed:expired payment.failed:canceled]" {
			t.Fatalf("payment.failed events %v", failed)
		}
		for filter, n := range map[string]int{"status=paid": 3, "status=expired": 1, "status=canceled": 1, "bill_id=" + part["id"].(string): 2} {
			res := h.do(req{key: key, method: "GET", path: "/v1/payments?" + filter + since})
			// The sample payments of last month were made before since.
			if got := len(res.json()["data"].([]any)); got != n {
				t.Errorf("payments?%s: %d, want %d", filter, got, n)
			}
		}

		// Bad requests.
		b := issued[4]["id"]
		simulate(map[string]any{"outcome": "paid"}, http.StatusBadRequest, "parameter_missing")
		simulate(map[string]any{"bill_id": b}, http.StatusBadRequest, "parameter_missing")
		simulate(map[string]any{"bill_id": b, "outcome": "refunded"}, http.StatusBadRequest, "invalid_parameter")
		simulate(map[string]any{"bill_id": b, "outcome": "expired", "amount_paid": 100}, http.StatusBadRequest, "invalid_parameter")
		simulate(map[string]any{"bill_id": b, "outcome": "paid", "amount_paid": 0}, http.StatusBadRequest, "invalid_parameter")
		simulate(map[string]any{"bill_id": b, "outcome": "paid", "amount_paid": "100"}, http.StatusBadRequest, "invalid_parameter")
		simulate(map[string]any{"bill_id": "bill_nosuchbill0000000000000", "outcome": "paid"}, http.StatusNotFound, "resource_not_found")
		live := newPayee(t, h, rental.LandlordStandard)
		want(t, h.do(req{key: live.key, method: "POST", path: "/v1/test-helpers/payments", body: map[string]any{"bill_id": live.bill, "outcome": "paid"}}),
			http.StatusForbidden, "test_mode_only")
	})
}

func TestProviderConfirmations(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		url := p.link(t, h)

		// The tenant opens the page: one pending payment, the same on reopening.
		status, page := open(t, url)
		if status != http.StatusOK || !strings.Contains(page, "Baan Suk") {
			t.Fatalf("page %d %s", status, page)
		}
		open(t, url)
		pays := p.payments(t, h)
		if len(pays) != 1 || pays[0]["status"] != "pending" || pays[0]["amount"] != float64(p.total) || pays[0]["payment_url"] != url {
			t.Fatalf("payments %v", pays)
		}
		pay := pays[0]["id"].(string)
		if n := count(t, h, p.acct, "payment.pending"); n != 1 {
			t.Fatalf("%d payment.pending", n)
		}

		// Refused, and nothing recorded.
		now := e.Clock.Now()
		good := confirmationBody("kb-txn-1", pay, p.total)
		for _, c := range []struct {
			name   string
			c      confirmation
			status int
			code   string
		}{
			{"bad signature", confirmation{at: now, body: good, signature: "sha256=" + strings.Repeat("0", 64)}, 401, "invalid_signature"},
			{"other secret", confirmation{provider: testProvider, secret: "another_secret_0123456789", at: now, body: good}, 401, "invalid_signature"},
			{"unknown provider", confirmation{provider: "scb", secret: testProviderSecret, at: now, body: good}, 401, "invalid_signature"},
			{"sandbox provider", confirmation{provider: rental.SandboxProvider, secret: testProviderSecret, at: now, body: good}, 401, "invalid_signature"},
			{"stale", confirmation{at: now.Add(-6 * time.Minute), body: good}, 401, "timestamp_out_of_tolerance"},
			{"future", confirmation{at: now.Add(6 * time.Minute), body: good}, 401, "timestamp_out_of_tolerance"},
			{"unknown payment", confirmation{at: now, body: confirmationBody("kb-txn-2", "pay_nosuchpayment000000000000", p.total)}, 404, "resource_not_found"},
			{"not JSON", confirmation{at: now, body: `{"transaction_id": "kb`}, 400, "invalid_json"},
			{"no amount", confirmation{at: now, body: `{"transaction_id":"kb-txn-3","payment_id":"` + pay + `","currency":"THB"}`}, 400, "parameter_missing"},
			{"zero amount", confirmation{at: now, body: confirmationBody("kb-txn-3", pay, 0)}, 400, "invalid_parameter"},
			{"dollars", confirmation{at: now, body: strings.Replace(good, "THB", "USD", 1)}, 400, "invalid_parameter"},
			{"unknown field", confirmation{at: now, body: strings.Replace(good, `"currency"`, `"fee":1,"currency"`, 1)}, 400, "invalid_parameter"},
		} {
			res := h.confirm(c.c)
			if res.status != c.status || res.code() != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, res.status, res.body, c.status, c.code)
			}
		}
		if got := p.payments(t, h)[0]; got["status"] != "pending" || got["amount_paid"] != 0.0 || count(t, h, p.acct, "payment.paid") != 0 {
			t.Fatalf("a refused confirmation changed the payment: %v", got)
		}

		// Twenty at once: one payment.paid, one bill.updated, counted once.
		var wg sync.WaitGroup
		results := make([]*result, 20)
		for i := range results {
			wg.Go(func() { results[i] = h.confirm(confirmation{at: now, body: good}) })
		}
		wg.Wait()
		fresh := 0
		for _, res := range results {
			want(t, res, http.StatusOK)
			if res.data()["duplicate"] == false {
				fresh++
			}
		}
		if fresh != 1 {
			t.Fatalf("%d confirmations recorded as new", fresh)
		}
		// The same confirmation an hour later, signed anew.
		e.Clock.Advance(time.Hour)
		replay := h.confirm(confirmation{at: e.Clock.Now(), body: good})
		want(t, replay, http.StatusOK)
		if replay.data()["duplicate"] != true || replay.data()["payment_status"] != "paid" {
			t.Fatalf("replay %s", replay.body)
		}
		if count(t, h, p.acct, "payment.paid") != 1 || count(t, h, p.acct, "bill.updated") != 1 {
			t.Fatalf("%d payment.paid, %d bill.updated", count(t, h, p.acct, "payment.paid"), count(t, h, p.acct, "bill.updated"))
		}
		got := p.payments(t, h)[0]
		bill := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill}).data()
		if got["status"] != "paid" || got["amount_paid"] != float64(p.total) || bill["status"] != "paid" || bill["amount_paid"] != float64(p.total) {
			t.Fatalf("after confirmations: payment %v bill %v", got, bill)
		}
		// The transaction ID is the provider's: reused for another amount, it is refused.
		want(t, h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("kb-txn-1", pay, 100)}), http.StatusConflict, "transaction_conflict")
		// A paid bill's page says so and shows no QR.
		if status, page := open(t, url); status != http.StatusOK || !strings.Contains(page, "This bill is paid") || strings.Contains(page, ".png") {
			t.Fatalf("paid page %d %s", status, page)
		}
	})
}

// A confirmation counts whatever happened to the payment or the landlord
// meanwhile: the money arrived.
func TestConfirmationsAlwaysRecorded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)

		// Expired first: the QR's 15 minutes pass and the sweep expires it.
		p := newPayee(t, h, rental.LandlordStandard)
		url := p.link(t, h)
		open(t, url)
		first := p.payments(t, h)[0]
		e.Clock.Advance(10 * time.Minute)
		open(t, url)
		if again := p.payments(t, h); len(again) != 1 {
			t.Fatalf("reopened within 15 minutes: %d payments", len(again))
		}
		e.Clock.Advance(6 * time.Minute)
		if n, err := jobs.SweepExpiredPayments(t.Context(), e.DB); n != 1 || err != nil {
			t.Fatalf("expired %d (%v)", n, err)
		}
		if n, _ := jobs.SweepExpiredPayments(t.Context(), e.DB); n != 0 {
			t.Fatalf("expired %d more on a second sweep", n)
		}
		if got := eventTypes(t, h, p.key, "&type=payment.*"); fmt.Sprint(got) != "[payment.pending:pending payment.failed:expired]" {
			t.Fatalf("events %v", got)
		}
		res := h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("late-1", first["id"].(string), p.total)})
		want(t, res, http.StatusOK)
		if res.data()["payment_status"] != "paid" {
			t.Fatalf("late confirmation %s", res.body)
		}
		if bill := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill}).data(); bill["status"] != "paid" {
			t.Fatalf("bill %v", bill)
		}

		// After expiry the page makes a new QR; and a landlord who moves to
		// the free plan gets no new one, but a confirmation still counts.
		q := newPayee(t, h, rental.LandlordPro)
		url = q.link(t, h)
		open(t, url)
		e.Clock.Advance(16 * time.Minute)
		open(t, url)
		pays := q.payments(t, h)
		if len(pays) != 2 || pays[0]["status"] != "pending" || pays[1]["status"] != "expired" || pays[1]["failure_reason"] != "qr_expired" {
			t.Fatalf("after expiry %v", pays)
		}
		err := e.DB.InTx(t.Context(), func(tx *store.Tx) error {
			return tx.SetLandlordPlan(t.Context(), q.acct.LandlordID, rental.LandlordFree)
		})
		if err != nil {
			t.Fatal(err)
		}
		want(t, h.do(req{key: q.key, method: "POST", path: "/v1/bills/" + q.bill + "/payment-link"}), http.StatusConflict, "bill_not_payable")
		e.Clock.Advance(16 * time.Minute)
		if status, page := open(t, url); status != http.StatusOK || !strings.Contains(page, "does not take QR payments") || strings.Contains(page, ".png") {
			t.Fatalf("free plan page %d %s", status, page)
		}
		if n := len(q.payments(t, h)); n != 2 {
			t.Fatalf("the free plan page made a payment: %d", n)
		}
		res = h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("free-1", pays[0]["id"].(string), 1000)})
		want(t, res, http.StatusOK)
		bill := h.do(req{key: q.key, method: "GET", path: "/v1/bills/" + q.bill}).data()
		if res.data()["payment_status"] != "paid" || bill["amount_paid"] != 1000.0 || bill["status"] != "issued" {
			t.Fatalf("free plan confirmation %s, bill %v", res.body, bill)
		}
	})
}

// Correcting the reading changes what is owed: a pending QR for the old
// amount is canceled, and the page makes one for the new.
func TestRecalculatedBillCancelsItsQR(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		url := p.link(t, h)
		open(t, url)
		res := h.do(req{key: p.key, method: "PATCH", path: "/v1/meter-readings/" + p.reading, body: map[string]any{"electricity": map[string]any{"current": 1110}}})
		want(t, res, http.StatusOK)
		pays := p.payments(t, h)
		if len(pays) != 1 || pays[0]["status"] != "canceled" || pays[0]["failure_reason"] != "bill_amount_changed" {
			t.Fatalf("after the correction %v", pays)
		}
		open(t, url)
		pays = p.payments(t, h)
		if len(pays) != 2 || pays[0]["status"] != "pending" || pays[0]["amount"] != float64(p.total+8000) {
			t.Fatalf("after reopening %v (total was %d)", pays, p.total)
		}
		if got := eventTypes(t, h, p.key, "&type=payment.*"); fmt.Sprint(got) != "[payment.pending:pending payment.failed:canceled payment.pending:pending]" {
			t.Fatalf("events %v", got)
		}
	})
}

// The page and its QR image: found only by the token, with the browser
// protections, and the image decodes to the payment's payload.
func TestPaymentPage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	p := newPayee(t, h, rental.LandlordStandard)
	url := p.link(t, h)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for name, value := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
		"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
	} {
		if got := resp.Header.Get(name); got != value {
			t.Errorf("%s: %q, want %q", name, got, value)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	pay := p.payments(t, h)[0]
	img := "/pay/" + url[strings.LastIndex(url, "/")+1:] + "/" + pay["id"].(string) + ".png"
	for _, want := range []string{"ห้อง 204", "Room 204", "พฤศจิกายน 2569", "November 2026", "ค่าไฟฟ้า", "100 kWh × 8.00", img} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	resp, err = http.Get(h.url + img)
	if err != nil {
		t.Fatal(err)
	}
	png, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("QR image %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if got := promptpaytest.Scan(t, png); got != pay["qr_payload"] {
		t.Fatalf("the QR reads %q, the payment says %q", got, pay["qr_payload"])
	}
	for _, path := range []string{"/pay/" + strings.Repeat("a", 32), "/pay/" + strings.Repeat("a", 32) + "/" + pay["id"].(string) + ".png",
		img[:len(img)-4], "/pay/"} {
		if status, body := open(t, h.url+path); status != http.StatusNotFound || !strings.Contains(body, "not valid") && !strings.Contains(body, "<html") {
			t.Errorf("%s: %d", path, status)
		}
	}
	if status, _ := open(t, h.url+"/assets/site.css"); status != http.StatusOK {
		t.Errorf("stylesheet %d", status)
	}
}

// The edges of paying: a probe that must open nothing, money beyond what
// is owed, a total corrected below what was paid, a provider's clock and
// secret rotation, and a landlord who loses QR payments with a QR open.
func TestPaymentEdges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		url := p.link(t, h)

		// A HEAD (a chat app's link preview) answers like the page but opens no QR.
		for path, status := range map[string]int{url: http.StatusOK, h.url + "/pay/" + strings.Repeat("a", 32): http.StatusNotFound} {
			resp, err := http.Head(path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != status || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
				t.Fatalf("HEAD %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		if n := len(p.payments(t, h)); n != 0 || count(t, h, p.acct, "payment.pending") != 0 {
			t.Fatalf("HEAD opened %d payments", n)
		}

		// Most of it paid, with a paid_at before the QR existed: it counts
		// from the QR's creation. Two secrets signed it (the provider is
		// rolling its secret); the old one is unknown to us.
		open(t, url)
		first := p.payments(t, h)[0]
		body := confirmationBody("edge-1", first["id"].(string), p.total-500)
		body = strings.Replace(body, "2026-11-22T03:00:00Z", "1970-01-01T00:00:00Z", 1)
		now := e.Clock.Now()
		rolled := webhook.SignatureHeader([]string{"the_old_secret_0123456789", testProviderSecret}, now.Unix(), []byte(body))
		want(t, h.confirm(confirmation{at: now, body: body, signature: rolled}), http.StatusOK)
		if got := p.payments(t, h)[0]; got["paid_at"] != got["created_at"] || got["amount_paid"] != float64(p.total-500) {
			t.Fatalf("payment %v", got)
		}
		// A bad signature is refused before the timestamp is looked at, for
		// known and unknown providers alike.
		stale := now.Add(-time.Hour)
		want(t, h.confirm(confirmation{at: stale, body: body, signature: "sha256=" + strings.Repeat("0", 64)}), http.StatusUnauthorized, "invalid_signature")
		want(t, h.confirm(confirmation{provider: "scb", secret: testProviderSecret, at: stale, body: body}), http.StatusUnauthorized, "invalid_signature")

		// The page asks for the 500 satang left.
		open(t, url)
		rest := p.payments(t, h)[0]
		if rest["status"] != "pending" || rest["amount"] != 500.0 {
			t.Fatalf("second payment %v", rest)
		}
		// The reading is corrected down by 1 kWh (800 satang): what was paid
		// now covers the bill, which is paid; the QR for 500 is withdrawn.
		res := h.do(req{key: p.key, method: "PATCH", path: "/v1/meter-readings/" + p.reading, body: map[string]any{"electricity": map[string]any{"current": 1099}}})
		want(t, res, http.StatusOK)
		bill := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill}).data()
		if bill["status"] != "paid" || bill["total"] != float64(p.total-800) || bill["amount_paid"] != float64(p.total-500) || bill["paid_at"] == nil {
			t.Fatalf("bill after the correction %v", bill)
		}
		if got := p.payments(t, h)[0]; got["id"] != rest["id"] || got["status"] != "canceled" || got["failure_reason"] != "bill_already_paid" {
			t.Fatalf("the QR for 500 after the correction %v", got)
		}
		want(t, h.do(req{key: p.key, method: "POST", path: "/v1/bills/" + p.bill + "/payment-link"}), http.StatusConflict, "bill_not_payable")
		if status, page := open(t, url); status != http.StatusOK || !strings.Contains(page, "This bill is paid") || strings.Contains(page, ".png") {
			t.Fatalf("paid page %d %s", status, page)
		}
		// The tenant had scanned it anyway: the money is recorded, the bill
		// stays paid (once) and shows the overpayment.
		res = h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("edge-2", rest["id"].(string), 500)})
		want(t, res, http.StatusOK)
		after := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill}).data()
		if after["status"] != "paid" || after["amount_paid"] != float64(p.total) || after["paid_at"] != bill["paid_at"] {
			t.Fatalf("bill after the late confirmation %v", after)
		}
		if n := count(t, h, p.acct, "payment.paid"); n != 2 {
			t.Fatalf("%d payment.paid for two payments", n)
		}
		paid := eventTypes(t, h, p.key, "&type=bill.updated")
		if fmt.Sprint(paid) != "[bill.updated:issued bill.updated:paid bill.updated:paid]" {
			t.Fatalf("bill.updated events %v", paid)
		}

		// Filters at their edges: created_after inclusive, created_before exclusive.
		at, _ := time.Parse(time.RFC3339, first["created_at"].(string))
		for filter, n := range map[string]int{
			"created_after=" + at.Format(time.RFC3339):                        2,
			"created_after=" + at.Add(time.Second).Format(time.RFC3339):       0,
			"created_before=" + at.Format(time.RFC3339):                       0,
			"created_before=" + at.Add(time.Second).Format(time.RFC3339):      2,
			"created_after=" + at.Format(time.RFC3339) + "&status=canceled":   0,
			"created_after=" + at.Format(time.RFC3339) + "&bill_id=" + p.bill: 2,
		} {
			res := h.do(req{key: p.key, method: "GET", path: "/v1/payments?" + filter})
			want(t, res, http.StatusOK)
			if got := len(res.json()["data"].([]any)); got != n {
				t.Errorf("payments?%s: %d, want %d", filter, got, n)
			}
		}

		// Another application lists none of it.
		other := h.testKey(h.fixture(rental.PlanPro))
		if res := h.do(req{key: other, method: "GET", path: "/v1/payments?bill_id=" + p.bill}); len(res.json()["data"].([]any)) != 0 {
			t.Fatalf("another application lists %s", res.body)
		}

		// A landlord moved to the free plan: an open QR's image is gone too.
		q := newPayee(t, h, rental.LandlordStandard)
		qurl := q.link(t, h)
		open(t, qurl)
		img := qurl + "/" + q.payments(t, h)[0]["id"].(string) + ".png"
		if status, _ := open(t, img); status != http.StatusOK {
			t.Fatalf("QR image %d", status)
		}
		err := e.DB.InTx(t.Context(), func(tx *store.Tx) error {
			return tx.SetLandlordPlan(t.Context(), q.acct.LandlordID, rental.LandlordFree)
		})
		if err != nil {
			t.Fatal(err)
		}
		if status, _ := open(t, img); status != http.StatusNotFound {
			t.Fatalf("QR image on the free plan %d", status)
		}
	})
}

// The test helper is the tenant and the provider: a QR the tenant has
// already opened is the one it pays (no second payment.pending), and an
// expiry it simulates happens now.
func TestSimulatedPaymentUsesTheOpenQR(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanPro))
		bills := h.do(req{key: key, method: "GET", path: "/v1/bills?status=issued&limit=2"}).json()["data"].([]any)
		bill := bills[0].(map[string]any)["id"].(string)
		link := h.do(req{key: key, method: "POST", path: "/v1/bills/" + bill + "/payment-link"}).data()
		open(t, link["url"].(string))
		opened := h.do(req{key: key, method: "GET", path: "/v1/payments?bill_id=" + bill}).json()["data"].([]any)
		paid := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/payments", body: map[string]any{"bill_id": bill, "outcome": "paid"}})
		want(t, paid, http.StatusOK)
		if len(opened) != 1 || paid.data()["id"] != opened[0].(map[string]any)["id"] || paid.data()["status"] != "paid" {
			t.Fatalf("opened %v, paid %s", opened, paid.body)
		}
		since := "&created_after=" + e.Clock.Now().Add(-time.Minute).Format(time.RFC3339)
		if got := eventTypes(t, h, key, since+"&type=payment.*"); fmt.Sprint(got) != "[payment.pending:pending payment.paid:paid]" {
			t.Fatalf("events %v", got)
		}

		expired := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/payments",
			body: map[string]any{"bill_id": bills[1].(map[string]any)["id"], "outcome": "expired"}}).data()
		if expired["status"] != "expired" || expired["expires_at"] != expired["updated_at"] {
			t.Fatalf("simulated expiry %v", expired)
		}
	})
}

// Payment links can be read back, one or a page, active or not, with the
// URL the create call returned; the filters and the common list
// parameters work and bad values are 400s naming the parameter.
func TestPaymentLinksReadBack(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		issued := issuedBills(t, h, key, 2)
		made := map[string]map[string]any{}
		for _, b := range issued[:2] {
			res := h.do(req{key: key, method: "POST", path: "/v1/bills/" + b["id"].(string) + "/payment-link"})
			want(t, res, http.StatusCreated)
			made[b["id"].(string)] = res.data()
		}
		first, second := made[issued[0]["id"].(string)], made[issued[1]["id"].(string)]

		// One link, exactly as created.
		reader := h.testKey(f, rental.ScopePaymentsRead)
		got := h.do(req{key: reader, method: "GET", path: "/v1/payment-links/" + first["id"].(string)})
		want(t, got, http.StatusOK)
		if fmt.Sprint(got.data()) != fmt.Sprint(first) {
			t.Fatalf("read back %v\ncreated %v", got.data(), first)
		}
		ids := func(query string) []string {
			t.Helper()
			res := h.do(req{key: reader, method: "GET", path: "/v1/payment-links" + query})
			want(t, res, http.StatusOK)
			var out []string
			for _, it := range res.json()["data"].([]any) {
				out = append(out, it.(map[string]any)["id"].(string))
			}
			return out
		}
		both := fmt.Sprint([]string{second["id"].(string), first["id"].(string)})
		if got := ids(""); fmt.Sprint(got) != both {
			t.Fatalf("list %v, want newest first %v", got, both)
		}
		if got := ids("?order=asc&active=true"); fmt.Sprint(got) != fmt.Sprint([]string{first["id"].(string), second["id"].(string)}) {
			t.Fatalf("active, oldest first: %v", got)
		}
		if got := ids("?bill_id=" + issued[1]["id"].(string)); fmt.Sprint(got) != fmt.Sprint([]string{second["id"].(string)}) {
			t.Fatalf("bill filter: %v", got)
		}
		if got := ids("?active=false"); len(got) != 0 {
			t.Fatalf("inactive before any payment: %v", got)
		}
		// Pages of one, with the cursor.
		page := h.do(req{key: reader, method: "GET", path: "/v1/payment-links?limit=1"}).json()
		pg := page["pagination"].(map[string]any)
		if pg["has_more"] != true || page["data"].([]any)[0].(map[string]any)["id"] != second["id"] {
			t.Fatalf("first page %v", page)
		}
		if got := ids("?limit=1&cursor=" + pg["next_cursor"].(string)); fmt.Sprint(got) != fmt.Sprint([]string{first["id"].(string)}) {
			t.Fatalf("second page %v", got)
		}

		// Paying the bill turns its link inactive, and it still reads back.
		want(t, h.do(req{key: key, method: "POST", path: "/v1/test-helpers/payments", body: map[string]any{"bill_id": issued[0]["id"], "outcome": "paid"}}), http.StatusOK)
		paid := h.do(req{key: reader, method: "GET", path: "/v1/payment-links/" + first["id"].(string)}).data()
		if paid["active"] != false || paid["amount"] != 0.0 || paid["url"] != first["url"] || paid["bill_id"] != issued[0]["id"] {
			t.Fatalf("paid bill's link %v", paid)
		}
		if got := ids("?active=false"); fmt.Sprint(got) != fmt.Sprint([]string{first["id"].(string)}) {
			t.Fatalf("inactive: %v", got)
		}
		if got := ids("?active=true"); fmt.Sprint(got) != fmt.Sprint([]string{second["id"].(string)}) {
			t.Fatalf("active: %v", got)
		}

		// Refusals: bad filters, unknown IDs, another account's link, scopes.
		for _, tc := range []struct{ query, code, param string }{
			{"?active=yes", "invalid_parameter", "active"},
			{"?active=", "invalid_parameter", "active"},
			{"?bill_id=bill%20x", "invalid_parameter", "bill_id"},
			{"?status=paid", "unknown_parameter", "status"},
			{"?limit=0", "invalid_parameter", "limit"},
			{"?cursor=nonsense", "invalid_cursor", "cursor"},
		} {
			res := h.do(req{key: reader, method: "GET", path: "/v1/payment-links" + tc.query})
			want(t, res, http.StatusBadRequest, tc.code)
			if res.errField("param") != tc.param {
				t.Errorf("%s: param %q, want %q", tc.query, res.errField("param"), tc.param)
			}
		}
		want(t, h.do(req{key: reader, method: "GET", path: "/v1/payment-links/plink_000000000000000000000000"}), http.StatusNotFound, "resource_not_found")
		want(t, h.do(req{key: reader, method: "GET", path: "/v1/payment-links/not%20an%20id"}), http.StatusNotFound, "resource_not_found")
		other := h.testKey(h.fixture(rental.PlanPro))
		want(t, h.do(req{key: other, method: "GET", path: "/v1/payment-links/" + first["id"].(string)}), http.StatusNotFound, "resource_not_found")
		if got := h.do(req{key: other, method: "GET", path: "/v1/payment-links?bill_id=" + issued[0]["id"].(string)}).json()["data"].([]any); len(got) != 0 {
			t.Fatalf("another application sees %v", got)
		}
		billsOnly := h.testKey(f, rental.ScopeBillsRead)
		want(t, h.do(req{key: billsOnly, method: "GET", path: "/v1/payment-links"}), http.StatusForbidden, "insufficient_scope")
		want(t, h.do(req{key: billsOnly, method: "GET", path: "/v1/payment-links/" + first["id"].(string)}), http.StatusForbidden, "insufficient_scope")
	})
}

// issuedBills returns the sandbox's issued bills, oldest first, at least n
// of them.
func issuedBills(t *testing.T, h *harness, key string, n int) []map[string]any {
	t.Helper()
	var issued []map[string]any
	for _, it := range h.do(req{key: key, method: "GET", path: "/v1/bills?status=issued&order=asc"}).json()["data"].([]any) {
		issued = append(issued, it.(map[string]any))
	}
	if len(issued) < n {
		t.Fatalf("%d issued sample bills, want %d", len(issued), n)
	}
	return issued
}
