package api_test

import (
	"net/http"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// One text rule for every text a client sends (additions.md): NUL, other
// C0 and C1 controls, format characters and blank text are 400
// invalid_parameter naming the field, on both engines (a NUL reached
// PostgreSQL before, and was a 500), and line breaks only in messages and
// descriptions.
func TestOneTextRule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.NoRateLimits = true })
		key := h.testKey(h.fixture(rental.PlanPro))
		res := h.do(req{key: key, method: "GET", path: "/v1/tenants?limit=1"})
		want(t, res, http.StatusOK)
		tenant := res.json()["data"].([]any)[0].(map[string]any)["id"].(string)
		res = h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Text Rule")})
		want(t, res, http.StatusCreated)
		prop := res.data()["id"].(string)
		res = h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop + "/rooms", body: map[string]any{"number": "T1", "monthly_rent": 100}})
		want(t, res, http.StatusCreated)
		room := res.data()["id"].(string)

		bad := []string{"a\u0000b", "\u0000", "   ", "\t", "a\u0085b", "a\u009b2Jb", "a\x1b[2Jb", "a\u202eb", "a\u200bb", "a\rb", "a\u2028b"}
		oneLine := append(bad, "a\nb")
		for _, c := range []struct {
			param, method, path string
			body                func(string) map[string]any
			texts               []string
			idempotent          bool
		}{
			{"text", "POST", "/v1/messages", func(s string) map[string]any { return map[string]any{"tenant_id": tenant, "text": s} }, bad, true},
			{"name", "POST", "/v1/properties", func(s string) map[string]any { p := property("x"); p["name"] = s; return p }, oneLine, false},
			{"address", "PATCH", "/v1/properties/" + prop, func(s string) map[string]any { return map[string]any{"address": s} }, oneLine, false},
			{"number", "POST", "/v1/properties/" + prop + "/rooms", func(s string) map[string]any { return map[string]any{"number": s, "monthly_rent": 1} }, oneLine, false},
			{"name", "POST", "/v1/rooms/" + room + "/tenant", func(s string) map[string]any { return map[string]any{"name": s, "phone": "0812345678"} }, oneLine, true},
			{"description", "POST", "/v1/webhook-endpoints", func(s string) map[string]any {
				return map[string]any{"url": "https://hooks.example.com/x", "enabled_events": []string{"*"}, "description": s}
			}, bad, true},
		} {
			for _, s := range c.texts {
				var headers []string
				if c.idempotent {
					headers = []string{"Idempotency-Key: " + rental.NewID("idem")}
				}
				res := h.do(req{key: key, method: c.method, path: c.path, body: c.body(s), headers: headers})
				if res.status != http.StatusBadRequest || res.code() != "invalid_parameter" || res.errField("param") != c.param {
					t.Errorf("%s %s with %s %q: %d %s", c.method, c.path, c.param, s, res.status, res.body)
				}
			}
		}
		// Messages and descriptions may break lines; the other texts take
		// Thai and emoji.
		res = h.do(req{key: key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "น้ำไม่ไหลวันนี้\r\nWater is off today 🚰"},
			headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
		want(t, res, http.StatusAccepted)
		res = h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + prop, body: map[string]any{"name": "บ้านสุข 🏠"}})
		want(t, res, http.StatusOK)
	})
}
