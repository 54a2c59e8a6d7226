package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// tenancy is a sandbox key with a do that fails the test on an unexpected
// status, over the storetest clock (2026-11-22 10:00 in Bangkok).
type tenancy struct {
	h   *harness
	key string
	do  func(method, path string, body any, status int, code ...string) *result
}

func newTenancy(t *testing.T, h *harness) *tenancy {
	tn := &tenancy{h: h, key: h.testKey(h.fixture(rental.PlanEnterprise))}
	tn.do = func(method, path string, body any, status int, code ...string) *result {
		t.Helper()
		res := h.do(req{key: tn.key, method: method, path: path, body: body})
		want(t, res, status, code...)
		return res
	}
	return tn
}

// room makes a room of prop with rent 450000.
func (tn *tenancy) room(prop, number string) string {
	return tn.do("POST", "/v1/properties/"+prop+"/rooms", map[string]any{"number": number, "monthly_rent": 450000}, http.StatusCreated).data()["id"].(string)
}

// read records a room's month: 100 kWh × 800 and 5 m³ × 1800 (89000)
// after the room's last reading.
func (tn *tenancy) read(room, month string, n int) {
	tn.do("POST", "/v1/meter-readings", map[string]any{"room_id": room, "month": month,
		"electricity": map[string]any{"previous": 900 + 100*n, "current": 1000 + 100*n}, "water": map[string]any{"previous": 95 + 5*n, "current": 100 + 5*n}},
		http.StatusCreated)
}

// dailyProperty is a property with daily proration.
func (tn *tenancy) dailyProperty(name string) string {
	p := property(name)
	p["proration"] = "daily"
	return tn.do("POST", "/v1/properties", p, http.StatusCreated).data()["id"].(string)
}

// Move-in takes a deposit and a lease end, shown on the tenant, changed by
// PATCH; old tenants read 0 and null; each refusal names its field with
// nothing written.
func TestTenantDeposit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tn := newTenancy(t, newHarness(t, e))
		prop := tn.do("POST", "/v1/properties", property("Baan Deposit"), http.StatusCreated).data()["id"].(string)
		room, plain := tn.room(prop, "101"), tn.room(prop, "102")
		for _, tc := range []struct {
			body  map[string]any
			param string
		}{
			{map[string]any{"deposit": -1}, "deposit"},
			{map[string]any{"deposit": 100_000_001}, "deposit"},
			{map[string]any{"deposit": 1.5}, "deposit"},
			{map[string]any{"lease_end": "2026-11-16", "moved_in_at": "2026-11-17T03:00:00Z"}, "lease_end"},
			{map[string]any{"lease_end": "17/11/2027"}, "lease_end"},
		} {
			tc.body["name"], tc.body["phone"] = "Somchai", "0812345678"
			res := tn.do("POST", "/v1/rooms/"+room+"/tenant", tc.body, http.StatusBadRequest, "invalid_parameter")
			if res.errField("param") != tc.param {
				t.Errorf("%v: param %q, want %s", tc.body, res.errField("param"), tc.param)
			}
		}
		if r := tn.do("GET", "/v1/rooms/"+room, nil, http.StatusOK).data(); r["status"] != "vacant" {
			t.Fatalf("a refused move-in left the room %v", r["status"])
		}
		in := tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Somchai", "phone": "0812345678", "deposit": 100_000_000,
			"lease_end": "2026-11-17", "moved_in_at": "2026-11-17T03:00:00Z"}, http.StatusCreated).data()
		if in["deposit"] != 100_000_000.0 || in["lease_end"] != "2026-11-17" {
			t.Fatalf("tenant %v", in)
		}
		id := in["id"].(string)
		old := tn.do("POST", "/v1/rooms/"+plain+"/tenant", map[string]any{"name": "Suda", "phone": "0898765432"}, http.StatusCreated).data()
		if old["deposit"] != 0.0 || old["lease_end"] != nil {
			t.Fatalf("a tenant without deposit: %v", old)
		}
		got := tn.do("PATCH", "/v1/tenants/"+id, map[string]any{"deposit": 900000, "lease_end": "2027-11-16"}, http.StatusOK).data()
		if got["deposit"] != 900000.0 || got["lease_end"] != "2027-11-16" {
			t.Fatalf("patched %v", got)
		}
		res := tn.do("PATCH", "/v1/tenants/"+id, map[string]any{"lease_end": "2026-11-01"}, http.StatusBadRequest, "invalid_parameter")
		if res.errField("param") != "lease_end" {
			t.Fatalf("param %q", res.errField("param"))
		}
		got = tn.do("PATCH", "/v1/tenants/"+id, map[string]any{"lease_end": nil}, http.StatusOK).data()
		if got = tn.do("GET", "/v1/tenants/"+id, nil, http.StatusOK).data(); got["deposit"] != 900000.0 || got["lease_end"] != nil {
			t.Fatalf("read back %v", got)
		}
	})
}

