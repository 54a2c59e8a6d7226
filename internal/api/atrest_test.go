package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// A webhook signing secret is shown once, in the response that creates or
// rotates it, and that response is kept 24 hours for idempotent replays: no
// table may hold the secret in clear, yet the replay still shows it.
func TestNoWebhookSecretAtRest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		body := map[string]any{"url": "https://hooks.example.com/rentapi", "enabled_events": []string{"*"}}
		created := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: body, headers: []string{"Idempotency-Key: create-endpoint"}})
		want(t, created, http.StatusCreated)
		id, _ := created.data()["id"].(string)
		rotated := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + id + "/rotate-secret", headers: []string{"Idempotency-Key: rotate-endpoint"}})
		want(t, rotated, http.StatusOK)
		secrets := []string{created.data()["secret"].(string), rotated.data()["secret"].(string)}
		for _, s := range secrets {
			if !strings.HasPrefix(s, "whsec_") {
				t.Fatalf("secret %q", s)
			}
		}
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, "whsec_") {
				t.Errorf("table %s holds a signing secret in clear: %.300s", table, row)
			}
		}
		again := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: body, headers: []string{"Idempotency-Key: create-endpoint"}})
		want(t, again, http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(created.body) {
			t.Fatalf("replay of the creation: %s %s, want %s", again.header.Get("Idempotent-Replayed"), again.body, created.body)
		}
		again = h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + id + "/rotate-secret", headers: []string{"Idempotency-Key: rotate-endpoint"}})
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(rotated.body) {
			t.Fatalf("replay of the rotation: %s %s, want %s", again.header.Get("Idempotent-Replayed"), again.body, rotated.body)
		}
		// The sealed response answers only its own key: another
		// application's request with the same key string runs anew.
		other := storetest.NewFixture(t, e.DB, rental.PlanEnterprise)
		fresh := h.do(req{key: h.testKey(other), method: "POST", path: "/v1/webhook-endpoints", body: body, headers: []string{"Idempotency-Key: create-endpoint"}})
		want(t, fresh, http.StatusCreated)
		if fresh.header.Get("Idempotent-Replayed") != "false" || fresh.data()["id"] == id {
			t.Fatalf("another application got %s", fresh.body)
		}
	})
}

// A payment link's token is the only secret a tenant's payment page needs:
// the database keeps only its hash and the URL sealed under the server
// secret, yet the creation's answer, its idempotent replay, the page, the
// payments' payment_url and their events' data.object all show the URL.
func TestNoPaymentLinkTokenAtRest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		path := "/v1/bills/" + p.bill + "/payment-link"
		created := h.do(req{key: p.key, method: "POST", path: path, headers: []string{"Idempotency-Key: make-link"}})
		want(t, created, http.StatusCreated)
		url := created.data()["url"].(string)
		token := url[strings.LastIndex(url, "/")+1:]
		if !strings.HasPrefix(url, h.url+"/pay/") || len(token) != 32 {
			t.Fatalf("link URL %q", url)
		}
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				t.Errorf("table %s holds the link's token in clear: %.300s", table, row)
			}
		}
		again := h.do(req{key: p.key, method: "POST", path: path, headers: []string{"Idempotency-Key: make-link"}})
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(created.body) {
			t.Fatalf("replay: %s %s, want %s", again.header.Get("Idempotent-Replayed"), again.body, created.body)
		}
		if again := h.do(req{key: p.key, method: "POST", path: path}); again.status != http.StatusOK || again.data()["url"] != url {
			t.Fatalf("the bill's active link again: %d %s", again.status, again.body)
		}
		if status, body := open(t, url); status != http.StatusOK || !strings.Contains(body, "/pay/"+token+"/") {
			t.Fatalf("the payment page: %d", status)
		}
		pays := p.payments(t, h)
		if len(pays) != 1 || pays[0]["payment_url"] != url {
			t.Fatalf("payments %v", pays)
		}
		res := h.do(req{key: p.key, method: "GET", path: "/v1/events?type=payment.pending"})
		want(t, res, http.StatusOK)
		events := res.json()["data"].([]any)
		if len(events) != 1 || events[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)["payment_url"] != url {
			t.Fatalf("payment.pending events %v", events)
		}
		var hash string
		if err := e.DB.WritePool().QueryRowContext(t.Context(), `SELECT token_hash FROM payment_links WHERE url_sealed IS NOT NULL AND token IS NULL AND url IS NULL`).Scan(&hash); err != nil || len(hash) != 64 {
			t.Fatalf("the stored link: hash %q, %v", hash, err)
		}
	})
}

