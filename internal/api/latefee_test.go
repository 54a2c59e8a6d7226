package api_test

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// exampleRule is the example of the specification: 5,000 satang a day
// after two days' grace, at most 12,000.
func exampleRule() map[string]any {
	return map[string]any{"amount": 5000, "per": "day", "grace_days": 2, "max_amount": 12000}
}

// ruleOf reads a late_fee object as the JSON the API sent.
func ruleOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// sameRule compares a late_fee the API sent with one a test wrote.
func sameRule(got any, want map[string]any) bool {
	g := ruleOf(got)
	if g == nil || want == nil {
		return g == nil && want == nil
	}
	norm := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range m {
			if n, ok := v.(int); ok {
				v = float64(n)
			}
			out[k] = v
		}
		return out
	}
	return reflect.DeepEqual(norm(g), norm(want))
}

// A property's late_fee: null by default; set on create, shown in every
// answer and in the property's events; replaced whole by an update (what
// is not sent takes its default); kept by an update that does not name
// it; removed with null.
func TestPropertyLateFee(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		do := func(method, path string, body any, status int) map[string]any {
			t.Helper()
			res := h.do(req{key: key, method: method, path: path, body: body})
			want(t, res, status)
			return res.data()
		}
		plain := do("POST", "/v1/properties", property("No fine"), 201)
		if v, ok := plain["late_fee"]; !ok || v != nil {
			t.Fatalf("a property without a rule: late_fee %v (present %v)", v, ok)
		}
		body := property("Baan Suk")
		body["late_fee"] = exampleRule()
		p := do("POST", "/v1/properties", body, 201)
		id := p["id"].(string)
		if !sameRule(p["late_fee"], exampleRule()) {
			t.Fatalf("created with %v", p["late_fee"])
		}
		if got := do("GET", "/v1/properties/"+id, nil, 200); !sameRule(got["late_fee"], exampleRule()) {
			t.Fatalf("read back %v", got["late_fee"])
		}
		for _, it := range list(t, h, key, "/v1/properties?limit=100") {
			if it["id"] == id && !sameRule(it["late_fee"], exampleRule()) {
				t.Fatalf("listed with %v", it["late_fee"])
			}
		}
		// Another field changed: the rule stays.
		if got := do("PATCH", "/v1/properties/"+id, map[string]any{"due_day": 10}, 200); !sameRule(got["late_fee"], exampleRule()) {
			t.Fatalf("after a due_day change %v", got["late_fee"])
		}
		// The whole rule replaced: grace and cap not sent go back to 0 and null.
		once := map[string]any{"amount": 20000, "per": "once"}
		got := do("PATCH", "/v1/properties/"+id, map[string]any{"late_fee": once}, 200)
		if !sameRule(got["late_fee"], map[string]any{"amount": 20000, "per": "once", "grace_days": 0, "max_amount": nil}) {
			t.Fatalf("replaced by %v", got["late_fee"])
		}
		if got := do("PATCH", "/v1/properties/"+id, map[string]any{"late_fee": nil}, 200); got["late_fee"] != nil {
			t.Fatalf("removed: %v", got["late_fee"])
		}
		// The events carry the property as it was each time.
		var rules []any
		for _, ev := range list(t, h, key, "/v1/events?type=property.*&limit=100") {
			if obj := ev["data"].(map[string]any)["object"].(map[string]any); obj["id"] == id {
				rules = append(rules, obj["late_fee"])
			}
		}
		slices.Reverse(rules)
		if len(rules) != 4 || !sameRule(rules[0], exampleRule()) || !sameRule(rules[1], exampleRule()) || ruleOf(rules[2])["per"] != "once" || rules[3] != nil {
			t.Fatalf("the property's events carry %v", rules)
		}
	})
}