// With daily proration the month of moving in is billed by the days lived
// there, by POST /v1/bills and by the bill run alike; a month one tenant
// left and another came into is the newcomer's, by the newcomer's days.
func TestProratedRent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		tn := newTenancy(t, newHarness(t, e))
		none := tn.do("POST", "/v1/properties", property("Baan None"), http.StatusCreated).data()
		if none["proration"] != "none" {
			t.Fatalf("default proration %v", none["proration"])
		}
		res := tn.do("PATCH", "/v1/properties/"+none["id"].(string), map[string]any{"proration": "weekly"}, http.StatusBadRequest, "invalid_parameter")
		if res.errField("param") != "proration" {
			t.Fatalf("param %q", res.errField("param"))
		}
		prop := tn.dailyProperty("Baan Daily")
		one, run, swap, full := tn.room(prop, "201"), tn.room(prop, "202"), tn.room(prop, "203"), tn.room(none["id"].(string), "101")
		for room, in := range map[string]string{one: "2026-11-17T03:00:00Z", run: "2026-11-05T03:00:00Z", swap: "2026-10-01T03:00:00Z", full: "2026-11-17T03:00:00Z"} {
			tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Somchai", "phone": "0812345678", "moved_in_at": in}, http.StatusCreated)
		}
		// The tenant of 203 leaves today (the 22nd) and another comes.
		tn.do("DELETE", "/v1/rooms/"+swap+"/tenant", nil, http.StatusOK)
		newcomer := tn.do("POST", "/v1/rooms/"+swap+"/tenant", map[string]any{"name": "Suda", "phone": "0898765432"}, http.StatusCreated).data()["id"].(string)
		for _, room := range []string{one, run, swap, full} {
			tn.read(room, "2026-11", 1)
		}
		b := tn.do("POST", "/v1/bills", map[string]any{"room_id": one, "month": "2026-11"}, http.StatusCreated).data()
		if b["rent"] != 210000.0 || strings.Join(lines(b), " ") != "rent:Rent (14 of 30 days):210000 electricity:Electricity:80000 water:Water:9000" || b["total"] != 299000.0 {
			t.Fatalf("prorated bill: rent %v, %v, total %v", b["rent"], lines(b), b["total"])
		}
		f := tn.do("POST", "/v1/bills", map[string]any{"room_id": full, "month": "2026-11"}, http.StatusCreated).data()
		if f["rent"] != 450000.0 || lines(f)[0] != "rent:Rent:450000" {
			t.Fatalf("without proration: %v", lines(f))
		}
		tn.do("POST", "/v1/properties/"+prop+"/bills", map[string]any{"month": "2026-11"}, http.StatusOK)
		byRoom := map[any]map[string]any{}
		for _, b := range list(t, tn.h, tn.key, "/v1/bills?property_id="+prop) {
			byRoom[b["room_id"]] = b
		}
		if b := byRoom[run]; b["rent"] != 390000.0 || lines(b)[0] != "rent:Rent (26 of 30 days):390000" {
			t.Fatalf("bill run: %v", lines(b))
		}
		if b := byRoom[swap]; b["tenant_id"] != newcomer || b["rent"] != 135000.0 || lines(b)[0] != "rent:Rent (9 of 30 days):135000" {
			t.Fatalf("the newcomer's month: tenant %v, %v", b["tenant_id"], lines(b))
		}
	})
}

