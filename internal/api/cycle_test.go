package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// A landlord's month through the API, as in the spec's "What the service
// does" §8 up to the bill: a property and a room, a tenant moves in, two
// months of readings, both billed, a reading corrected and its bill
// recalculated, and every change listed as an event, in order.
func TestMonthlyCycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		do := func(method, path string, body any, status int) map[string]any {
			t.Helper()
			res := h.do(req{key: key, method: method, path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
			want(t, res, status)
			return res.data()
		}
		prop := do("POST", "/v1/properties", map[string]any{"name": "Baan Rak", "electricity_rate": 800, "water_rate": 1800, "due_day": 5}, 201)
		room := do("POST", "/v1/properties/"+prop["id"].(string)+"/rooms", map[string]any{"number": "301", "floor": 3, "monthly_rent": 350000}, 201)
		roomID := room["id"].(string)
		if room["status"] != "vacant" || room["tenant_id"] != nil || room["currency"] != "THB" {
			t.Fatalf("room %v", room)
		}
		tenant := do("POST", "/v1/rooms/"+roomID+"/tenant", map[string]any{"name": "Malee Sukjai", "phone": "081 234 5678", "email": "malee@example.com"}, 201)
		if tenant["phone"] != "+66812345678" || tenant["chat_enabled"] != true || tenant["moved_out_at"] != nil {
			t.Fatalf("tenant %v", tenant)
		}
		if r := do("GET", "/v1/rooms/"+roomID, nil, 200); r["status"] != "occupied" || r["tenant_id"] != tenant["id"] {
			t.Fatalf("room after move-in %v", r)
		}
		// October and November readings; November's previous defaults to October's current.
		oct := do("POST", "/v1/meter-readings", map[string]any{"room_id": roomID, "month": "2026-10",
			"electricity": map[string]any{"previous": 1200, "current": 1320.5}, "water": map[string]any{"previous": 300, "current": 306}}, 201)
		// The landlord raises the electricity rate: months recorded later use it.
		do("PATCH", "/v1/properties/"+prop["id"].(string), map[string]any{"electricity_rate": 900}, 200)
		nov := do("POST", "/v1/meter-readings", map[string]any{"room_id": roomID, "month": "2026-11",
			"electricity": map[string]any{"current": 1450}, "water": map[string]any{"current": 311.5}}, 201)
		ne := nov["electricity"].(map[string]any)
		if ne["previous"] != 1320.5 || ne["usage"] != 129.5 || ne["rate"] != 900.0 || oct["electricity"].(map[string]any)["rate"] != 800.0 {
			t.Fatalf("november reading %v", nov)
		}
		res := h.do(req{key: key, method: "POST", path: "/v1/meter-readings", body: map[string]any{"room_id": roomID, "month": "2026-11",
			"electricity": map[string]any{"current": 1500}, "water": map[string]any{"current": 320}}})
		want(t, res, http.StatusConflict, "resource_exists")
		if res.errField("resource_id") != nov["id"] {
			t.Fatalf("resource_exists names %q", res.errField("resource_id"))
		}
		// Bill both months.
		billOct := do("POST", "/v1/bills", map[string]any{"room_id": roomID, "month": "2026-10"}, 201)
		billNov := do("POST", "/v1/bills", map[string]any{"room_id": roomID, "month": "2026-11", "issue": false}, 201)
		// October: rent 350000 + 120.5 kWh × 800 = 96400 + 6 m³ × 1800 = 10800.
		if billOct["total"] != 457200.0 || billOct["status"] != "issued" || billOct["due_date"] != "2026-11-05" || billOct["tenant_id"] != tenant["id"] {
			t.Fatalf("october bill %v", billOct)
		}
		// November, a draft: 129.5 × 900 = 116550, 5.5 × 1800 = 9900.
		if billNov["total"] != 476450.0 || billNov["status"] != "draft" || billNov["issued_at"] != nil {
			t.Fatalf("november bill %v", billNov)
		}
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills", body: map[string]any{"room_id": roomID, "month": "2026-10"}}), http.StatusConflict, "resource_exists")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills", body: map[string]any{"room_id": roomID, "month": "2026-12"}}), http.StatusConflict, "reading_required")
		// Correct November's electricity: the draft is recalculated in place.
		corrected := do("PATCH", "/v1/meter-readings/"+nov["id"].(string), map[string]any{"electricity": map[string]any{"current": 1440}}, 200)
		if corrected["bill_id"] != billNov["id"] || corrected["electricity"].(map[string]any)["usage"] != 119.5 {
			t.Fatalf("corrected reading %v", corrected)
		}
		after := do("GET", "/v1/bills/"+billNov["id"].(string), nil, 200)
		if after["total"] != 467450.0 || after["status"] != "draft" {
			t.Fatalf("recalculated bill %v", after)
		}
		issued := do("POST", "/v1/bills/"+billNov["id"].(string)+"/issue", nil, 200)
		if issued["status"] != "issued" || issued["issued_at"] == nil {
			t.Fatalf("issued %v", issued)
		}
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills/" + billNov["id"].(string) + "/issue"}), http.StatusConflict, "invalid_state")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/bills/" + billNov["id"].(string)}), http.StatusConflict, "invalid_state")
		// The tenant pays November: a payment link, then the simulated payment.
		link := do("POST", "/v1/bills/"+billNov["id"].(string)+"/payment-link", nil, 201)
		if link["amount"] != 467450.0 || link["active"] != true {
			t.Fatalf("payment link %v", link)
		}
		payment := do("POST", "/v1/test-helpers/payments", map[string]any{"bill_id": billNov["id"], "outcome": "paid"}, 200)
		if payment["status"] != "paid" || payment["amount_paid"] != 467450.0 || payment["payment_url"] != link["url"] {
			t.Fatalf("payment %v", payment)
		}
		if paid := do("GET", "/v1/bills/"+billNov["id"].(string), nil, 200); paid["status"] != "paid" || paid["amount_paid"] != 467450.0 {
			t.Fatalf("paid bill %v", paid)
		}
		// Filters.
		list := func(path string) int {
			res := h.do(req{key: key, method: "GET", path: path})
			want(t, res, http.StatusOK)
			return len(res.json()["data"].([]any))
		}
		for path, n := range map[string]int{
			"/v1/bills?room_id=" + roomID:                                          2,
			"/v1/bills?room_id=" + roomID + "&month=2026-10":                       1,
			"/v1/bills?room_id=" + roomID + "&from_month=2026-11&to_month=2026-12": 1,
			"/v1/bills?tenant_id=" + tenant["id"].(string):                         2,
			"/v1/bills?property_id=" + prop["id"].(string) + "&status=issued":      1,
			"/v1/payments?bill_id=" + billNov["id"].(string) + "&status=paid":      1,
			"/v1/meter-readings?room_id=" + roomID + "&from_month=2026-10":         2,
			"/v1/tenants?room_id=" + roomID:                                        1,
			"/v1/meters?room_id=" + roomID:                                         2,
			"/v1/meters?room_id=" + roomID + "&kind=water":                         1,
			"/v1/rooms?property_id=" + prop["id"].(string) + "&status=occupied":    1,
			"/v1/properties/" + prop["id"].(string) + "/rooms":                     1,
		} {
			if got := list(path); got != n {
				t.Errorf("%s: %d items, want %d", path, got, n)
			}
		}
		// Of several bad filters, the first the list names is the one
		// refused, every time.
		for range 8 {
			res := h.do(req{key: key, method: "GET", path: "/v1/bills?tenant_id=x-y&room_id=x-y&property_id=x-y"})
			want(t, res, http.StatusBadRequest, "invalid_parameter")
			if p := res.json()["error"].(map[string]any)["param"]; p != "property_id" {
				t.Fatalf("refused %v first, want property_id", p)
			}
		}
		meters := h.do(req{key: key, method: "GET", path: "/v1/meters?room_id=" + roomID + "&kind=electricity"}).json()["data"].([]any)
		if m := meters[0].(map[string]any); m["last_value"] != 1440.0 || m["last_month"] != "2026-11" || m["unit"] != "kWh" {
			t.Fatalf("meter %v", m)
		}
		// Move out: the record stays, the room is vacant.
		out := do("DELETE", "/v1/rooms/"+roomID+"/tenant", nil, 200)
		if out["moved_out_at"] == nil {
			t.Fatalf("moved out %v", out)
		}
		if list("/v1/tenants?room_id="+roomID) != 0 || list("/v1/tenants?room_id="+roomID+"&include_moved_out=true") != 1 {
			t.Fatal("moved-out tenant listing")
		}
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/rooms/" + roomID + "/tenant"}), http.StatusNotFound, "resource_not_found")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/rooms/" + roomID}), http.StatusConflict, "room_has_bills")

		// The events, oldest first, are exactly the changes made.
		var types []string
		cursor := ""
		for {
			path := "/v1/events?order=asc&limit=100"
			if cursor != "" {
				path += "&cursor=" + cursor
			}
			res := h.do(req{key: key, method: "GET", path: path})
			for _, it := range res.json()["data"].([]any) {
				ev := it.(map[string]any)
				types = append(types, ev["type"].(string))
				if ev["object"] != "event" || ev["api_version"] != "v1" || ev["mode"] != "test" || ev["data"].(map[string]any)["object"] == nil {
					t.Fatalf("event %v", ev)
				}
			}
			pg := res.json()["pagination"].(map[string]any)
			if pg["has_more"] != true {
				break
			}
			cursor = pg["next_cursor"].(string)
		}
		wantTypes := []string{"property.created", "room.created", "tenant.created", "room.updated", "meter.reading.created",
			"property.updated", "meter.reading.created", "bill.created", "bill.created", "meter.reading.updated", "bill.updated",
			"bill.updated", "payment.pending", "payment.paid", "bill.updated", "tenant.deleted", "room.updated"}
		if fmt.Sprint(types) != fmt.Sprint(wantTypes) {
			t.Fatalf("events\n got %v\nwant %v", types, wantTypes)
		}
		// data.object is the object exactly as the API returned it then.
		evs := h.do(req{key: key, method: "GET", path: "/v1/events?type=bill.created&order=asc"}).json()["data"].([]any)
		first := evs[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
		if first["id"] != billOct["id"] || first["total"] != billOct["total"] {
			t.Fatalf("bill.created carries %v", first)
		}
		if n := len(h.do(req{key: key, method: "GET", path: "/v1/events?type=bill.*"}).json()["data"].([]any)); n != 5 {
			t.Fatalf("%d bill.* events", n)
		}
	})
}