// Every bad late_fee is a 400 naming the field, on create and on update,
// and nothing is written: no property made, the property unchanged and no
// property.updated.
func TestPropertyLateFeeRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		body := property("Baan Suk")
		body["late_fee"] = exampleRule()
		res := h.do(req{key: key, method: "POST", path: "/v1/properties", body: body})
		want(t, res, http.StatusCreated)
		id := res.data()["id"].(string)
		before := h.do(req{key: key, method: "GET", path: "/v1/properties/" + id}).body
		properties := len(list(t, h, key, "/v1/properties?limit=100"))
		events := len(list(t, h, key, "/v1/events?type=property.*&limit=100"))
		with := func(k string, v any) map[string]any {
			r := exampleRule()
			if v == nil {
				delete(r, k)
			} else {
				r[k] = v
			}
			return r
		}
		for _, tc := range []struct {
			name        string
			lateFee     any
			code, param string
		}{
			{"grace_days 31", with("grace_days", 31), "invalid_parameter", "late_fee.grace_days"},
			{"grace_days negative", with("grace_days", -1), "invalid_parameter", "late_fee.grace_days"},
			{"max_amount below amount", with("max_amount", 4999), "invalid_parameter", "late_fee.max_amount"},
			{"amount 0", with("amount", 0), "invalid_parameter", "late_fee.amount"},
			{"amount above the bound", with("amount", rental.MaxChargeAmount+1), "invalid_parameter", "late_fee.amount"},
			{"amount a fraction", with("amount", 50.5), "invalid_parameter", "late_fee.amount"},
			{"amount a string", with("amount", "5000"), "invalid_parameter", "late_fee.amount"},
			{"amount missing", with("amount", nil), "parameter_missing", "late_fee.amount"},
			{"per week", with("per", "week"), "invalid_parameter", "late_fee.per"},
			{"per missing", with("per", nil), "parameter_missing", "late_fee.per"},
			{"an unknown sub-field", with("daily", true), "invalid_parameter", "late_fee.daily"},
			{"not an object", "50 baht a day", "invalid_parameter", "late_fee"},
			{"an array", []any{exampleRule()}, "invalid_parameter", "late_fee"},
		} {
			create := property("Refused")
			create["late_fee"] = tc.lateFee
			for _, r := range []req{
				{key: key, method: "POST", path: "/v1/properties", body: create},
				{key: key, method: "PATCH", path: "/v1/properties/" + id, body: map[string]any{"name": "Renamed", "late_fee": tc.lateFee}},
			} {
				res := h.do(r)
				if res.status != http.StatusBadRequest || res.code() != tc.code || res.errField("param") != tc.param {
					t.Errorf("%s, %s: %d %s; want 400 %s naming %s", tc.name, r.method, res.status, res.body, tc.code, tc.param)
				}
			}
		}
		if n := len(list(t, h, key, "/v1/properties?limit=100")); n != properties {
			t.Fatalf("%d properties after the refusals, %d before", n, properties)
		}
		if after := h.do(req{key: key, method: "GET", path: "/v1/properties/" + id}).body; string(after) != string(before) {
			t.Fatalf("the property changed:\n%s\n%s", before, after)
		}
		if n := len(list(t, h, key, "/v1/events?type=property.*&limit=100")); n != events {
			t.Fatalf("%d property events after the refusals, %d before", n, events)
		}
	})
}

// lateRoom is a sandbox room with a tenant and a reading for November
// 2026 in a property with a late-fee rule; its bill falls due on 5
// December.
type lateRoom struct {
	h               *harness
	key, prop, room string
}

func newLateRoom(t *testing.T, h *harness, key string, rule map[string]any) *lateRoom {
	t.Helper()
	r := &lateRoom{h: h, key: key}
	body := property("Baan Suk")
	body["late_fee"] = rule
	r.prop = r.do(t, "POST", "/v1/properties", body, 201)["id"].(string)
	r.room = r.do(t, "POST", "/v1/properties/"+r.prop+"/rooms", map[string]any{"number": "204", "monthly_rent": 350000}, 201)["id"].(string)
	r.do(t, "POST", "/v1/rooms/"+r.room+"/tenant", map[string]any{"name": "Somchai Jaidee", "phone": "0812345678"}, 201)
	r.do(t, "POST", "/v1/meter-readings", map[string]any{"room_id": r.room, "month": "2026-11",
		"electricity": map[string]any{"previous": 1000, "current": 1100}, "water": map[string]any{"previous": 100, "current": 105}}, 201)
	return r
}

