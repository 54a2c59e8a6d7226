package api_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// Concurrent updates of one property lose nothing, and concurrent deletes
// delete (and record) once.
func TestConcurrentWritesToOneProperty(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		for range 5 {
			id := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("P")}).data()["id"].(string)
			var wg sync.WaitGroup
			for _, body := range []map[string]any{{"name": "N"}, {"address": "A"}} {
				wg.Go(func() { h.send(req{key: key, method: "PATCH", path: "/v1/properties/" + id, body: body}) })
			}
			wg.Wait()
			p := h.do(req{key: key, method: "GET", path: "/v1/properties/" + id}).data()
			if p["name"] != "N" || p["address"] != "A" {
				t.Fatalf("an update was lost: %v", p)
			}
			statuses := make(chan int, 2)
			for range 2 {
				wg.Go(func() {
					res, err := h.send(req{key: key, method: "DELETE", path: "/v1/properties/" + id})
					if err == nil {
						statuses <- res.status
					}
				})
			}
			wg.Wait()
			close(statuses)
			got := map[int]int{}
			for s := range statuses {
				got[s]++
			}
			if got[204] != 1 || got[404] != 1 {
				t.Fatalf("two deletes: %v", got)
			}
		}
		n, err := e.DB.Read().CountEvents(t.Context(), f.Sandbox(t, e.DB), "property.deleted")
		if err != nil || n != 5 {
			t.Fatalf("%d property.deleted events for 5 deletions (%v)", n, err)
		}
	})
}

// IDs and headers that cannot be ours are 4xx on both engines, never 500.
func TestHostileIdentifiers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		for _, path := range []string{"/v1/properties/%ff", "/v1/properties/%00", "/v1/properties/prop_%c3%28", "/v1/rooms/" + strings.Repeat("a", 65)} {
			want(t, h.do(req{key: key, method: "GET", path: path}), http.StatusNotFound, "resource_not_found")
			want(t, h.do(req{key: key, method: "PATCH", path: path, body: map[string]any{"name": "x"}}), http.StatusNotFound, "resource_not_found")
		}
		want(t, h.do(req{key: key, method: "GET", path: "/v1/rooms?property_id=%ff"}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "GET", path: "/v1/events?type=bill.%00"}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills", body: `{"room_id":"room_\u0000","month":"2026-11"}`}), http.StatusNotFound, "resource_not_found")
		f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		unbound := h.liveKey(f, "")
		want(t, h.do(req{key: unbound, method: "GET", path: "/v1/account", headers: []string{"SERVICE-Account: acct_\xff\xfe"}}), http.StatusForbidden, "account_not_connected")
	})
}

// A key anywhere in the URL is refused before anything else, on any path,
// and never echoed.
func TestKeysInURL(t *testing.T) {
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanEnterprise))
	for _, q := range []string{"?api_key=" + key, "?API_KEY=x", "?access_token=Bearer+" + key, "?" + key, "?q=" + key} {
		for _, path := range []string{"/v1/account", "/v1/nowhere"} {
			res := h.do(req{key: key, method: "GET", path: path + q})
			want(t, res, http.StatusBadRequest, "api_key_in_query")
			if strings.Contains(string(res.body), key) {
				t.Fatalf("the key is echoed: %s", res.body)
			}
		}
	}
}

// A stored 429 replays with its Retry-After.
func TestReplayKeepsRetryAfter(t *testing.T) {
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanEnterprise))
	for i := range 18 {
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property(string(rune('a' + i)))}), http.StatusCreated)
	}
	first := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("full"), headers: []string{"Idempotency-Key: full"}})
	again := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("full"), headers: []string{"Idempotency-Key: full"}})
	want(t, first, http.StatusTooManyRequests, "sandbox_limit")
	want(t, again, http.StatusTooManyRequests, "sandbox_limit")
	if again.header.Get("Retry-After") == "" || again.header.Get("Retry-After") != first.header.Get("Retry-After") {
		t.Fatalf("Retry-After %q then %q", first.header.Get("Retry-After"), again.header.Get("Retry-After"))
	}
}