// Every refusal of a move-out is a clear 4xx naming the field, and leaves
// the tenant in with nothing written; settlements of another account are
// 404, a closed settlement cannot close again.
func TestMoveOutRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		tn := newTenancy(t, h)
		other := newTenancy(t, h)
		prop := tn.dailyProperty("Baan Refusal")
		room, empty := tn.room(prop, "301"), tn.room(prop, "302")
		tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Somchai", "phone": "0812345678", "deposit": 500000,
			"moved_in_at": "2026-10-01T03:00:00Z"}, http.StatusCreated)
		tn.read(room, "2026-10", 1)
		tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": "2026-10"}, http.StatusCreated)
		events := len(list(t, h, tn.key, "/v1/events?limit=100"))
		var nov string
		deductions := make([]any, 21)
		for i := range deductions {
			deductions[i] = map[string]any{"description": "Cleaning", "amount": 100}
		}
		reading := func(current any) map[string]any {
			return map[string]any{"electricity": map[string]any{"current": current}, "water": map[string]any{"current": 200}}
		}
		type refusal struct {
			name        string
			body        map[string]any
			status      int
			code, param string
		}
		refuse := func(tc refusal) {
			t.Helper()
			res := tn.do("POST", "/v1/rooms/"+room+"/tenant/move-out", tc.body, tc.status, tc.code)
			if res.errField("param") != tc.param {
				t.Errorf("%s: param %q, want %q (%s)", tc.name, res.errField("param"), tc.param, res.body)
			}
			if tc.name == "out in a month before a bill" && !strings.Contains(res.errField("message"), nov) {
				t.Errorf("the refusal does not name the bill %s: %s", nov, res.body)
			}
		}
		for _, tc := range []refusal{
			{"out before in", map[string]any{"moved_out_at": "2026-09-30T03:00:00Z"}, 400, "invalid_parameter", "moved_out_at"},
			{"out in the future", map[string]any{"moved_out_at": "2026-12-01T03:00:00Z"}, 400, "invalid_parameter", "moved_out_at"},
			{"out not a time", map[string]any{"moved_out_at": "tomorrow"}, 400, "invalid_parameter", "moved_out_at"},
			{"a reading below the last", map[string]any{"final_reading": reading(1050)}, 400, "invalid_parameter", "final_reading.electricity.current"},
			{"a reading without water", map[string]any{"final_reading": map[string]any{"electricity": map[string]any{"current": 1300}}}, 400, "parameter_missing", "final_reading.water"},
			{"a reading not an object", map[string]any{"final_reading": 5}, 400, "invalid_parameter", "final_reading"},
			{"21 deductions", map[string]any{"deductions": deductions}, 400, "invalid_parameter", "deductions"},
			{"a deduction of 0", map[string]any{"deductions": []any{map[string]any{"description": "Key", "amount": 0}}}, 400, "invalid_parameter", "deductions[0].amount"},
			{"a blank description", map[string]any{"deductions": []any{map[string]any{"description": " ", "amount": 100}}}, 400, "invalid_parameter", "deductions[0].description"},
			{"deductions not a list", map[string]any{"deductions": "none"}, 400, "invalid_parameter", "deductions"},
			{"an unknown field", map[string]any{"refund": 1}, 400, "invalid_parameter", "refund"},
		} {
			refuse(tc)
		}
		if n := len(list(t, h, tn.key, "/v1/meter-readings?room_id="+room)); n != 1 {
			t.Fatalf("%d readings after the refusals", n)
		}
		// November read and billed: out in October is before its bill, and
		// November has its reading already.
		tn.read(room, "2026-11", 2)
		nov = tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": "2026-11"}, http.StatusCreated).data()["id"].(string)
		events = len(list(t, h, tn.key, "/v1/events?limit=100"))
		refuse(refusal{"out in a month before a bill", map[string]any{"moved_out_at": "2026-10-20T03:00:00Z"}, 400, "invalid_parameter", "moved_out_at"})
		refuse(refusal{"a month read already", map[string]any{"final_reading": reading(1300)}, 409, "resource_exists", ""})
		tn.do("POST", "/v1/rooms/"+empty+"/tenant/move-out", nil, http.StatusNotFound, "resource_not_found")
		other.do("POST", "/v1/rooms/"+room+"/tenant/move-out", nil, http.StatusNotFound, "resource_not_found")
		// Nothing was written: the tenant is in, no reading, no settlement, no event.
		if r := tn.do("GET", "/v1/rooms/"+room, nil, http.StatusOK).data(); r["status"] != "occupied" {
			t.Fatalf("room %v after the refusals", r["status"])
		}
		if n := len(list(t, h, tn.key, "/v1/meter-readings?room_id="+room)); n != 2 {
			t.Fatalf("%d readings after the refusals", n)
		}
		if n := len(list(t, h, tn.key, "/v1/settlements")); n != 0 {
			t.Fatalf("%d settlements after the refusals", n)
		}
		if n := len(list(t, h, tn.key, "/v1/events?limit=100")); n != events {
			t.Fatalf("%d events after the refusals, %d before", n, events)
		}

		// Out now: no final bill (November is billed), the settlement counts the unpaid bills.
		s := tn.do("POST", "/v1/rooms/"+room+"/tenant/move-out", map[string]any{"deductions": []any{map[string]any{"description": "Key", "amount": 30000}}},
			http.StatusOK).data()
		if s["status"] != "open" || s["deposit"] != 500000.0 || len(s["unpaid_bills"].([]any)) != 2 || s["refund_due_date"] != "2026-11-29" ||
			s["refund_amount"] != 0.0 || s["amount_due"] != 539000.0+539000+30000-500000 {
			t.Fatalf("settlement %v", s)
		}
		id := s["id"].(string)
		tn.do("POST", "/v1/rooms/"+room+"/tenant/move-out", nil, http.StatusNotFound, "resource_not_found")
		other.do("GET", "/v1/settlements/"+id, nil, http.StatusNotFound, "resource_not_found")
		other.do("POST", "/v1/settlements/"+id+"/close", nil, http.StatusNotFound, "resource_not_found")
		if n := len(list(t, h, other.key, "/v1/settlements")); n != 0 {
			t.Fatalf("another account lists %d settlements", n)
		}
		for q, n := range map[string]int{"status=open": 1, "status=closed": 0, "room_id=" + room: 1, "room_id=" + empty: 0, "property_id=" + prop: 1} {
			if got := len(list(t, h, tn.key, "/v1/settlements?"+q)); got != n {
				t.Errorf("%s: %d settlements, want %d", q, got, n)
			}
		}
		tn.do("GET", "/v1/settlements?status=done", nil, http.StatusBadRequest, "invalid_parameter")
		closed := tn.do("POST", "/v1/settlements/"+id+"/close", nil, http.StatusOK).data()
		if closed["status"] != "closed" || closed["closed_at"] == nil || closed["amount_due"] != s["amount_due"] {
			t.Fatalf("closed %v", closed)
		}
		tn.do("POST", "/v1/settlements/"+id+"/close", nil, http.StatusConflict, "invalid_state")
		if n := len(list(t, h, tn.key, "/v1/events?type=settlement.closed")); n != 1 {
			t.Fatalf("%d settlement.closed events", n)
		}
		// A bill paid after the settlement leaves its figures as they were.
		tn.do("POST", "/v1/test-helpers/payments", map[string]any{"bill_id": nov, "outcome": "paid"}, http.StatusOK)
		if got := tn.do("GET", "/v1/settlements/"+id, nil, http.StatusOK).data(); got["amount_due"] != s["amount_due"] || len(got["unpaid_bills"].([]any)) != 2 {
			t.Fatalf("after a payment %v", got)
		}
	})
}