func (r *lateRoom) do(t *testing.T, method, path string, body any, status int) map[string]any {
	t.Helper()
	res := r.h.do(req{key: r.key, method: method, path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
	want(t, res, status)
	return res.data()
}

// bill issues the room's November bill: 439,000 satang.
func (r *lateRoom) bill(t *testing.T) map[string]any {
	t.Helper()
	b := r.do(t, "POST", "/v1/bills", map[string]any{"room_id": r.room, "month": "2026-11"}, 201)
	if b["total"] != 439000.0 || b["due_date"] != "2026-12-05" {
		t.Fatalf("bill %v", b)
	}
	return b
}

// lateFeeOf is a bill's late_fee line's amount (0 without one), checked
// to be its last line.
func lateFeeOf(t *testing.T, b map[string]any) int64 {
	t.Helper()
	lines := b["lines"].([]any)
	var fee int64
	for i, l := range lines {
		if m := l.(map[string]any); m["type"] == "late_fee" {
			if i != len(lines)-1 {
				t.Fatalf("the late fee is not the last line: %v", lines)
			}
			fee = int64(m["amount"].(float64))
		}
	}
	return fee
}

// updates lists the late fees the bill.updated events of a bill carry,
// oldest first, and checks that they list in the order they were made.
func updates(t *testing.T, h *harness, key, bill string) []int64 {
	t.Helper()
	var out []int64
	var last time.Time
	for _, ev := range list(t, h, key, "/v1/events?type=bill.updated&limit=100&order=asc") {
		obj := ev["data"].(map[string]any)["object"].(map[string]any)
		if obj["id"] != bill {
			continue
		}
		at := parseTime(t, ev["created_at"])
		if at.Before(last) {
			t.Fatalf("bill.updated at %v after one at %v", at, last)
		}
		last = at
		out = append(out, lateFeeOf(t, obj))
	}
	return out
}

// advanceTo moves a sandbox's clock to a minute past 00:00 Thailand time
// of day.
func advanceTo(t *testing.T, h *harness, key, day string) {
	t.Helper()
	d, _ := time.ParseInLocation(time.DateOnly, day, rental.Bangkok)
	res := h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"to": d.Add(time.Minute).UTC().Format(time.RFC3339)}})
	want(t, res, http.StatusOK)
}

// A sandbox bill going late with its clock moved day by day: the bill
// took its property's rule when issued and keeps it when the property's
// changes; its late_fee line appears on 12-08 at 5,000, is 10,000 on 12-09
// and 12,000 from 12-10, one bill.updated each day it grew; the payment
// page shows it, and paying the rest pays it off with its receipt.
func TestLateFeeDayByDay(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		r := newLateRoom(t, h, key, exampleRule())
		b := r.bill(t)
		id := b["id"].(string)
		if !sameRule(b["late_fee"], exampleRule()) || lateFeeOf(t, b) != 0 {
			t.Fatalf("issued with %v", b["late_fee"])
		}
		// The property's rule changes: the issued bill keeps its own.
		r.do(t, "PATCH", "/v1/properties/"+r.prop, map[string]any{"late_fee": map[string]any{"amount": 100, "per": "once"}}, 200)
		if got := r.do(t, "GET", "/v1/bills/"+id, nil, 200); !sameRule(got["late_fee"], exampleRule()) {
			t.Fatalf("after the property's rule changed the bill has %v", got["late_fee"])
		}
		for _, step := range []struct {
			day    string
			fee    int64
			status string
			events []int64
		}{
			{"2026-12-05", 0, "issued", nil},
			{"2026-12-06", 0, "overdue", nil},
			{"2026-12-07", 0, "overdue", nil},
			{"2026-12-08", 5000, "overdue", []int64{5000}},
			{"2026-12-09", 10000, "overdue", []int64{5000, 10000}},
			{"2026-12-10", 12000, "overdue", []int64{5000, 10000, 12000}},
			{"2026-12-11", 12000, "overdue", []int64{5000, 10000, 12000}},
		} {
			advanceTo(t, h, key, step.day)
			got := r.do(t, "GET", "/v1/bills/"+id, nil, 200)
			if fee := lateFeeOf(t, got); fee != step.fee || got["total"] != float64(439000+step.fee) || got["status"] != step.status {
				t.Fatalf("%s: %s with a late fee of %d, total %v; want %s, %d", step.day, got["status"], fee, got["total"], step.status, step.fee)
			}
			if ev := updates(t, h, key, id); !slices.Equal(ev, step.events) {
				t.Fatalf("%s: bill.updated with late fees %v, want %v", step.day, ev, step.events)
			}
		}
		got := r.do(t, "GET", "/v1/bills/"+id, nil, 200)
		if l := got["lines"].([]any); l[len(l)-1].(map[string]any)["description"] != "Late fee (3 days)" {
			t.Fatalf("the late fee's line %v", l[len(l)-1])
		}
		// The payment page asks for the whole, the late fee's line shown.
		link := r.do(t, "POST", "/v1/bills/"+id+"/payment-link", nil, 201)
		status, page := open(t, link["url"].(string))
		for _, s := range []string{"ค่าปรับชำระล่าช้า", "Late fee", "120.00", "4,510.00"} {
			if status != http.StatusOK || !strings.Contains(page, s) {
				t.Errorf("the payment page (%d) does not show %q", status, s)
			}
		}
		if t.Failed() {
			t.Fatalf("payment page:\n%s", page)
		}
		// Paid: the fee stops, and the receipt lists it.
		r.do(t, "POST", "/v1/test-helpers/payments", map[string]any{"bill_id": id, "outcome": "paid"}, 200)
		paid := r.do(t, "GET", "/v1/bills/"+id, nil, 200)
		if paid["status"] != "paid" || paid["amount_paid"] != 451000.0 {
			t.Fatalf("after paying: %s, %v paid", paid["status"], paid["amount_paid"])
		}
		u, _ := url.Parse(paid["receipt"].(map[string]any)["url"].(string))
		if status, rpage := open(t, h.url+u.Path); status != http.StatusOK || !strings.Contains(rpage, "120.00") || !strings.Contains(rpage, "4,510.00") {
			t.Fatalf("the receipt page (%d):\n%s", status, rpage)
		}
	})
}