// Rooms follow their state rules.
func TestRoomRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		prop := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Rules")}).data()["id"].(string)
		rooms := "/v1/properties/" + prop + "/rooms"
		room := h.do(req{key: key, method: "POST", path: rooms, body: map[string]any{"number": "1", "monthly_rent": 300000}}).data()["id"].(string)
		want(t, h.do(req{key: key, method: "POST", path: rooms, body: map[string]any{"number": "1", "monthly_rent": 1}}), http.StatusConflict, "room_number_taken")
		want(t, h.do(req{key: key, method: "POST", path: rooms, body: map[string]any{"number": "2", "monthly_rent": 1, "status": "occupied"}}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "POST", path: rooms, body: map[string]any{"monthly_rent": 1}}), http.StatusBadRequest, "parameter_missing")
		want(t, h.do(req{key: key, method: "PATCH", path: "/v1/rooms/" + room, body: map[string]any{"status": "occupied"}}), http.StatusConflict, "invalid_state")
		want(t, h.do(req{key: key, method: "PATCH", path: "/v1/rooms/" + room, body: map[string]any{"number": "9"}}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "PATCH", path: "/v1/rooms/" + room, body: map[string]any{"status": "maintenance", "monthly_rent": 320000}}), http.StatusOK)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/rooms/" + room + "/tenant", body: map[string]any{"name": "A", "phone": "0812345678"}}), http.StatusCreated)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/rooms/" + room + "/tenant", body: map[string]any{"name": "B", "phone": "0812345679"}}), http.StatusConflict, "room_occupied")
		want(t, h.do(req{key: key, method: "PATCH", path: "/v1/rooms/" + room, body: map[string]any{"status": "vacant"}}), http.StatusConflict, "invalid_state")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/rooms/" + room}), http.StatusConflict, "room_occupied")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + prop}), http.StatusConflict, "property_not_empty")
		want(t, h.do(req{key: key, method: "POST", path: "/v1/rooms/" + room + "/tenant", body: map[string]any{"name": "C", "phone": "12345"}}), http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/rooms/" + room + "/tenant"}), http.StatusOK)
		// A reading and a draft bill go with the room; the property is then empty.
		want(t, h.do(req{key: key, method: "POST", path: "/v1/meter-readings", body: map[string]any{"room_id": room, "month": "2026-11",
			"electricity": map[string]any{"current": 10}, "water": map[string]any{"current": 1}}}), http.StatusCreated)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/bills", body: map[string]any{"room_id": room, "month": "2026-11", "issue": false}}), http.StatusCreated)
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/rooms/" + room}), http.StatusNoContent)
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + prop}), http.StatusNoContent)
		// Reading bodies are checked part by part.
		sample := h.do(req{key: key, method: "GET", path: "/v1/rooms?status=vacant&limit=1"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		for body, param := range map[string]string{
			`{"room_id":"` + sample + `","month":"2026-13","electricity":{"current":1},"water":{"current":1}}`:         "month",
			`{"room_id":"` + sample + `","month":"2026-12","water":{"current":1}}`:                                     "electricity",
			`{"room_id":"` + sample + `","month":"2026-12","electricity":{"current":-1},"water":{"current":1}}`:        "electricity.current",
			`{"room_id":"` + sample + `","month":"2026-12","electricity":{"current":1.0001},"water":{"current":1}}`:    "electricity.current",
			`{"room_id":"` + sample + `","month":"2026-12","electricity":{"current":1,"kwh":2},"water":{"current":1}}`: "electricity.kwh",
			`{"room_id":"` + sample + `","month":"2026-12","electricity":5,"water":{"current":1}}`:                     "electricity",
		} {
			res := h.do(req{key: key, method: "POST", path: "/v1/meter-readings", body: body})
			if res.status != 400 || res.errField("param") != param {
				t.Errorf("%s: %d %s, want param %s", body, res.status, res.body, param)
			}
		}
	})
}

