package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Each sandbox starts with a real-looking dormitory's data, and the reset
// helper brings it back.
func TestSandboxSampleData(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		all := func(path string) []map[string]any {
			var out []map[string]any
			for _, it := range h.do(req{key: key, method: "GET", path: path}).json()["data"].([]any) {
				out = append(out, it.(map[string]any))
			}
			return out
		}
		props := all("/v1/properties")
		billing := map[any]bool{}
		for _, p := range props {
			billing[p["water_billing"]] = true
		}
		if len(props) != 2 || !billing["metered"] || !billing["flat_per_room"] {
			t.Fatalf("properties %v", props)
		}
		rooms := all("/v1/rooms?limit=100")
		states := map[any]int{}
		for _, r := range rooms {
			states[r["status"]]++
		}
		if len(rooms) != 8 || states["occupied"] != 5 || states["vacant"] != 2 || states["maintenance"] != 1 {
			t.Fatalf("rooms %v", states)
		}
		if n := len(all("/v1/tenants")); n != 5 {
			t.Fatalf("%d tenants", n)
		}
		if n := len(all("/v1/meter-readings?limit=100")); n != 10 {
			t.Fatalf("%d readings", n)
		}
		paid, issued := all("/v1/bills?status=paid&month=2026-10"), all("/v1/bills?status=issued&month=2026-11")
		if len(paid) != 5 || len(issued) != 5 {
			t.Fatalf("%d paid October bills, %d issued November bills", len(paid), len(issued))
		}
		for _, b := range paid {
			if b["amount_paid"] != b["total"] || b["paid_at"] == nil {
				t.Fatalf("paid bill %v", b)
			}
		}
		if n := len(all("/v1/events")); n != 0 {
			t.Fatalf("a new sandbox lists %d events", n)
		}

		// Change things, then reset.
		prop := props[0]["id"].(string)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Extra")}), http.StatusCreated)
		want(t, h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + prop, body: map[string]any{"name": "Renamed"}}), http.StatusOK)
		// A key that may only read cannot wipe the sandbox.
		reader := h.testKey(f, rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeTenantsRead, rental.ScopeBillsRead)
		res := h.do(req{key: reader, method: "POST", path: "/v1/test-helpers/sandbox/reset"})
		want(t, res, http.StatusForbidden, "insufficient_scope")
		if res.errField("scope") != "properties:write" {
			t.Fatalf("reset needs %q", res.errField("scope"))
		}
		if n := len(all("/v1/properties")); n != 3 {
			t.Fatalf("%d properties after a refused reset", n)
		}
		res = h.do(req{key: h.testKey(f, rental.ScopePropertiesWrite), method: "POST", path: "/v1/test-helpers/sandbox/reset"})
		want(t, res, http.StatusOK)
		if u := res.data()["usage"].(map[string]any); u["properties"] != 2.0 || u["rooms"] != 8.0 {
			t.Fatalf("usage after reset %v", u)
		}
		if n := len(all("/v1/bills?limit=100")); n != 10 {
			t.Fatalf("%d bills after reset", n)
		}
		if n := len(all("/v1/events")); n != 0 {
			t.Fatalf("%d events after reset", n)
		}
		// A live key cannot reset anything.
		live := h.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
		want(t, h.do(req{key: live, method: "POST", path: "/v1/test-helpers/sandbox/reset"}), http.StatusForbidden, "test_mode_only")
	})
}

// The sandbox holds at most 500 rooms.
func TestSandboxRoomLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	f := h.fixture(rental.PlanEnterprise)
	key := h.testKey(f)
	acct := f.Sandbox(t, h.e.DB)
	prop := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Big")}).data()["id"].(string)
	err := h.e.DB.InTx(t.Context(), func(tx *store.Tx) error {
		for i := range 492 { // 8 sample rooms + 492 = 500
			r, _ := rental.NewRoom(prop, rental.RoomChange{Number: rental.Of(itoa(int64(i))), MonthlyRent: rental.Of[int64](1)})
			if _, err := tx.CreateRoom(context.Background(), acct, r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want(t, h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop + "/rooms", body: map[string]any{"number": "X", "monthly_rent": 1}}),
		http.StatusTooManyRequests, "sandbox_limit")
}

// A key sees only the events whose data it could read, and only for 30 days.
func TestEventVisibility(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		all := h.testKey(f)
		room := h.do(req{key: all, method: "GET", path: "/v1/rooms?status=vacant&limit=1"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		want(t, h.do(req{key: all, method: "PATCH", path: "/v1/rooms/" + room, body: map[string]any{"monthly_rent": 420000}}), http.StatusOK)
		want(t, h.do(req{key: all, method: "POST", path: "/v1/rooms/" + room + "/tenant", body: map[string]any{"name": "Ploy", "phone": "0899999999"}}), http.StatusCreated)
		count := func(key, path string) int {
			res := h.do(req{key: key, method: "GET", path: path})
			want(t, res, http.StatusOK)
			return len(res.json()["data"].([]any))
		}
		if n := count(all, "/v1/events"); n != 3 { // room.updated, tenant.created, room.updated
			t.Fatalf("%d events", n)
		}
		roomsOnly := h.testKey(f, rental.ScopeRoomsRead)
		tenantsOnly := h.testKey(f, rental.ScopeTenantsRead)
		nothing := h.testKey(f, rental.ScopeBillsWrite)
		if count(roomsOnly, "/v1/events") != 2 || count(tenantsOnly, "/v1/events") != 1 || count(nothing, "/v1/events") != 0 {
			t.Fatal("events shown beyond the key's read scopes")
		}
		tenantEvent := h.do(req{key: all, method: "GET", path: "/v1/events?type=tenant.created"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		want(t, h.do(req{key: tenantsOnly, method: "GET", path: "/v1/events/" + tenantEvent}), http.StatusOK)
		want(t, h.do(req{key: roomsOnly, method: "GET", path: "/v1/events/" + tenantEvent}), http.StatusNotFound, "resource_not_found")
		if count(all, "/v1/events?type=room.*") != 2 || count(all, "/v1/events?type=tenant.line_registered") != 0 {
			t.Fatal("type filter")
		}
		want(t, h.do(req{key: all, method: "GET", path: "/v1/events?type=room.%25"}), http.StatusBadRequest, "invalid_parameter")
		since := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC).Add(time.Hour).Format(time.RFC3339)
		if count(all, "/v1/events?created_after="+since) != 0 {
			t.Fatal("created_after")
		}
		// After 30 days they are gone from the list, and the retention job deletes them.
		e.Clock.Advance(31 * 24 * time.Hour)
		if count(all, "/v1/events") != 0 {
			t.Fatal("events older than 30 days are listed")
		}
		if n, err := e.DB.PurgeEvents(t.Context()); err != nil || n != 3 {
			t.Fatalf("purged %d (%v)", n, err)
		}
	})
}