// One advance of ten days past the due date catches up day by day: the
// late fee's successive amounts, one bill.updated per day it grew, in
// order. A bill paid before it fell due gets none; a bill paid in part
// accrues all the same and stays unpaid above what was paid. A draft
// issued after the property's rule changed takes the new rule.
func TestLateFeeInOneAdvance(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		late := newLateRoom(t, h, key, exampleRule()).bill(t)["id"].(string)
		paid := newLateRoom(t, h, key, exampleRule()).bill(t)["id"].(string)
		part := newLateRoom(t, h, key, map[string]any{"amount": 1000, "per": "day"}).bill(t)["id"].(string)
		r := newLateRoom(t, h, key, exampleRule())
		draft := r.do(t, "POST", "/v1/bills", map[string]any{"room_id": r.room, "month": "2026-11", "issue": false}, 201)
		if draft["late_fee"] != nil {
			t.Fatalf("a draft has a rule: %v", draft["late_fee"])
		}
		r.do(t, "PATCH", "/v1/properties/"+r.prop, map[string]any{"late_fee": map[string]any{"amount": 30000, "per": "once", "grace_days": 5}}, 200)
		issued := r.do(t, "POST", "/v1/bills/"+draft["id"].(string)+"/issue", nil, 200)
		if !sameRule(issued["late_fee"], map[string]any{"amount": 30000, "per": "once", "grace_days": 5, "max_amount": nil}) {
			t.Fatalf("the draft issued with %v", issued["late_fee"])
		}
		r.do(t, "POST", "/v1/test-helpers/payments", map[string]any{"bill_id": paid, "outcome": "paid"}, 200)
		r.do(t, "POST", "/v1/test-helpers/payments", map[string]any{"bill_id": part, "outcome": "paid", "amount_paid": 400000}, 200)
		paidUpdates := len(updates(t, h, key, paid))

		advanceTo(t, h, key, "2026-12-15")
		if ev := updates(t, h, key, late); !slices.Equal(ev, []int64{5000, 10000, 12000}) {
			t.Fatalf("ten days in one advance: bill.updated with late fees %v", ev)
		}
		got := r.do(t, "GET", "/v1/bills/"+late, nil, 200)
		if lateFeeOf(t, got) != 12000 || got["total"] != 451000.0 || got["status"] != "overdue" {
			t.Fatalf("after ten days: %v", got)
		}
		if ev := updates(t, h, key, paid); len(ev) != paidUpdates {
			t.Fatalf("a paid bill got %d bill.updated more", len(ev)-paidUpdates)
		}
		if got := r.do(t, "GET", "/v1/bills/"+paid, nil, 200); lateFeeOf(t, got) != 0 || got["total"] != 439000.0 {
			t.Fatalf("a paid bill accrued: %v", got)
		}
		// Part paid: 1,000 a day from 12-06 to 12-15, one event a day.
		want := []int64{0}
		for d := int64(1); d <= 10; d++ {
			want = append(want, d*1000)
		}
		if ev := updates(t, h, key, part); !slices.Equal(ev, want) {
			t.Fatalf("the part paid bill's bill.updated late fees %v, want %v", ev, want)
		}
		got = r.do(t, "GET", "/v1/bills/"+part, nil, 200)
		if got["status"] != "overdue" || got["total"] != 449000.0 || got["amount_paid"] != 400000.0 {
			t.Fatalf("the part paid bill: %s, total %v, paid %v", got["status"], got["total"], got["amount_paid"])
		}
		// The draft issued later took the new rule: 300 baht once, after five days.
		if ev := updates(t, h, key, issued["id"].(string)); !slices.Equal(ev, []int64{0, 30000}) {
			t.Fatalf("the later issued bill's bill.updated late fees %v", ev)
		}
	})
}
