package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/slip"
	"rentapi/internal/slip/sliptest"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/webhook"
)

// slipHarness is a harness whose jobs verify slips with the fake provider,
// as serve does with a provider configured.
func slipHarness(t *testing.T, e storetest.Engine, p *sliptest.Provider) *harness {
	client, err := slip.New(p.URL, sliptest.Key)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, func(c *api.Config) { c.Guard, c.SlipsLive = webhook.Guard{AllowLoopback: true}, true })
	h.runJobs(slog.New(slog.DiscardHandler), jobs.Options{RescueAfter: noRescue, Slips: client})
	return h
}

// slipPayee is a live payee with an issued bill; its PromptPay receiver
// (081-234-5678) is what the fake shows as "xxx-xxx-5678".
func slipPayee(t *testing.T, h *harness, p *sliptest.Provider) payee {
	t.Helper()
	py := newPayee(t, h, rental.LandlordStandard)
	p.Set(sliptest.Settings{Mode: sliptest.Verified, Receiver: "xxx-xxx-5678", Amount: float64(py.total) / 100})
	return py
}

// fileSlip posts a slip body with a fresh Idempotency-Key.
func fileSlip(h *harness, key, bill string, body any) *result {
	return h.do(req{key: key, method: "POST", path: "/v1/bills/" + bill + "/slips", body: body,
		headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
}

// settleSlip waits for the verification jobs that can run now and reads the slip.
func settleSlip(t *testing.T, h *harness, key, id string) map[string]any {
	t.Helper()
	h.settleKind(store.SlipArgs{}.Kind())
	res := h.do(req{key: key, method: "GET", path: "/v1/slips/" + id})
	want(t, res, http.StatusOK)
	return res.data()
}

// stepSlip moves the clock past each retry until the slip is settled.
func stepSlip(t *testing.T, h *harness, key, id string) map[string]any {
	t.Helper()
	for range 10 {
		if d := settleSlip(t, h, key, id); d["status"] != rental.SlipPending {
			return d
		}
		h.e.Clock.Advance(31 * time.Minute)
	}
	t.Fatalf("slip %s still pending", id)
	return nil
}

func getBill(t *testing.T, h *harness, key, id string) map[string]any {
	t.Helper()
	res := h.do(req{key: key, method: "GET", path: "/v1/bills/" + id})
	want(t, res, http.StatusOK)
	return res.data()
}

func TestSlipVerifiedPaysTheBill(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		p := slipPayee(t, h, prov)
		rc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(h.liveKey(p.app, ""), rc, "slip.verified", "slip.rejected", "payment.paid")

		// Half the bill first: verified, a partial payment.
		half := p.total / 2
		prov.Set(sliptest.Settings{Mode: sliptest.Verified, Amount: float64(half) / 100})
		res := fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "0046000600000101030140225202611221517420011APM04123455102TH91049C1A"})
		want(t, res, http.StatusAccepted)
		s := res.data()
		if s["status"] != "pending" || s["source"] != "api" || s["bill_id"] != p.bill || s["payment_id"] != nil || s["amount"] != nil {
			t.Fatalf("filed %v", s)
		}
		s = settleSlip(t, h, p.key, s["id"].(string))
		if s["status"] != "verified" || s["amount"].(float64) != float64(half) || s["sending_bank"] != "KBANK" || s["trans_ref"] == nil ||
			s["transferred_at"] == nil || s["payment_id"] == nil || s["rejection_reason"] != nil {
			t.Fatalf("verified %v", s)
		}
		pay := h.do(req{key: p.key, method: "GET", path: "/v1/payments/" + s["payment_id"].(string)}).data()
		if pay["status"] != "paid" || pay["slip_id"] != s["id"] || pay["amount_paid"].(float64) != float64(half) || pay["payment_link_id"] != nil {
			t.Fatalf("payment %v", pay)
		}
		b := getBill(t, h, p.key, p.bill)
		if b["status"] != "issued" || b["amount_paid"].(float64) != float64(half) {
			t.Fatalf("bill after half %v", b)
		}

		// The rest, as an image: the bill is paid.
		prov.Set(sliptest.Settings{Mode: sliptest.Verified, Amount: float64(p.total-half) / 100})
		img := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("slip"), 1000)...)
		res = fileSlip(h, p.key, p.bill, map[string]any{"image": base64.StdEncoding.EncodeToString(img)})
		want(t, res, http.StatusAccepted)
		if s := settleSlip(t, h, p.key, res.data()["id"].(string)); s["status"] != "verified" {
			t.Fatalf("second slip %v", s)
		}
		if b := getBill(t, h, p.key, p.bill); b["status"] != "paid" || b["amount_paid"].(float64) != float64(p.total) {
			t.Fatalf("bill after the rest %v", b)
		}

		// A transfer to the paid bill is still recorded.
		res = fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "another-transfer-0001"})
		want(t, res, http.StatusAccepted)
		if s := settleSlip(t, h, p.key, res.data()["id"].(string)); s["status"] != "verified" {
			t.Fatalf("slip to a paid bill %v", s)
		}
		if b := getBill(t, h, p.key, p.bill); b["status"] != "paid" || b["amount_paid"].(float64) <= float64(p.total) {
			t.Fatalf("bill after a transfer to it paid %v", b)
		}

		// The same slip again is a duplicate, and pays nothing.
		res = fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "another-transfer-0001"})
		want(t, res, http.StatusAccepted)
		if s := settleSlip(t, h, p.key, res.data()["id"].(string)); s["status"] != "rejected" || s["rejection_reason"] != "duplicate_slip" || s["payment_id"] != nil {
			t.Fatalf("same slip twice %v", s)
		}

		// The provider's own rejections.
		for _, tc := range []struct {
			mode   sliptest.Mode
			reason string
		}{{sliptest.WrongReceiver, "receiver_mismatch"}, {sliptest.Unreadable, "unreadable"}, {sliptest.Duplicate, "duplicate_slip"}} {
			prov.Set(sliptest.Settings{Mode: tc.mode})
			res = fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "slip-" + tc.reason})
			want(t, res, http.StatusAccepted)
			if s := settleSlip(t, h, p.key, res.data()["id"].(string)); s["status"] != "rejected" || s["rejection_reason"] != tc.reason {
				t.Fatalf("%s: %v", tc.reason, s)
			}
		}

		if n := count(t, h, p.acct, "payment.paid"); n != 3 {
			t.Fatalf("%d payment.paid, want one per verified slip", n)
		}
		if n := count(t, h, p.acct, "slip.verified"); n != 3 {
			t.Fatalf("%d slip.verified", n)
		}
		if n := count(t, h, p.acct, "slip.rejected"); n != 4 {
			t.Fatalf("%d slip.rejected", n)
		}
		// Every event reached the receiver, signed (the receiver verifies).
		got := rc.waitFor(10)
		types := map[string]int{}
		for _, r := range got {
			types[r.header.Get("X-Service-Event")]++
			if bytes.Contains(r.body, []byte("APM04123455102TH")) || bytes.Contains(r.body, []byte("another-transfer")) {
				t.Fatalf("an event carries the slip's QR text: %s", r.body)
			}
		}
		if types["slip.verified"] != 3 || types["slip.rejected"] != 4 || types["payment.paid"] != 3 {
			t.Fatalf("deliveries %v", types)
		}

		// Listed, filtered, paged.
		list := h.do(req{key: p.key, method: "GET", path: "/v1/slips?status=rejected&bill_id=" + p.bill + "&limit=2"})
		want(t, list, http.StatusOK)
		if items := list.json()["data"].([]any); len(items) != 2 || list.json()["pagination"].(map[string]any)["has_more"] != true {
			t.Fatalf("list %s", list.body)
		}
		want(t, h.do(req{key: p.key, method: "GET", path: "/v1/slips?status=lost"}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: p.key, method: "GET", path: "/v1/slips/slip_000000000000000000000000"}), http.StatusNotFound)
	})
}

func TestSlipSentTwiceAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		p := slipPayee(t, h, prov)
		// A second process over the same database, with its own job client.
		if e.Name == "postgres" {
			db2, err := store.Open(t.Context(), e.DSN, store.Options{Now: e.Clock.Now, AddFriendURL: storetest.AddFriendURL, Secret: h.sec})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db2.Close() })
			client, _ := slip.New(prov.URL, sliptest.Key)
			c2, err := jobs.New(db2, nil, jobs.Options{RescueAfter: noRescue, Slips: client, Secret: h.sec})
			if err != nil {
				t.Fatal(err)
			}
			if err := c2.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c2.Stop(stop)
			})
		}
		for round := range 3 {
			qr := "the-same-slip-" + itoa(int64(round))
			var wg sync.WaitGroup
			ids := make([]string, 2)
			for i := range 2 {
				wg.Go(func() {
					res, err := h.send(req{key: p.key, method: "POST", path: "/v1/bills/" + p.bill + "/slips",
						body: map[string]any{"qr_payload": qr}, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
					if err != nil {
						t.Error(err)
						return
					}
					if res.status != http.StatusAccepted {
						t.Errorf("file: %d %s", res.status, res.body)
						return
					}
					ids[i] = res.data()["id"].(string)
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			a, b := settleSlip(t, h, p.key, ids[0]), settleSlip(t, h, p.key, ids[1])
			for a["status"] == "pending" || b["status"] == "pending" { // the other process may still be at it
				time.Sleep(20 * time.Millisecond)
				a, b = settleSlip(t, h, p.key, ids[0]), settleSlip(t, h, p.key, ids[1])
			}
			if a["status"] == b["status"] || (a["status"] != "verified" && b["status"] != "verified") {
				t.Fatalf("round %d: %v and %v", round, a, b)
			}
			rejected := a
			if a["status"] == "verified" {
				rejected = b
			}
			if rejected["rejection_reason"] != "duplicate_slip" {
				t.Fatalf("round %d: %v", round, rejected)
			}
		}
		if n := count(t, h, p.acct, "payment.paid"); n != 3 {
			t.Fatalf("%d payment.paid for 3 transfers each sent twice", n)
		}

		// The same transfer filed with two landlords at once (both receivers
		// match what the slip shows): the service-wide index lets one verify.
		q := slipPayee(t, h, prov)
		prov.Set(sliptest.Settings{Mode: sliptest.Verified, Amount: 100})
		for round := range 3 {
			qr := "one-transfer-two-landlords-" + itoa(int64(round))
			ids := make([]string, 2)
			var wg sync.WaitGroup
			for i, py := range []payee{p, q} {
				wg.Go(func() {
					res, err := h.send(req{key: py.key, method: "POST", path: "/v1/bills/" + py.bill + "/slips",
						body: map[string]any{"qr_payload": qr}, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
					if err != nil {
						t.Error(err)
						return
					}
					if res.status != http.StatusAccepted {
						t.Errorf("file: %d %s", res.status, res.body)
						return
					}
					ids[i] = res.data()["id"].(string)
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			a, b := settleSlip(t, h, p.key, ids[0]), settleSlip(t, h, q.key, ids[1])
			for a["status"] == "pending" || b["status"] == "pending" {
				time.Sleep(20 * time.Millisecond)
				a, b = settleSlip(t, h, p.key, ids[0]), settleSlip(t, h, q.key, ids[1])
			}
			verified := 0
			for _, s := range []map[string]any{a, b} {
				switch {
				case s["status"] == "verified":
					verified++
				case s["rejection_reason"] != "duplicate_slip":
					t.Fatalf("round %d: %v", round, s)
				}
			}
			if verified != 1 {
				t.Fatalf("round %d: %d verified: %v, %v", round, verified, a, b)
			}
		}
		if n, m := count(t, h, p.acct, "payment.paid"), count(t, h, q.acct, "payment.paid"); n+m != 6 {
			t.Fatalf("%d + %d payment.paid, want 3 + 3 transfers", n, m)
		}
	})
}

func TestSlipProviderDownThenUp(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		p := slipPayee(t, h, prov)
		prov.Set(sliptest.Settings{Mode: sliptest.Verified, Failures: 2})
		res := fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "flaky"})
		want(t, res, http.StatusAccepted)
		id := res.data()["id"].(string)
		if s := settleSlip(t, h, p.key, id); s["status"] != "pending" || prov.Calls() != 1 {
			t.Fatalf("after one failure: %v, %d calls", s, prov.Calls())
		}
		// The retry is not due before 10 s on the clock.
		e.Clock.Advance(5 * time.Second)
		if s := settleSlip(t, h, p.key, id); s["status"] != "pending" || prov.Calls() != 1 {
			t.Fatalf("retried early: %v, %d calls", s, prov.Calls())
		}
		s := stepSlip(t, h, p.key, id)
		if s["status"] != "verified" || prov.Calls() != 3 {
			t.Fatalf("after 500, 500, 200: %v, %d calls", s, prov.Calls())
		}
		if b := getBill(t, h, p.key, p.bill); b["status"] != "paid" {
			t.Fatalf("bill %v", b)
		}
	})
}

func TestSlipProviderDownForGood(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		p := slipPayee(t, h, prov)
		prov.Set(sliptest.Settings{Mode: sliptest.Down})
		res := fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "down"})
		want(t, res, http.StatusAccepted)
		s := stepSlip(t, h, p.key, res.data()["id"].(string))
		if s["status"] != "rejected" || s["rejection_reason"] != "provider_unavailable" || prov.Calls() != rental.MaxVerifyAttempts {
			t.Fatalf("after the schedule: %v, %d calls", s, prov.Calls())
		}
		if n := count(t, h, p.acct, "slip.rejected"); n != 1 {
			t.Fatalf("%d slip.rejected", n)
		}
		if b := getBill(t, h, p.key, p.bill); b["status"] != "issued" || b["amount_paid"].(float64) != 0 {
			t.Fatalf("bill %v", b)
		}
	})
}

