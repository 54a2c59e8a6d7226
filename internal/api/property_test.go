package api_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

func TestPropertyLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanDeveloper))

		res := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Suk")})
		want(t, res, http.StatusCreated)
		p := res.data()
		id := p["id"].(string)
		if p["object"] != "property" || p["water_billing"] != "metered" || p["water_flat_amount"] != nil || p["currency"] != "THB" || p["room_count"] != 0.0 {
			t.Fatalf("created: %s", res.body)
		}
		if res.header.Get("X-SERVICE-Mode") != "test" || res.header.Get("X-RateLimit-Limit") != "60" {
			t.Fatalf("headers: %v", res.header)
		}

		res = h.do(req{key: key, method: "GET", path: "/v1/properties/" + id})
		want(t, res, http.StatusOK)

		res = h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + id, body: map[string]any{"water_billing": "flat_per_room", "water_flat_amount": 15000}})
		want(t, res, http.StatusOK)
		if d := res.data(); d["water_billing"] != "flat_per_room" || d["water_flat_amount"] != 15000.0 || d["water_rate"] != 1800.0 {
			t.Fatalf("updated: %s", res.body)
		}
		// Back to metered: the flat amount goes.
		res = h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + id, body: map[string]any{"water_billing": "metered"}})
		want(t, res, http.StatusOK)
		if res.data()["water_flat_amount"] != nil {
			t.Fatalf("metered keeps a flat amount: %s", res.body)
		}

		res = h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + id})
		want(t, res, http.StatusNoContent)
		want(t, h.do(req{key: key, method: "GET", path: "/v1/properties/" + id}), http.StatusNotFound, "resource_not_found")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + id}), http.StatusNotFound, "resource_not_found")
	})
}

func TestPropertyValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanDeveloper))
	cases := []struct {
		body        any
		code, param string
	}{
		{map[string]any{"electricity_rate": 800, "water_rate": 1}, "parameter_missing", "name"},
		{map[string]any{"name": "A", "water_rate": 1}, "parameter_missing", "electricity_rate"},
		{map[string]any{"name": "A", "electricity_rate": 800}, "parameter_missing", "water_rate"},
		{map[string]any{"name": "A", "electricity_rate": 800, "water_billing": "flat_per_person"}, "parameter_missing", "water_flat_amount"},
		{map[string]any{"name": "A", "electricity_rate": 800, "water_rate": 1, "water_flat_amount": 100}, "invalid_parameter", "water_flat_amount"},
		{map[string]any{"name": "", "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{map[string]any{"name": "   ", "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{map[string]any{"name": nil, "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{map[string]any{"name": 5, "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{map[string]any{"name": "A", "electricity_rate": 8.5, "water_rate": 1}, "invalid_parameter", "electricity_rate"},
		{map[string]any{"name": "A", "electricity_rate": "800", "water_rate": 1}, "invalid_parameter", "electricity_rate"},
		{map[string]any{"name": "A", "electricity_rate": -1, "water_rate": 1}, "invalid_parameter", "electricity_rate"},
		{map[string]any{"name": "A", "electricity_rate": 1e30, "water_rate": 1}, "invalid_parameter", "electricity_rate"},
		{map[string]any{"name": "A", "electricity_rate": 800, "water_rate": 1, "due_day": 0}, "invalid_parameter", "due_day"},
		{map[string]any{"name": "A", "electricity_rate": 800, "water_rate": 1, "due_day": 32}, "invalid_parameter", "due_day"},
		{map[string]any{"name": "A", "electricity_rate": 800, "water_rate": 1, "water_billing": "per_bucket"}, "invalid_parameter", "water_billing"},
		{map[string]any{"name": "A", "electricity_rate": 800, "water_rate": 1, "colour": "red"}, "invalid_parameter", "colour"},
		{map[string]any{"name": string(make([]byte, 201)), "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{`[1,2]`, "invalid_json", ""},
		{`{"name":`, "invalid_json", ""},
		{`{"name":"a"} {"name":"b"}`, "invalid_json", ""},
		{`{"name":"a","electricity_rate":800,"water_rate":1} ]`, "invalid_json", ""},
		{`{"name":"a","electricity_rate":800,"water_rate":1}}`, "invalid_json", ""},
		{`null`, "invalid_json", ""},
		{`{"name":"a","name":"b","electricity_rate":800,"water_rate":1}`, "invalid_json", ""},
		{`{"name":"a","electricity_rate":800,"water_rate":1,"water_rate":2}`, "invalid_json", ""},
		{map[string]any{"name": "Baan \u202eyrotimroD", "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{map[string]any{"name": "Baan\u200bSuk", "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "name"},
		{map[string]any{"name": "A", "address": "99 Soi \u2066Sukhumvit\u2069", "electricity_rate": 800, "water_rate": 1}, "invalid_parameter", "address"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			res := h.do(req{key: key, method: "POST", path: "/v1/properties", body: c.body})
			want(t, res, http.StatusBadRequest, c.code)
			if res.errField("param") != c.param {
				t.Fatalf("param %q, want %q: %s", res.errField("param"), c.param, res.body)
			}
		})
	}
	// Nothing was written: the sandbox holds just its two sample properties.
	res := h.do(req{key: key, method: "GET", path: "/v1/properties"})
	if n := len(res.json()["data"].([]any)); n != 2 {
		t.Fatalf("%d properties after bad requests", n)
	}
}

func TestPropertyPlanLimits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.AllScopes)
		live := h.liveKey(f, acct.ID)
		want(t, h.do(req{key: live, method: "POST", path: "/v1/properties", body: property("One")}), http.StatusCreated)
		res := h.do(req{key: live, method: "POST", path: "/v1/properties", body: property("Two")})
		want(t, res, http.StatusForbidden, "plan_limit_reached")

		// The sandbox holds 20 properties (2 of them sample data); the 21st is 429 sandbox_limit.
		test := h.testKey(f)
		for i := range 18 {
			want(t, h.do(req{key: test, method: "POST", path: "/v1/properties", body: property(fmt.Sprint("P", i))}), http.StatusCreated)
		}
		res = h.do(req{key: test, method: "POST", path: "/v1/properties", body: property("P21")})
		want(t, res, http.StatusTooManyRequests, "sandbox_limit")
		if res.header.Get("Retry-After") == "" {
			t.Fatal("sandbox_limit without Retry-After")
		}
		acc := h.do(req{key: test, method: "GET", path: "/v1/account"}).data()
		if u := acc["usage"].(map[string]any); u["properties"] != 20.0 {
			t.Fatalf("usage %v", u)
		}
	})
}

// Concurrent updates of one property lose nothing, and concurrent deletes
// delete (and record) once.
func TestConcurrentWritesToOneProperty(t *testing.T) {
	t.Parallel()
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