// The story: a tenant moves in on 17 November with a deposit, pays
// a prorated first bill and two full months, leaves February unpaid and
// moves out on 10 March with a final reading and two deductions. The
// settlement has the figures to the satang, reaches a webhook receiver,
// and the room is vacant for a newcomer the next day.
func TestMoveOutStory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := webhookHarness(t, e)
		tn := newTenancy(t, h)
		rc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(tn.key, rc, "settlement.created")
		prop := tn.dailyProperty("Baan Story")
		room := tn.room(prop, "401")
		tenant := tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Somchai", "phone": "0812345678", "deposit": 1_000_000,
			"lease_end": "2027-11-16", "moved_in_at": "2026-11-17T03:00:00Z"}, http.StatusCreated).data()["id"].(string)
		// The clock is at 2026-11-22 03:00 UTC; each month is billed on its last day.
		bill := func(month string, n int, days time.Duration) map[string]any {
			e.Clock.Advance(days * 24 * time.Hour)
			tn.read(room, month, n)
			return tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": month}, http.StatusCreated).data()
		}
		pay := func(b map[string]any) {
			tn.do("POST", "/v1/test-helpers/payments", map[string]any{"bill_id": b["id"], "outcome": "paid"}, http.StatusOK)
		}
		nov := bill("2026-11", 1, 8)
		if nov["total"] != 299000.0 || lines(nov)[0] != "rent:Rent (14 of 30 days):210000" {
			t.Fatalf("november %v", lines(nov))
		}
		pay(nov)
		dec := bill("2026-12", 2, 31)
		jan := bill("2027-01", 3, 31)
		for _, b := range []map[string]any{dec, jan} {
			if b["total"] != 539000.0 || lines(b)[0] != "rent:Rent:450000" {
				t.Fatalf("%v: %v", b["month"], lines(b))
			}
			pay(b)
		}
		feb := bill("2027-02", 4, 28) // 2027-02-28, left unpaid
		e.Clock.Advance(10 * 24 * time.Hour)
		// 2027-03-10 10:00 in Bangkok: out, with the meters read (100 kWh, 5 m³ since February).
		s := tn.do("POST", "/v1/rooms/"+room+"/tenant/move-out", map[string]any{
			"final_reading": map[string]any{"electricity": map[string]any{"current": 1500}, "water": map[string]any{"current": 125}},
			"deductions":    []any{map[string]any{"description": "Wall repainting", "amount": 150000}, map[string]any{"description": "Lost key", "amount": 30000}},
		}, http.StatusOK).data()
		final := list(t, h, tn.key, "/v1/bills?month=2027-03&room_id="+room)
		if len(final) != 1 || final[0]["status"] != "issued" || final[0]["tenant_id"] != tenant || final[0]["total"] != 219645.0 ||
			lines(final[0])[0] != "rent:Rent (9 of 31 days):130645" {
			t.Fatalf("the final bill: %v", final)
		}
		// Unpaid: February 539000 and March 219645; deductions 180000; deposit 1000000.
		unpaid := s["unpaid_bills"].([]any)
		if len(unpaid) != 2 || unpaid[0].(map[string]any)["bill_id"] != feb["id"] || unpaid[0].(map[string]any)["amount_due"] != 539000.0 ||
			unpaid[1].(map[string]any)["bill_id"] != final[0]["id"] || unpaid[1].(map[string]any)["amount_due"] != 219645.0 {
			t.Fatalf("unpaid bills %v", unpaid)
		}
		if s["tenant_id"] != tenant || s["room_id"] != room || s["property_id"] != prop || s["deposit"] != 1_000_000.0 ||
			s["refund_amount"] != 61355.0 || s["amount_due"] != 0.0 || s["refund_due_date"] != "2027-03-17" || s["status"] != "open" ||
			s["currency"] != "THB" || len(s["deductions"].([]any)) != 2 || !rental.ValidID(rental.PrefixSettlement, s["id"].(string)) {
			t.Fatalf("settlement %v", s)
		}
		if got := tn.do("GET", "/v1/settlements/"+s["id"].(string), nil, http.StatusOK).data(); !jsonEqual(got, s) {
			t.Fatalf("read back %v, answered %v", got, s)
		}
		// Bills keep their states: February is still owed.
		if b := tn.do("GET", "/v1/bills/"+feb["id"].(string), nil, http.StatusOK).data(); b["status"] == "paid" || b["amount_paid"] != 0.0 {
			t.Fatalf("february after the settlement %v", b)
		}
		got := rc.waitFor(1)
		h.settleDeliveries()
		if got = rc.requests(); len(got) != 1 || !strings.Contains(string(got[0].body), `"type":"settlement.created"`) ||
			!strings.Contains(string(got[0].body), s["id"].(string)) {
			t.Fatalf("the receiver got %d requests: %v", len(got), got)
		}
		out := tn.do("GET", "/v1/tenants/"+tenant, nil, http.StatusOK).data()
		if out["moved_out_at"] != "2027-03-10T03:00:00Z" {
			t.Fatalf("moved out at %v", out["moved_out_at"])
		}
		if n := len(list(t, h, tn.key, "/v1/events?type=tenant.deleted")); n != 1 {
			t.Fatalf("%d tenant.deleted events", n)
		}
		// The room is vacant, and takes a newcomer on the 11th, whose March
		// is billed too: 21 of 31 days' rent, and no usage (the final
		// reading's is on the final bill; the newcomer's is on April's
		// reading). The newcomer's first full month is billed in full.
		if r := tn.do("GET", "/v1/rooms/"+room, nil, http.StatusOK).data(); r["status"] != "vacant" || r["tenant_id"] != nil {
			t.Fatalf("room %v", r)
		}
		e.Clock.Advance(24 * time.Hour)
		newcomer := tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Suda", "phone": "0898765432", "deposit": 900000},
			http.StatusCreated).data()["id"].(string)
		mar := tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": "2027-03"}, http.StatusCreated).data()
		if mar["tenant_id"] != newcomer || mar["total"] != 304839.0 || mar["reading_id"] != final[0]["reading_id"] ||
			fmt.Sprint(lines(mar)) != "[rent:Rent (21 of 31 days):304839 electricity:Electricity:0 water:Water:0]" {
			t.Fatalf("the newcomer's march: %v %v", mar, lines(mar))
		}
		tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": "2027-03"}, http.StatusConflict, "resource_exists")
		run := tn.do("POST", "/v1/properties/"+prop+"/bills", map[string]any{"month": "2027-03"}, http.StatusOK).data()
		if fmt.Sprint(run["created"], run["skipped"]) != "[] [map[reason:bill_exists room_id:"+room+"]]" {
			t.Fatalf("march's bill run: %v", run)
		}
		if r := tn.do("GET", "/v1/meter-readings/"+final[0]["reading_id"].(string), nil, http.StatusOK).data(); r["bill_id"] != final[0]["id"] {
			t.Fatalf("march's reading is billed by %v, not the final bill %v", r["bill_id"], final[0]["id"])
		}
		apr := bill("2027-04", 6, 50)
		if apr["tenant_id"] != newcomer || lines(apr)[0] != "rent:Rent:450000" {
			t.Fatalf("april %v %v", apr["tenant_id"], lines(apr))
		}
	})
}