// Another account's IDs in a body answer 404 and change nothing, and in a
// filter find nothing. (IDs in paths: TestForeignIDsOnEveryRoute.)
func TestCycleCrossAccount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		mine, theirs := h.testKey(h.fixture(rental.PlanEnterprise)), h.testKey(h.fixture(rental.PlanEnterprise))
		first := func(key, path string) string {
			return h.do(req{key: key, method: "GET", path: path + "?limit=1"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		}
		prop, room, tenant := first(theirs, "/v1/properties"), first(theirs, "/v1/rooms"), first(theirs, "/v1/tenants")
		h.do(req{key: theirs, method: "PATCH", path: "/v1/rooms/" + room, body: map[string]any{"monthly_rent": 1}})
		part := map[string]any{"current": 99999}
		for _, rq := range []req{
			{method: "POST", path: "/v1/meter-readings", body: map[string]any{"room_id": room, "month": "2027-01", "electricity": part, "water": part}},
			{method: "POST", path: "/v1/bills", body: map[string]any{"room_id": room, "month": "2026-11"}},
		} {
			rq.key = mine
			want(t, h.do(rq), http.StatusNotFound, "resource_not_found")
		}
		// Filters with another account's IDs find nothing.
		for _, path := range []string{"/v1/rooms?property_id=" + prop, "/v1/tenants?room_id=" + room, "/v1/meters?room_id=" + room,
			"/v1/meter-readings?room_id=" + room, "/v1/bills?tenant_id=" + tenant} {
			if n := len(h.do(req{key: mine, method: "GET", path: path}).json()["data"].([]any)); n != 0 {
				t.Fatalf("%s shows %d of another account's objects", path, n)
			}
		}
		if r := h.do(req{key: theirs, method: "GET", path: "/v1/rooms/" + room}).data(); r["monthly_rent"] != 1.0 {
			t.Fatalf("their room changed: %v", r)
		}
	})
}

