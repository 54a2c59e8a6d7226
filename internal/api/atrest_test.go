package api_test

import (
	"net/http"
	"strings"
	"testing"

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