// Two move-outs of one room at once, in two processes over PostgreSQL:
// one settles, the other finds the room without a tenant (404), and the
// tenant moves out once.
func TestMoveOutTwoProcesses(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	a := newHarness(t, e)
	b := newHarness(t, e.Another(t))
	tn := newTenancy(t, a)
	prop := tn.dailyProperty("Baan Race")
	for i := range 5 {
		room := tn.room(prop, "R"+itoa(int64(i)))
		tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Somchai", "phone": "0812345678", "deposit": 300000,
			"moved_in_at": "2026-11-01T03:00:00Z"}, http.StatusCreated)
		statuses := make([]int, 2)
		var wg sync.WaitGroup
		for j, h := range []*harness{a, b} {
			wg.Go(func() {
				res, err := h.send(req{key: tn.key, method: "POST", path: "/v1/rooms/" + room + "/tenant/move-out",
					body: map[string]any{"final_reading": map[string]any{"electricity": map[string]any{"current": 50}, "water": map[string]any{"current": 5}}}})
				if err != nil {
					t.Errorf("move-out: %v", err)
					return
				}
				statuses[j] = res.status
				if res.status != http.StatusOK && (res.status != http.StatusNotFound || res.code() != "resource_not_found") {
					t.Errorf("move-out: %d %s", res.status, res.body)
				}
			})
		}
		wg.Wait()
		if statuses[0]+statuses[1] != http.StatusOK+http.StatusNotFound {
			t.Fatalf("room %d: statuses %v", i, statuses)
		}
		if n := len(list(t, a, tn.key, "/v1/settlements?room_id="+room)); n != 1 {
			t.Fatalf("room %d: %d settlements", i, n)
		}
		if n := len(list(t, a, tn.key, "/v1/bills?room_id="+room)); n != 1 {
			t.Fatalf("room %d: %d final bills", i, n)
		}
	}
	if n := len(list(t, a, tn.key, "/v1/events?type=tenant.deleted&limit=100")); n != 5 {
		t.Fatalf("%d tenant.deleted events for 5 move-outs", n)
	}
}