// Each route of the cycle is refused without its scope and allowed with it
// alone.
func TestCycleScopeMatrix(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		all := h.testKey(f)
		post := func(path string, body any) string {
			t.Helper()
			res := h.do(req{key: all, method: "POST", path: path, body: body})
			if res.status >= 300 {
				t.Fatalf("setup %s: %d %s", path, res.status, res.body)
			}
			return res.data()["id"].(string)
		}
		n := 0
		prop := post("/v1/properties", property("Scopes"))
		room := func() string {
			n++
			return post("/v1/properties/"+prop+"/rooms", map[string]any{"number": itoa(int64(n)), "monthly_rent": 100000})
		}
		occupied := func() string {
			r := room()
			post("/v1/rooms/"+r+"/tenant", map[string]any{"name": "T", "phone": "0812345678"})
			return r
		}
		reading := func(r string) string {
			return post("/v1/meter-readings", map[string]any{"room_id": r, "month": "2026-11",
				"electricity": map[string]any{"current": 10}, "water": map[string]any{"current": 1}})
		}
		draft := func() string {
			r := room()
			reading(r)
			return post("/v1/bills", map[string]any{"room_id": r, "month": "2026-11", "issue": false})
		}
		first := func(path string) string {
			return h.do(req{key: all, method: "GET", path: path + "?limit=1"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		}
		cases := []struct {
			scope rental.Scope
			req   func() req
		}{
			{rental.ScopeRoomsRead, func() req { return req{method: "GET", path: "/v1/rooms"} }},
			{rental.ScopeRoomsRead, func() req { return req{method: "GET", path: "/v1/properties/" + prop + "/rooms"} }},
			{rental.ScopeRoomsRead, func() req { return req{method: "GET", path: "/v1/rooms/" + room()} }},
			{rental.ScopeRoomsWrite, func() req {
				n++
				return req{method: "POST", path: "/v1/properties/" + prop + "/rooms", body: map[string]any{"number": "w" + itoa(int64(n)), "monthly_rent": 1}}
			}},
			{rental.ScopeRoomsWrite, func() req {
				return req{method: "PATCH", path: "/v1/rooms/" + room(), body: map[string]any{"monthly_rent": 5}}
			}},
			{rental.ScopeRoomsWrite, func() req { return req{method: "DELETE", path: "/v1/rooms/" + room()} }},
			{rental.ScopeTenantsWrite, func() req {
				return req{method: "POST", path: "/v1/rooms/" + room() + "/tenant", body: map[string]any{"name": "A", "phone": "0812345678"}}
			}},
			{rental.ScopeTenantsWrite, func() req { return req{method: "DELETE", path: "/v1/rooms/" + occupied() + "/tenant"} }},
			{rental.ScopeTenantsWrite, func() req {
				return req{method: "PATCH", path: "/v1/tenants/" + first("/v1/tenants"), body: map[string]any{"occupants": 2}}
			}},
			{rental.ScopeTenantsRead, func() req { return req{method: "GET", path: "/v1/tenants"} }},
			{rental.ScopeTenantsRead, func() req { return req{method: "GET", path: "/v1/tenants/" + first("/v1/tenants")} }},
			{rental.ScopeMetersRead, func() req { return req{method: "GET", path: "/v1/meters"} }},
			{rental.ScopeMetersRead, func() req { return req{method: "GET", path: "/v1/meters/" + first("/v1/meters")} }},
			{rental.ScopeMetersRead, func() req { return req{method: "GET", path: "/v1/meter-readings"} }},
			{rental.ScopeMetersRead, func() req { return req{method: "GET", path: "/v1/meter-readings/" + first("/v1/meter-readings")} }},
			{rental.ScopeMetersWrite, func() req {
				return req{method: "POST", path: "/v1/meter-readings", body: map[string]any{"room_id": room(), "month": "2026-11",
					"electricity": map[string]any{"current": 1}, "water": map[string]any{"current": 1}}}
			}},
			{rental.ScopeMetersWrite, func() req {
				return req{method: "PATCH", path: "/v1/meter-readings/" + reading(room()), body: map[string]any{"water": map[string]any{"current": 2}}}
			}},
			{rental.ScopeBillsRead, func() req { return req{method: "GET", path: "/v1/bills"} }},
			{rental.ScopeBillsRead, func() req { return req{method: "GET", path: "/v1/bills/" + first("/v1/bills")} }},
			{rental.ScopeBillsWrite, func() req {
				r := room()
				reading(r)
				return req{method: "POST", path: "/v1/bills", body: map[string]any{"room_id": r, "month": "2026-11"}}
			}},
			{rental.ScopeBillsWrite, func() req { return req{method: "POST", path: "/v1/bills/" + draft() + "/issue"} }},
			{rental.ScopeBillsWrite, func() req { return req{method: "DELETE", path: "/v1/bills/" + draft()} }},
		}
		keys := map[rental.Scope][2]string{}
		for _, c := range cases {
			if _, ok := keys[c.scope]; !ok {
				others := rental.Scopes{}
				for _, s := range rental.AllScopes {
					if s != c.scope {
						others = append(others, s)
					}
				}
				keys[c.scope] = [2]string{h.testKey(f, others...), h.testKey(f, c.scope)}
			}
			r := c.req()
			r.key = keys[c.scope][0]
			res := h.do(r)
			want(t, res, http.StatusForbidden, "insufficient_scope")
			if res.errField("scope") != string(c.scope) {
				t.Fatalf("%s %s: scope %q", r.method, r.path, res.errField("scope"))
			}
			r = c.req()
			r.key = keys[c.scope][1]
			if res := h.do(r); res.status >= 300 {
				t.Fatalf("%s %s with %s: %d %s", r.method, r.path, c.scope, res.status, res.body)
			}
		}
	})
}

// A landlord's plan limits rooms too: the free plan holds 30.
func TestRoomPlanLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.AllScopes)
		key := h.liveKey(f, acct.ID)
		prop := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Small")}).data()["id"].(string)
		for i := range rental.LandlordFree.Capacity().Rooms {
			want(t, h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop + "/rooms", body: map[string]any{"number": itoa(int64(i)), "monthly_rent": 1}}), http.StatusCreated)
		}
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties/" + prop + "/rooms", body: map[string]any{"number": "last", "monthly_rent": 1}}),
			http.StatusForbidden, "plan_limit_reached")
	})
}
