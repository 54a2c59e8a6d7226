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
