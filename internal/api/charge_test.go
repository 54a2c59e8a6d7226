package api_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// chargeRoom is a room with a tenant and readings for October to
// December 2026 (rent 350000; each month 100 kWh × 800 and 5 m³ × 1800,
// so 439000 before charges), for a key of an Enterprise developer.
type chargeRoom struct {
	h                *harness
	key, prop, room  string
	do               func(method, path string, body any, status int) map[string]any
	events           func(typ string) int
	charges, billsOf func(query string) []any
}

func newChargeRoom(t *testing.T, e storetest.Engine) *chargeRoom {
	h := newHarness(t, e)
	c := &chargeRoom{h: h, key: h.testKey(h.fixture(rental.PlanEnterprise))}
	c.do = func(method, path string, body any, status int) map[string]any {
		t.Helper()
		res := h.do(req{key: c.key, method: method, path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
		want(t, res, status)
		return res.data()
	}
	list := func(path string) []any {
		t.Helper()
		res := h.do(req{key: c.key, method: "GET", path: path})
		want(t, res, http.StatusOK)
		return res.json()["data"].([]any)
	}
	c.charges = func(query string) []any { return list("/v1/charges?limit=100&" + query) }
	c.billsOf = func(query string) []any { return list("/v1/bills?limit=100&" + query) }
	c.events = func(typ string) int { return len(list("/v1/events?limit=100&type=" + typ)) }
	c.prop = c.do("POST", "/v1/properties", property("Baan Suk"), 201)["id"].(string)
	c.room = c.do("POST", "/v1/properties/"+c.prop+"/rooms", map[string]any{"number": "204", "monthly_rent": 350000}, 201)["id"].(string)
	c.do("POST", "/v1/rooms/"+c.room+"/tenant", map[string]any{"name": "Somchai Jaidee", "phone": "0812345678"}, 201)
	for i, month := range []string{"2026-10", "2026-11", "2026-12"} {
		c.do("POST", "/v1/meter-readings", map[string]any{"room_id": c.room, "month": month,
			"electricity": map[string]any{"previous": 1000 + 100*i, "current": 1100 + 100*i}, "water": map[string]any{"previous": 100 + 5*i, "current": 105 + 5*i}}, 201)
	}
	return c
}

// lines reads a bill's lines as type:description:amount.
func lines(b map[string]any) []string {
	var out []string
	for _, l := range b["lines"].([]any) {
		m := l.(map[string]any)
		out = append(out, m["type"].(string)+":"+m["description"].(string)+":"+itoa(int64(m["amount"].(float64))))
	}
	return out
}

const readingLines = "rent:Rent:350000 electricity:Electricity:80000 water:Water:9000"

// A room with a recurring charge and a one-off discount: its bill carries
// both as lines after the reading's, the total is their sum, drafts are
// recalculated as charges come and go while issued bills keep theirs, and
// the payment page lists every line.
func TestBillWithCharges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		c := newChargeRoom(t, e)
		do := c.do
		// October billed as a draft before any charge.
		oct := do("POST", "/v1/bills", map[string]any{"room_id": c.room, "month": "2026-10", "issue": false}, 201)
		if got := strings.Join(lines(oct), " "); got != readingLines || oct["total"] != 439000.0 {
			t.Fatalf("october before charges: %s, total %v", got, oct["total"])
		}
		updated := c.events("bill.updated")
		internet := do("POST", "/v1/rooms/"+c.room+"/charges", map[string]any{"description": "Internet", "amount": 30000, "recurring": true, "month": "2026-10"}, 201)
		if !rental.ValidID(rental.PrefixCharge, internet["id"].(string)) || internet["object"] != "charge" || internet["type"] != "charge" ||
			internet["property_id"] != c.prop || internet["room_id"] != c.room || internet["currency"] != "THB" || internet["ends_month"] != nil || internet["recurring"] != true {
			t.Fatalf("charge %v", internet)
		}
		discount := do("POST", "/v1/rooms/"+c.room+"/charges", map[string]any{"type": "discount", "description": "ส่วนลดอยู่ครบปี", "amount": 20000, "month": "2026-11"}, 201)
		// The draft took the internet charge (bill.updated once); the November discount is not October's.
		oct = do("GET", "/v1/bills/"+oct["id"].(string), nil, 200)
		if got := strings.Join(lines(oct), " "); got != readingLines+" charge:Internet:30000" || oct["total"] != 469000.0 || oct["status"] != "draft" {
			t.Fatalf("october draft after charges: %s, total %v", got, oct["total"])
		}
		if n := c.events("bill.updated"); n != updated+1 {
			t.Fatalf("%d bill.updated events after the charges, want %d", n, updated+1)
		}
		// November, issued: the recurring charge and the one-off discount.
		nov := do("POST", "/v1/bills", map[string]any{"room_id": c.room, "month": "2026-11"}, 201)
		if got := strings.Join(lines(nov), " "); got != readingLines+" charge:Internet:30000 discount:ส่วนลดอยู่ครบปี:-20000" || nov["total"] != 449000.0 {
			t.Fatalf("november: %s, total %v", got, nov["total"])
		}
		// An issued bill does not change when charges do.
		parking := do("POST", "/v1/rooms/"+c.room+"/charges", map[string]any{"description": "Parking", "amount": 50000, "month": "2026-11"}, 201)
		if again := do("GET", "/v1/bills/"+nov["id"].(string), nil, 200); again["total"] != 449000.0 || len(again["lines"].([]any)) != 5 {
			t.Fatalf("the issued bill changed: %v", again)
		}
		// The payment page lists every line.
		link := do("POST", "/v1/bills/"+nov["id"].(string)+"/payment-link", nil, 201)
		resp, err := http.Get(link["url"].(string))
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, s := range []string{"ค่าเช่าห้อง", "3,500.00", "800.00", "90.00", "<th scope=\"row\">Internet</th><td>300.00</td>", "<th scope=\"row\">ส่วนลดอยู่ครบปี</th><td>-200.00</td>", "4,490.00"} {
			if !strings.Contains(string(page), s) {
				t.Errorf("the payment page does not show %q", s)
			}
		}
		if t.Failed() {
			t.Fatalf("payment page:\n%s", page)
		}
		// Paid: the receipt's page lists the same lines.
		do("POST", "/v1/test-helpers/payments", map[string]any{"bill_id": nov["id"], "outcome": "paid"}, 200)
		receipt := do("GET", "/v1/bills/"+nov["id"].(string), nil, 200)["receipt"].(map[string]any)
		u, _ := url.Parse(receipt["url"].(string))
		status, rpage := open(t, c.h.url+u.Path)
		for _, s := range []string{"ค่าเช่าห้อง", "Internet</th><td>300.00</td>", "ส่วนลดอยู่ครบปี</th><td>-200.00</td>", `<td id="receipt-total">4,490.00</td>`} {
			if status != http.StatusOK || !strings.Contains(rpage, s) {
				t.Errorf("the receipt page (%d) does not show %q", status, s)
			}
		}
		if t.Failed() {
			t.Fatalf("receipt page:\n%s", rpage)
		}

		// December as a draft, then the charges taken off.
		dec := do("POST", "/v1/bills", map[string]any{"room_id": c.room, "month": "2026-12", "issue": false}, 201)
		if got := strings.Join(lines(dec), " "); got != readingLines+" charge:Internet:30000" {
			t.Fatalf("december: %s", got)
		}
		// The one-off discount is on November's issued bill: refused, nothing changes.
		res := c.h.do(req{key: c.key, method: "DELETE", path: "/v1/charges/" + discount["id"].(string)})
		want(t, res, http.StatusConflict, "charge_billed")
		do("GET", "/v1/charges/"+discount["id"].(string), nil, 200)
		// The parking one-off is on no bill past draft: deleted.
		want(t, c.h.do(req{key: c.key, method: "DELETE", path: "/v1/charges/" + parking["id"].(string)}), http.StatusNoContent)
		want(t, c.h.do(req{key: c.key, method: "GET", path: "/v1/charges/" + parking["id"].(string)}), http.StatusNotFound, "resource_not_found")
		// The internet is on November's issued bill: it ends with November,
		// and December's draft loses it; October's draft keeps it.
		updated = c.events("bill.updated")
		ended := do("DELETE", "/v1/charges/"+internet["id"].(string), nil, 200)
		if ended["ends_month"] != "2026-11" || ended["id"] != internet["id"] {
			t.Fatalf("ended charge %v", ended)
		}
		if got := strings.Join(lines(do("GET", "/v1/bills/"+dec["id"].(string), nil, 200)), " "); got != readingLines {
			t.Fatalf("december after the internet ended: %s", got)
		}
		if got := strings.Join(lines(do("GET", "/v1/bills/"+oct["id"].(string), nil, 200)), " "); got != readingLines+" charge:Internet:30000" {
			t.Fatalf("october after the internet ended: %s", got)
		}
		if n := c.events("bill.updated"); n != updated+1 {
			t.Fatalf("%d bill.updated events after ending, want %d", n, updated+1)
		}
		// The lists: by month (active then), room, property; paged.
		for query, n := range map[string]int{
			"room_id=" + c.room:               2,
			"property_id=" + c.prop:           2,
			"month=2026-10":                   1,
			"month=2026-11":                   2,
			"month=2026-12":                   0,
			"room_id=room_none&month=2026-11": 0,
		} {
			if got := len(c.charges(query)); got != n {
				t.Errorf("charges?%s: %d, want %d", query, got, n)
			}
		}
		first := c.h.do(req{key: c.key, method: "GET", path: "/v1/charges?limit=1&order=asc"})
		want(t, first, http.StatusOK)
		page1 := first.json()
		cursor, _ := page1["pagination"].(map[string]any)["next_cursor"].(string)
		if page1["pagination"].(map[string]any)["has_more"] != true || cursor == "" || page1["data"].([]any)[0].(map[string]any)["id"] != internet["id"] {
			t.Fatalf("first page %v", page1)
		}
		second := c.h.do(req{key: c.key, method: "GET", path: "/v1/charges?limit=1&order=asc&cursor=" + cursor})
		want(t, second, http.StatusOK)
		if second.json()["data"].([]any)[0].(map[string]any)["id"] != discount["id"] {
			t.Fatalf("second page %s", second.body)
		}
		want(t, c.h.do(req{key: c.key, method: "GET", path: "/v1/charges?month=2026-13"}), http.StatusBadRequest, "invalid_parameter")
	})
}