// A month of two tenants billed as drafts: the leaver's bill carries the
// reading's usage, so it is deleted only after the newcomer's (409
// invalid_state naming it before), and then either may be made again.
func TestDeleteTheFirstOfTwoDrafts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		tn := newTenancy(t, h)
		room := tn.room(tn.dailyProperty("Baan Draft"), "501")
		tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Somchai", "phone": "0812345678",
			"moved_in_at": "2026-10-01T03:00:00Z"}, http.StatusCreated)
		tn.read(room, "2026-11", 1)
		first := tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": "2026-11", "issue": false}, http.StatusCreated).data()["id"].(string)
		tn.do("POST", "/v1/rooms/"+room+"/tenant/move-out", map[string]any{}, http.StatusOK)
		e.Clock.Advance(24 * time.Hour)
		tn.do("POST", "/v1/rooms/"+room+"/tenant", map[string]any{"name": "Suda", "phone": "0898765432"}, http.StatusCreated)
		second := tn.do("POST", "/v1/bills", map[string]any{"room_id": room, "month": "2026-11", "issue": false}, http.StatusCreated).data()["id"].(string)
		res := tn.do("DELETE", "/v1/bills/"+first, nil, http.StatusConflict, "invalid_state")
		if res.errField("resource_id") != second {
			t.Fatalf("the refusal names %q, not the newcomer's bill %s: %s", res.errField("resource_id"), second, res.body)
		}
		tn.do("DELETE", "/v1/bills/"+second, nil, http.StatusNoContent)
		tn.do("DELETE", "/v1/bills/"+first, nil, http.StatusNoContent)
	})
}