func TestSlipBadInput(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		p := slipPayee(t, h, prov)
		b64 := base64.StdEncoding.EncodeToString
		png := []byte("\x89PNG\r\n\x1a\n")
		for _, tc := range []struct {
			name   string
			body   any
			status int
			code   string
			param  string
		}{
			{"neither", map[string]any{}, 400, "parameter_missing", "qr_payload"},
			{"both", map[string]any{"qr_payload": "x", "image": b64(png)}, 400, "invalid_parameter", "image"},
			{"not base64", map[string]any{"image": "this is not base64!"}, 400, "invalid_parameter", "image"},
			{"a PDF", map[string]any{"image": b64([]byte("%PDF-1.7\n1 0 obj"))}, 400, "invalid_parameter", "image"},
			{"too big", map[string]any{"image": b64(append(png, make([]byte, 720<<10)...))}, 400, "invalid_parameter", "image"},
			{"3 MB", map[string]any{"image": b64(append(png, make([]byte, 3<<20)...))}, 413, "", ""},
			{"long QR", map[string]any{"qr_payload": strings.Repeat("1", 513)}, 400, "invalid_parameter", "qr_payload"},
			{"unknown field", map[string]any{"qr_payload": "x", "amount": 5}, 400, "invalid_parameter", "amount"},
			{"not JSON", "{", 400, "invalid_json", ""},
		} {
			res := fileSlip(h, p.key, p.bill, tc.body)
			if res.status != tc.status || (tc.code != "" && res.code() != tc.code) || res.errField("param") != tc.param {
				t.Errorf("%s: %d %s", tc.name, res.status, res.body)
			}
			if strings.Contains(string(res.body), "iVBOR") || strings.Contains(string(res.body), "JVBER") {
				t.Errorf("%s: the answer echoes the image", tc.name)
			}
		}
		want(t, h.do(req{key: p.key, method: "POST", path: "/v1/bills/" + p.bill + "/slips", body: map[string]any{"qr_payload": "x"}}),
			http.StatusBadRequest, "parameter_missing")
		want(t, fileSlip(h, p.key, "bill_000000000000000000000000", map[string]any{"qr_payload": "x"}), http.StatusNotFound)
		// A draft bill: nobody could have paid it.
		room := getBill(t, h, p.key, p.bill)["room_id"]
		create(t, h, p.key, "/v1/meter-readings", map[string]any{"room_id": room, "month": "2026-12",
			"electricity": map[string]any{"current": 1200}, "water": map[string]any{"current": 60}})
		draft := create(t, h, p.key, "/v1/bills", map[string]any{"room_id": room, "month": "2026-12", "issue": false})
		want(t, fileSlip(h, p.key, draft, map[string]any{"qr_payload": "x"}), http.StatusConflict, "bill_not_payable")
		// Another account's bill is not found.
		other := newPayee(t, h, rental.LandlordStandard)
		want(t, fileSlip(h, other.key, p.bill, map[string]any{"qr_payload": "x"}), http.StatusNotFound)
		// Read scope only: no filing.
		readOnly := h.liveKey(p.app, p.acct.ID, rental.ScopePaymentsRead)
		want(t, fileSlip(h, readOnly, p.bill, map[string]any{"qr_payload": "x"}), http.StatusForbidden)
		want(t, h.do(req{key: readOnly, method: "GET", path: "/v1/slips"}), http.StatusOK)

		// Nothing was stored.
		var slips, images int
		pool := e.DB.WritePool()
		if err := pool.QueryRowContext(t.Context(), `SELECT (SELECT count(*) FROM slips WHERE landlord_id IN ($1, $2)), (SELECT count(*) FROM slip_images)`,
			p.acct.LandlordID, other.acct.LandlordID).Scan(&slips, &images); err != nil {
			t.Fatal(err)
		}
		if slips != 0 || images != 0 || prov.Calls() != 0 {
			t.Fatalf("%d slips, %d images stored, %d provider calls", slips, images, prov.Calls())
		}
	})
}