// A payment link's URL is copied into rows other than the link's: its
// payments' events (data.object.payment_url), their webhook deliveries, the
// bill notice that takes the link to the tenant's LINE. No table may hold
// the token in clear, yet the events read back, the receiver (on a retry
// and a resend, signed over the same bytes each time) and the chat push
// all show the URL.
func TestNoPaymentLinkTokenInCopies(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		rc := newReceiver(t, e.Clock.Now)
		rc.answers = []int{http.StatusInternalServerError} // one delivery is retried
		h.createEndpoint(h.liveKey(p.app, ""), rc)
		tenant := billTenant(t, h, p)
		registerTenant(t, h, tenant)

		// The bill notice makes the link and carries it to the tenant.
		res := notify(h, p.key, "new_bill", p.bill)
		want(t, res, http.StatusAccepted)
		if sent := waitNotification(t, h, p.key, res.data()["id"].(string)); sent["status"] != "sent" {
			t.Fatalf("notification %v", sent)
		}
		url := p.link(t, h)
		token := url[strings.LastIndex(url, "/")+1:]
		if !strings.HasPrefix(url, h.url+"/pay/") || len(token) != 32 {
			t.Fatalf("link URL %q", url)
		}
		if _, accepted := line.pushes(); len(accepted) != 1 {
			t.Fatalf("%d pushes accepted", len(accepted))
		} else {
			for _, m := range accepted {
				if !strings.Contains(string(m), url) {
					t.Fatalf("the push %s lacks the link %s", m, url)
				}
			}
		}

		// The tenant opens the page (payment.pending), lets the QR expire
		// and opens it again (payment.failed, payment.pending), and pays
		// (payment.paid).
		if status, _ := open(t, url); status != http.StatusOK {
			t.Fatalf("the payment page: %d", status)
		}
		// The deliveries of the events so far go before the clock moves:
		// one signed before the move and received after it would be
		// refused by the receiver as stale.
		h.settleDeliveries()
		e.Clock.Advance(rental.QRValidity + time.Minute)
		if status, _ := open(t, url); status != http.StatusOK {
			t.Fatalf("the payment page after expiry: %d", status)
		}
		pays := p.payments(t, h)
		if len(pays) != 2 || pays[0]["status"] != "pending" {
			t.Fatalf("payments %v", pays)
		}
		paid := h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("txn-at-rest", pays[0]["id"].(string), p.total)})
		want(t, paid, http.StatusOK)

		// Every delivery arrives, the one that failed on its retry.
		h.settleDeliveries()
		e.Clock.Advance(time.Minute + 7*time.Second)
		if parked := h.settleDeliveries(); len(parked) != 0 {
			t.Fatalf("%d deliveries wait for a retry", len(parked))
		}

		// The events read back with the URL, listed and one by one.
		res = h.do(req{key: p.key, method: "GET", path: "/v1/events?type=payment.*&order=asc&limit=100"})
		want(t, res, http.StatusOK)
		var types []string
		for _, it := range res.json()["data"].([]any) {
			ev := it.(map[string]any)
			obj := ev["data"].(map[string]any)["object"].(map[string]any)
			types = append(types, ev["type"].(string)+":"+obj["status"].(string))
			if obj["payment_url"] != url {
				t.Fatalf("listed %s: payment_url %v, want %s", ev["type"], obj["payment_url"], url)
			}
			one := h.do(req{key: p.key, method: "GET", path: "/v1/events/" + ev["id"].(string)})
			want(t, one, http.StatusOK)
			if !jsonEqual(one.data(), ev) {
				t.Fatalf("GET /v1/events/%s: %s, listed %v", ev["id"], one.body, ev)
			}
		}
		if got := strings.Join(types, " "); got != "payment.pending:pending payment.failed:expired payment.pending:pending payment.paid:paid" {
			t.Fatalf("payment events %s", got)
		}

		// The receiver got each payment event with the URL, each delivery
		// in the same bytes on every attempt.
		bodies := map[string]string{} // by delivery
		var payments, paidDelivery, retried int
		var paidID string
		for _, r := range rc.requests() {
			id := r.header.Get("X-Service-Delivery-Id")
			if first, seen := bodies[id]; seen {
				retried++
				if first != string(r.body) {
					t.Fatalf("delivery %s sent %s, then %s", id, first, r.body)
				}
				continue
			}
			bodies[id] = string(r.body)
			var ev struct {
				Type string
				Data struct {
					Object struct {
						PaymentURL string `json:"payment_url"`
					}
				}
			}
			if err := json.Unmarshal(r.body, &ev); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(ev.Type, "payment.") {
				payments++
				if ev.Data.Object.PaymentURL != url {
					t.Fatalf("delivered %s", r.body)
				}
			}
			if ev.Type == "payment.paid" {
				paidDelivery++
				paidID = id
			}
		}
		if payments != 4 || paidDelivery != 1 || retried != 1 {
			t.Fatalf("%d payment deliveries (%d payment.paid), %d retried", payments, paidDelivery, retried)
		}
		// A resend sends the very same bytes again.
		n := len(rc.requests())
		want(t, h.do(req{key: p.key, method: "POST", path: "/v1/webhook-deliveries/" + paidID + "/resend"}), http.StatusAccepted)
		if again := rc.waitFor(n + 1)[n]; again.header.Get("X-Service-Delivery-Id") != paidID || string(again.body) != bodies[paidID] {
			t.Fatalf("resent %s %s, first sent %s", again.header.Get("X-Service-Delivery-Id"), again.body, bodies[paidID])
		}

		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				t.Errorf("table %s holds the link's token in clear: %.300s", table, row)
			}
		}
	})
}
