package api_test

import (
	"net/http"
	"reflect"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// TestTenantChatLink checks that every answer showing a tenant, and the
// body of every tenant event, carries the service's add-friend link as
// chat_registration_url: the link is configuration, not a tenant's row,
// and the event's object is the object the API answers.
func TestTenantChatLink(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		id := billTenant(t, h, p)
		do := func(method, path string, body any) *result {
			t.Helper()
			res := h.do(req{key: p.key, method: method, path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
			want(t, res, http.StatusOK)
			return res
		}
		check := func(what string, obj any) {
			t.Helper()
			if m, _ := obj.(map[string]any); m["id"] != id || m["chat_registration_url"] != storetest.AddFriendURL {
				t.Errorf("%s: %v; want chat_registration_url %s", what, obj, storetest.AddFriendURL)
			}
		}
		got := do("GET", "/v1/tenants/"+id, nil).data()
		check("GET", got)
		room := got["room_id"].(string)
		list, _ := do("GET", "/v1/tenants?room_id="+room, nil).json()["data"].([]any)
		if len(list) != 1 {
			t.Fatalf("list: %d tenants; want 1", len(list))
		}
		check("list", list[0])
		check("PATCH", do("PATCH", "/v1/tenants/"+id, map[string]any{"name": "Malee S."}).data())
		out := do("DELETE", "/v1/rooms/"+room+"/tenant", nil).data()
		check("move-out", out)

		for _, typ := range []string{"tenant.created", "tenant.updated", "tenant.deleted"} {
			events, _ := do("GET", "/v1/events?type="+typ, nil).json()["data"].([]any)
			if len(events) != 1 {
				t.Fatalf("%s: %d events; want 1", typ, len(events))
			}
			obj := events[0].(map[string]any)["data"].(map[string]any)["object"]
			check(typ, obj)
			if typ == "tenant.deleted" && !reflect.DeepEqual(obj, any(out)) {
				t.Errorf("tenant.deleted's object %v; the move-out answered %v", obj, out)
			}
		}
	})
}