// create posts a create body with a fresh Idempotency-Key and returns the new ID.
func create(t *testing.T, h *harness, key, path string, body any) string {
	t.Helper()
	res := h.do(req{key: key, method: "POST", path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
	want(t, res, http.StatusCreated)
	return res.data()["id"].(string)
}

func TestSlipsNotAvailable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		want(t, fileSlip(h, p.key, p.bill, map[string]any{"qr_payload": "x"}), http.StatusConflict, "slips_not_available")
		// Test mode needs no provider.
		key := h.testKey(p.app)
		bill := issuedBills(t, h, key, 1)[0]["id"].(string)
		want(t, fileSlip(h, key, bill, map[string]any{"qr_payload": "x"}), http.StatusAccepted)
	})
}

func TestSlipSandbox(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)

		// The sample data: a verified slip with its payment, a rejected one.
		res := h.do(req{key: key, method: "GET", path: "/v1/slips?order=asc"})
		want(t, res, http.StatusOK)
		samples := res.json()["data"].([]any)
		statuses := map[string]string{}
		for _, it := range samples {
			s := it.(map[string]any)
			statuses[s["status"].(string)] = s["id"].(string)
			if s["status"] == "verified" {
				pay := h.do(req{key: key, method: "GET", path: "/v1/payments/" + s["payment_id"].(string)}).data()
				if pay["slip_id"] != s["id"] {
					t.Fatalf("sample payment %v", pay)
				}
			}
		}
		if len(samples) != 2 || statuses["verified"] == "" || statuses["rejected"] == "" {
			t.Fatalf("sample slips %s", res.body)
		}

		bills := issuedBills(t, h, key, 3)
		// The simulated provider verifies what is owed; test_<reason> rejects.
		bill := bills[0]["id"].(string)
		res = fileSlip(h, key, bill, map[string]any{"qr_payload": "anything the bank app shows"})
		want(t, res, http.StatusAccepted)
		s := settleSlip(t, h, key, res.data()["id"].(string))
		if s["status"] != "verified" || s["amount"].(float64) != bills[0]["total"].(float64)-bills[0]["amount_paid"].(float64) {
			t.Fatalf("sandbox slip %v", s)
		}
		if b := getBill(t, h, key, bill); b["status"] != "paid" {
			t.Fatalf("sandbox bill %v", b)
		}
		for _, reason := range []string{"receiver_mismatch", "unreadable", "duplicate_slip"} {
			res = fileSlip(h, key, bills[1]["id"].(string), map[string]any{"qr_payload": "test_" + reason})
			want(t, res, http.StatusAccepted)
			if s := settleSlip(t, h, key, res.data()["id"].(string)); s["status"] != "rejected" || s["rejection_reason"] != reason {
				t.Fatalf("test_%s: %v", reason, s)
			}
		}
		res = fileSlip(h, key, bills[1]["id"].(string), map[string]any{"qr_payload": "test_provider_unavailable"})
		want(t, res, http.StatusAccepted)
		if s := stepSlip(t, h, key, res.data()["id"].(string)); s["status"] != "rejected" || s["rejection_reason"] != "provider_unavailable" {
			t.Fatalf("test_provider_unavailable: %v", s)
		}
		if prov.Calls() != 0 {
			t.Fatalf("test mode called the provider %d times", prov.Calls())
		}

		// The test helper.
		helper := func(k string, body any) *result {
			return h.do(req{key: k, method: "POST", path: "/v1/test-helpers/slips", body: body})
		}
		bill = bills[2]["id"].(string)
		res = helper(key, map[string]any{"bill_id": bill, "outcome": "verified", "amount": 1000})
		want(t, res, http.StatusOK)
		if d := res.data(); d["status"] != "verified" || d["amount"].(float64) != 1000 || d["source"] != "api" || d["payment_id"] == nil {
			t.Fatalf("helper verified %v", d)
		}
		if b := getBill(t, h, key, bill); b["amount_paid"].(float64) != bills[2]["amount_paid"].(float64)+1000 {
			t.Fatalf("helper's partial payment: %v", b)
		}
		res = helper(key, map[string]any{"bill_id": bill, "outcome": "verified"})
		want(t, res, http.StatusOK)
		if b := getBill(t, h, key, bill); b["status"] != "paid" {
			t.Fatalf("helper's payment of the rest: %v", b)
		}
		res = helper(key, map[string]any{"bill_id": bill, "outcome": "duplicate_slip"})
		want(t, res, http.StatusOK)
		if d := res.data(); d["status"] != "rejected" || d["rejection_reason"] != "duplicate_slip" {
			t.Fatalf("helper rejected %v", d)
		}
		want(t, helper(key, map[string]any{"bill_id": bill, "outcome": "lost"}), http.StatusBadRequest, "invalid_parameter")
		want(t, helper(key, map[string]any{"bill_id": bill, "outcome": "unreadable", "amount": 5}), http.StatusBadRequest, "invalid_parameter")
		want(t, helper(key, map[string]any{"outcome": "unreadable"}), http.StatusBadRequest, "parameter_missing")
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, f.App.Scopes)
		want(t, helper(h.liveKey(f, acct.ID), map[string]any{"bill_id": bill, "outcome": "verified"}), http.StatusForbidden, "test_mode_only")

		// A sandbox reset starts the slips again from the sample data.
		want(t, h.do(req{key: key, method: "POST", path: "/v1/test-helpers/sandbox/reset"}), http.StatusOK)
		if n := len(h.do(req{key: key, method: "GET", path: "/v1/slips"}).json()["data"].([]any)); n != 2 {
			t.Fatalf("%d slips after a reset", n)
		}
	})
}

func TestSlipImagesRetention(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		prov := sliptest.New(t)
		h := slipHarness(t, e, prov)
		p := slipPayee(t, h, prov)
		img := base64.StdEncoding.EncodeToString(append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte("j"), 5000)...))
		want(t, fileSlip(h, p.key, p.bill, map[string]any{"image": img}), http.StatusAccepted)
		h.settleKind(store.SlipArgs{}.Kind())
		images := func() int {
			var n int
			if err := e.DB.WritePool().QueryRowContext(t.Context(), `SELECT count(*) FROM slip_images`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n, err := e.DB.PurgeSlipImages(t.Context()); err != nil || n != 0 || images() != 1 {
			t.Fatalf("purged %d (%v) of a fresh image", n, err)
		}
		e.Clock.Advance(rental.SlipImageRetention + time.Minute)
		if n, err := e.DB.PurgeSlipImages(t.Context()); err != nil || n != 1 || images() != 0 {
			t.Fatalf("purged %d (%v) after 30 days", n, err)
		}
		// The slip itself stays.
		if res := h.do(req{key: p.key, method: "GET", path: "/v1/slips"}); len(res.json()["data"].([]any)) != 1 {
			t.Fatalf("slips after the purge: %s", res.body)
		}
	})
}