// Each bad charge is a 4xx in the envelope naming the field, and nothing
// is written: no charge, no bill changed.
func TestChargeRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		c := newChargeRoom(t, e)
		draft := c.do("POST", "/v1/bills", map[string]any{"room_id": c.room, "month": "2026-11", "issue": false}, 201)
		// Another account's room.
		other := c.h.testKey(c.h.fixture(rental.PlanEnterprise))
		otherProp := c.h.do(req{key: other, method: "POST", path: "/v1/properties", body: property("Elsewhere")}).data()["id"].(string)
		otherRoom := c.h.do(req{key: other, method: "POST", path: "/v1/properties/" + otherProp + "/rooms", body: map[string]any{"number": "1", "monthly_rent": 100000}}).data()["id"].(string)
		good := func() map[string]any {
			return map[string]any{"description": "Internet", "amount": 30000, "month": "2026-11"}
		}
		with := func(k string, v any) map[string]any {
			b := good()
			if v == nil {
				delete(b, k)
			} else {
				b[k] = v
			}
			return b
		}
		updated := c.events("bill.updated")
		for _, tc := range []struct {
			name        string
			room        string
			body        any
			status      int
			code, param string
		}{
			{"amount 0", c.room, with("amount", 0), 400, "invalid_parameter", "amount"},
			{"amount negative", c.room, with("amount", -100), 400, "invalid_parameter", "amount"},
			{"amount a fraction", c.room, with("amount", 1.5), 400, "invalid_parameter", "amount"},
			{"101-character description", c.room, with("description", strings.Repeat("x", 101)), 400, "invalid_parameter", "description"},
			{"description with a line break", c.room, with("description", "a\nb"), 400, "invalid_parameter", "description"},
			{"unknown field", c.room, with("vat", 7), 400, "invalid_parameter", "vat"},
			{"month not YYYY-MM", c.room, with("month", "11/2026"), 400, "invalid_parameter", "month"},
			{"month missing", c.room, with("month", nil), 400, "parameter_missing", "month"},
			{"type unknown", c.room, with("type", "fine"), 400, "invalid_parameter", "type"},
			{"ends_month before month", c.room, map[string]any{"description": "Internet", "amount": 30000, "recurring": true, "month": "2026-11", "ends_month": "2026-10"}, 400, "invalid_parameter", "ends_month"},
			{"ends_month not YYYY-MM", c.room, map[string]any{"description": "Internet", "amount": 30000, "recurring": true, "month": "2026-11", "ends_month": "2026-1"}, 400, "invalid_parameter", "ends_month"},
			{"another account's room", otherRoom, good(), 404, "resource_not_found", "room_id"},
			{"no such room", "room_nothere", good(), 404, "resource_not_found", "room_id"},
			{"not JSON", c.room, "{", 400, "invalid_json", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				res := c.h.do(req{key: c.key, method: "POST", path: "/v1/rooms/" + tc.room + "/charges", body: tc.body})
				want(t, res, tc.status, tc.code)
				if res.errField("param") != tc.param {
					t.Fatalf("param %q, want %q: %s", res.errField("param"), tc.param, res.body)
				}
			})
		}
		if n := len(c.charges("")); n != 0 {
			t.Fatalf("%d charges written by refused requests", n)
		}
		if n := c.events("bill.updated"); n != updated {
			t.Fatalf("refused requests changed bills: %d bill.updated, had %d", n, updated)
		}
		if b := c.do("GET", "/v1/bills/"+draft["id"].(string), nil, 200); b["total"] != draft["total"] || len(b["lines"].([]any)) != 3 {
			t.Fatalf("the draft changed: %v", b)
		}
		// Scopes: reading needs bills:read, writing bills:write.
		reader := c.h.testKey(c.h.fixture(rental.PlanEnterprise), rental.ScopeBillsRead)
		want(t, c.h.do(req{key: reader, method: "POST", path: "/v1/rooms/" + c.room + "/charges", body: good()}), http.StatusForbidden, "insufficient_scope")
		noBills := c.h.testKey(c.h.fixture(rental.PlanEnterprise), rental.ScopeRoomsRead)
		want(t, c.h.do(req{key: noBills, method: "GET", path: "/v1/charges"}), http.StatusForbidden, "insufficient_scope")
		// Another account's charge is not found.
		mine := c.do("POST", "/v1/rooms/"+c.room+"/charges", good(), 201)
		ending := c.do("POST", "/v1/rooms/"+c.room+"/charges", map[string]any{"description": "Cleaning", "amount": 10000, "recurring": true, "month": "2026-11", "ends_month": "2026-11"}, 201)
		if ending["ends_month"] != "2026-11" || ending["recurring"] != true {
			t.Fatalf("a recurring charge ending in its first month: %v", ending)
		}
		want(t, c.h.do(req{key: other, method: "GET", path: "/v1/charges/" + mine["id"].(string)}), http.StatusNotFound, "resource_not_found")
		want(t, c.h.do(req{key: other, method: "DELETE", path: "/v1/charges/" + mine["id"].(string)}), http.StatusNotFound, "resource_not_found")
		// The same Idempotency-Key replays the first answer.
		idem := []string{"Idempotency-Key: " + rental.NewID("idem")}
		first := c.h.do(req{key: c.key, method: "POST", path: "/v1/rooms/" + c.room + "/charges", body: good(), headers: idem})
		again := c.h.do(req{key: c.key, method: "POST", path: "/v1/rooms/" + c.room + "/charges", body: good(), headers: idem})
		want(t, first, http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
			t.Fatalf("replay: %s %s", again.header.Get("Idempotent-Replayed"), again.body)
		}
		if n := len(c.charges("")); n != 3 {
			t.Fatalf("%d charges after a replay, want 3", n)
		}
	})
}
