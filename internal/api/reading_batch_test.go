package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// readingDesk is a landlord's property with rooms, for a key of an
// Enterprise developer: do sends a request (with an Idempotency-Key of
// its own unless the request names one) and wants its status.
type readingDesk struct {
	h      *harness
	key    string
	prop   string
	do     func(rq req, status int) *result
	room   func(number string, tenant bool) string
	count  func(path string) int
	events func(typ string) int
}

func newReadingDesk(t *testing.T, e storetest.Engine) *readingDesk {
	h := newHarness(t, e)
	d := &readingDesk{h: h, key: h.testKey(h.fixture(rental.PlanEnterprise))}
	d.do = func(rq req, status int) *result {
		t.Helper()
		if rq.key == "" {
			rq.key = d.key
		}
		if rq.method != "GET" && !strings.Contains(strings.Join(rq.headers, "\n"), "Idempotency-Key") {
			rq.headers = append(rq.headers, "Idempotency-Key: "+rental.NewID("idem"))
		}
		res := h.do(rq)
		want(t, res, status)
		return res
	}
	d.count = func(path string) int {
		t.Helper()
		n := 0
		for cursor := ""; ; {
			page := d.do(req{method: "GET", path: path + "&limit=100" + cursor}, http.StatusOK).json()
			n += len(page["data"].([]any))
			next, _ := page["pagination"].(map[string]any)["next_cursor"].(string)
			if next == "" {
				return n
			}
			cursor = "&cursor=" + next
		}
	}
	d.events = func(typ string) int { return d.count("/v1/events?type=" + typ) }
	d.prop = d.do(req{method: "POST", path: "/v1/properties", body: property("Baan Batch")}, http.StatusCreated).data()["id"].(string)
	d.room = func(number string, tenant bool) string {
		t.Helper()
		id := d.do(req{method: "POST", path: "/v1/properties/" + d.prop + "/rooms", body: map[string]any{"number": number, "monthly_rent": 350000}}, http.StatusCreated).data()["id"].(string)
		if tenant {
			d.do(req{method: "POST", path: "/v1/rooms/" + id + "/tenant", body: map[string]any{"name": "Somchai " + number, "phone": "0812345678"}}, http.StatusCreated)
		}
		return id
	}
	return d
}

// reading is a create body with the current values only.
func reading(room, month string, electricity, water float64) map[string]any {
	return map[string]any{"room_id": room, "month": month, "electricity": map[string]any{"current": electricity}, "water": map[string]any{"current": water}}
}

// batchItem is one result of a batch's answer.
type batchItem struct {
	Index   int            `json:"index"`
	Status  int            `json:"status"`
	Reading map[string]any `json:"reading"`
	Error   map[string]any `json:"error"`
}

func batchItems(t *testing.T, res *result) []batchItem {
	t.Helper()
	var body struct{ Data []batchItem }
	if err := json.Unmarshal(res.body, &body); err != nil {
		t.Fatal(err)
	}
	return body.Data
}

// A batch's items are each judged and recorded as if posted alone, in
// order: recorded (201), a month read already or by an earlier item (409
// naming the reading), a room of another account or of none (404), an item
// that is not an object or has a bad field (400 naming the field as the
// single post would); an item's previous values default from an earlier
// item of the room; one meter.reading.created per reading recorded; the
// whole answer replayed for its Idempotency-Key.
func TestReadingBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		d := newReadingDesk(t, e)
		a, b, c := d.room("101", true), d.room("102", true), d.room("103", false)
		existing := d.do(req{method: "POST", path: "/v1/meter-readings", body: reading(b, "2026-10", 500, 50)}, http.StatusCreated).data()
		other := d.h.testKey(d.h.fixture(rental.PlanEnterprise))
		theirs := d.h.do(req{key: other, method: "GET", path: "/v1/rooms?limit=1"}).json()["data"].([]any)[0].(map[string]any)["id"].(string)
		created := d.events("meter.reading.created")
		theirReadings := func() int {
			return len(d.h.do(req{key: other, method: "GET", path: "/v1/meter-readings?limit=100&room_id=" + theirs}).json()["data"].([]any))
		}
		before := theirReadings()
		items := []any{
			reading(a, "2026-10", 1362.5, 316.4),                        // 0: recorded
			reading(b, "2026-10", 600, 60),                              // 1: read already
			reading(theirs, "2026-10", 1, 1),                            // 2: another account's room
			reading("room_00000000000000000000000000", "2026-10", 1, 1), // 3: no such room
			5, // 4: not an object
			map[string]any{"room_id": c, "month": "2026-10", "electricity": map[string]any{"current": -1}, "water": map[string]any{"current": 1}}, // 5
			reading(c, "2026-10", 100, 10), // 6: recorded
			reading(c, "2026-10", 200, 20), // 7: the month item 6 recorded
			reading(c, "2026-11", 180, 14), // 8: from item 6's values
			map[string]any{"room_id": c, "electricity": map[string]any{"current": 1}, "water": map[string]any{"current": 1}},                                  // 9
			map[string]any{"room_id": c, "month": "2026-12", "electricity": map[string]any{"current": 190}, "water": map[string]any{"current": 15}, "gas": 1}, // 10
			reading("not an id!", "2026-10", 1, 1), // 11
		}
		key := "Idempotency-Key: batch-" + rental.NewID("idem")
		res := d.do(req{method: "POST", path: "/v1/meter-readings/batch", body: map[string]any{"readings": items}, headers: []string{key}}, http.StatusOK)
		got := batchItems(t, res)
		if len(got) != len(items) {
			t.Fatalf("%d results for %d items: %s", len(got), len(items), res.body)
		}
		wants := []struct {
			status      int
			code, param string
		}{
			{201, "", ""}, {409, "resource_exists", ""}, {404, "resource_not_found", ""}, {404, "resource_not_found", ""},
			{400, "invalid_json", ""}, {400, "invalid_parameter", "electricity.current"}, {201, "", ""}, {409, "resource_exists", ""},
			{201, "", ""}, {400, "parameter_missing", "month"}, {400, "invalid_parameter", "gas"}, {404, "resource_not_found", ""},
		}
		for i, w := range wants {
			g := got[i]
			if g.Index != i || g.Status != w.status {
				t.Errorf("item %d: index %d status %d, want %d", i, g.Index, g.Status, w.status)
				continue
			}
			if w.code == "" {
				if g.Error != nil || g.Reading == nil || !rental.ValidID(rental.PrefixReading, g.Reading["id"].(string)) {
					t.Errorf("item %d: %+v", i, g)
				}
				continue
			}
			param, _ := g.Error["param"].(string)
			if g.Reading != nil || g.Error["code"] != w.code || param != w.param ||
				g.Error["doc_url"] != d.h.url+"/docs/errors#"+w.code || g.Error["request_id"] != res.header.Get("X-Request-ID") {
				t.Errorf("item %d: %+v, want %s %s", i, g, w.code, w.param)
			}
		}
		// The conflicts name the readings: the one recorded before, and
		// the one an earlier item of the batch recorded.
		if got[1].Error["resource_id"] != existing["id"] || got[7].Error["resource_id"] != got[6].Reading["id"] {
			t.Errorf("conflicts name %v and %v", got[1].Error["resource_id"], got[7].Error["resource_id"])
		}
		// Each error is the single post's, word for word.
		for _, i := range []int{1, 2, 5, 7, 9, 10, 11} {
			alone := d.h.do(req{key: d.key, method: "POST", path: "/v1/meter-readings", body: items[i]})
			if alone.status != got[i].Status || alone.errField("message") != got[i].Error["message"] || alone.errField("param") != got[i].Error["param"] && got[i].Error["param"] != nil {
				t.Errorf("item %d alone: %d %s; in the batch %+v", i, alone.status, alone.body, got[i])
			}
		}
		// Item 8 starts from item 6's values.
		el := got[8].Reading["electricity"].(map[string]any)
		wa := got[8].Reading["water"].(map[string]any)
		if el["previous"] != 100.0 || el["usage"] != 80.0 || wa["previous"] != 10.0 || wa["usage"] != 4.0 {
			t.Errorf("item 8 did not start from item 6: %v %v", el, wa)
		}
		// What was recorded is what GET shows, and nothing else.
		for _, i := range []int{0, 6, 8} {
			one := d.do(req{method: "GET", path: "/v1/meter-readings/" + got[i].Reading["id"].(string)}, http.StatusOK).data()
			if b1, _ := json.Marshal(one); string(b1) != func() string { b2, _ := json.Marshal(got[i].Reading); return string(b2) }() {
				t.Errorf("item %d: GET %s, batch %v", i, b1, got[i].Reading)
			}
		}
		if n := d.count("/v1/meter-readings?property_id=" + d.prop); n != 4 {
			t.Errorf("%d readings in the property, want 4", n)
		}
		if n := d.events("meter.reading.created"); n != created+3 {
			t.Errorf("%d meter.reading.created events, want %d", n, created+3)
		}
		if n := theirReadings(); n != before {
			t.Errorf("another account's room has %d readings, had %d", n, before)
		}
		// Replayed: the same answer, nothing recorded again.
		again := d.do(req{method: "POST", path: "/v1/meter-readings/batch", body: map[string]any{"readings": items}, headers: []string{key}}, http.StatusOK)
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(res.body) {
			t.Errorf("replay: %s %s", again.header.Get("Idempotent-Replayed"), again.body)
		}
		if n := d.events("meter.reading.created"); n != created+3 {
			t.Errorf("%d meter.reading.created events after the replay, want %d", n, created+3)
		}
	})
}

// A batch that is bad as a whole is refused with nothing written: no
// readings, a readings that is not an array of 1 to 500, a field beside it,
// a key given twice; 500 items go in, 501 do not; a key without
// meters:write is refused.
func TestReadingBatchRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		d := newReadingDesk(t, e)
		room := d.room("201", true)
		months := func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = reading(room, fmt.Sprintf("%04d-%02d", 2000+i/12, i%12+1), float64(10*(i+1)), float64(i+1))
			}
			return out
		}
		one := months(1)[0]
		cases := []struct {
			body        any
			code, param string
		}{
			{map[string]any{}, "parameter_missing", "readings"},
			{map[string]any{"readings": nil}, "parameter_missing", "readings"},
			{map[string]any{"readings": one}, "invalid_parameter", "readings"},
			{map[string]any{"readings": "[]"}, "invalid_parameter", "readings"},
			{map[string]any{"readings": []any{}}, "invalid_parameter", "readings"},
			{map[string]any{"readings": months(501)}, "invalid_parameter", "readings"},
			{map[string]any{"readings": []any{one}, "notify": true}, "invalid_parameter", "notify"},
			{`{"readings":[{"room_id":"` + room + `","month":"2026-10","month":"2026-11","electricity":{"current":1},"water":{"current":1}}]}`, "invalid_json", ""},
			{`[` + `{"readings":[]}` + `]`, "invalid_json", ""},
		}
		for _, c := range cases {
			res := d.h.do(req{key: d.key, method: "POST", path: "/v1/meter-readings/batch", body: c.body})
			if res.status != http.StatusBadRequest || res.code() != c.code || res.errField("param") != c.param {
				t.Errorf("%.80v: %d %s, want %s %s", c.body, res.status, res.body, c.code, c.param)
			}
		}
		if n := d.count("/v1/meter-readings?room_id=" + room); n != 0 {
			t.Fatalf("refused batches wrote %d readings", n)
		}
		if n := d.events("meter.reading.created"); n != 0 {
			t.Fatalf("refused batches recorded %d events", n)
		}
		// Without meters:write.
		f := d.h.fixture(rental.PlanEnterprise)
		read := d.h.testKey(f, rental.ScopeMetersRead)
		res := d.h.do(req{key: read, method: "POST", path: "/v1/meter-readings/batch", body: map[string]any{"readings": []any{one}}})
		want(t, res, http.StatusForbidden, "insufficient_scope")
		if res.errField("scope") != string(rental.ScopeMetersWrite) {
			t.Fatalf("scope %q", res.errField("scope"))
		}
		// 500 items: every one recorded, in order, each from the one before.
		res = d.do(req{method: "POST", path: "/v1/meter-readings/batch", body: map[string]any{"readings": months(500)}}, http.StatusOK)
		got := batchItems(t, res)
		for i, g := range got {
			if g.Index != i || g.Status != http.StatusCreated || g.Reading["electricity"].(map[string]any)["usage"] != 10.0 {
				t.Fatalf("item %d of 500: %+v", i, g)
			}
		}
		if len(got) != 500 || d.count("/v1/meter-readings?room_id="+room) != 500 || d.events("meter.reading.created") != 500 {
			t.Fatalf("500 items: %d results", len(got))
		}
	})
}

// Usage flags: a spike after three usual months is usage_high, whether the
// months came one by one or in one batch; an occupied room that used no
// water is usage_zero, a vacant room's zero is not; flagged=true lists the
// flagged ones (paged, the cursor bound to the filter), flagged=false the
// others; a correction judges the flags anew.
func TestReadingFlags(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		d := newReadingDesk(t, e)
		post := func(body map[string]any) map[string]any {
			t.Helper()
			return d.do(req{method: "POST", path: "/v1/meter-readings", body: body}, http.StatusCreated).data()
		}
		flags := func(r map[string]any) string {
			var out []string
			for _, f := range r["flags"].([]any) {
				out = append(out, f.(string))
			}
			return strings.Join(out, " ")
		}
		// One by one: a first reading out of the six months, then 100,
		// 110, 120 kWh (median 110) and 5 m³ a month, then 221 kWh and 10
		// m³ (exactly twice the water's median: not high).
		spiky := d.room("301", true)
		for _, m := range []struct {
			month string
			e, w  float64
		}{{"2026-03", 1000, 10}, {"2026-07", 1100, 15}, {"2026-08", 1210, 20}, {"2026-09", 1330, 25}} {
			if r := post(reading(spiky, m.month, m.e, m.w)); flags(r) != "" {
				t.Fatalf("%s: flags %v", m.month, r["flags"])
			}
		}
		spike := post(reading(spiky, "2026-10", 1330+221, 35))
		if flags(spike) != "usage_high" {
			t.Fatalf("the spike: %v (electricity %v)", spike["flags"], spike["electricity"])
		}
		// In one batch: the fourth month sees the three before it.
		batched := d.room("302", true)
		var items []any
		for i, month := range []string{"2026-07", "2026-08", "2026-09", "2026-10"} {
			items = append(items, reading(batched, month, float64(100*(i+1)), float64(5*(i+1)+map[bool]int{true: 20}[i == 3])))
		}
		got := batchItems(t, d.do(req{method: "POST", path: "/v1/meter-readings/batch", body: map[string]any{"readings": items}}, http.StatusOK))
		if flags(got[2].Reading) != "" || flags(got[3].Reading) != "usage_high" {
			t.Fatalf("batched months' flags: %v %v", got[2].Reading["flags"], got[3].Reading["flags"])
		}
		// No water used: flagged in an occupied room, not in a vacant one.
		dry := post(reading(d.room("303", true), "2026-10", 50, 0))
		empty := post(reading(d.room("304", false), "2026-10", 0, 0))
		if flags(dry) != "usage_zero" || flags(empty) != "" {
			t.Fatalf("zero usage: occupied %v, vacant %v", dry["flags"], empty["flags"])
		}
		// The lists.
		list := func(query string) []string {
			t.Helper()
			var ids []string
			for cursor := ""; ; {
				page := d.do(req{method: "GET", path: "/v1/meter-readings?limit=1&order=asc&property_id=" + d.prop + "&" + query + cursor}, http.StatusOK).json()
				for _, r := range page["data"].([]any) {
					ids = append(ids, r.(map[string]any)["id"].(string))
				}
				next, _ := page["pagination"].(map[string]any)["next_cursor"].(string)
				if next == "" {
					return ids
				}
				cursor = "&cursor=" + next
			}
		}
		flagged := []string{spike["id"].(string), got[3].Reading["id"].(string), dry["id"].(string)}
		if ids := list("flagged=true"); strings.Join(ids, " ") != strings.Join(flagged, " ") {
			t.Fatalf("flagged=true: %v, want %v", ids, flagged)
		}
		if ids := list("flagged=false"); len(ids) != 8 || strings.Contains(strings.Join(ids, " "), spike["id"].(string)) {
			t.Fatalf("flagged=false: %v", ids)
		}
		if n := len(list("flagged=true&room_id=" + spiky)); n != 1 {
			t.Fatalf("flagged=true&room_id: %d", n)
		}
		page := d.do(req{method: "GET", path: "/v1/meter-readings?limit=1&flagged=true&property_id=" + d.prop}, http.StatusOK).json()
		cursor := page["pagination"].(map[string]any)["next_cursor"].(string)
		want(t, d.h.do(req{key: d.key, method: "GET", path: "/v1/meter-readings?limit=1&flagged=false&property_id=" + d.prop + "&cursor=" + cursor}), http.StatusBadRequest, "invalid_cursor")
		for _, v := range []string{"yes", "", "TRUE"} {
			res := d.h.do(req{key: d.key, method: "GET", path: "/v1/meter-readings?flagged=" + v})
			if res.status != http.StatusBadRequest || res.code() != "invalid_parameter" || res.errField("param") != "flagged" {
				t.Fatalf("flagged=%s: %d %s", v, res.status, res.body)
			}
		}
		// Corrected: the spike was a misread; a usual month misread high.
		updated := d.events("meter.reading.updated")
		fixed := d.do(req{method: "PATCH", path: "/v1/meter-readings/" + spike["id"].(string), body: map[string]any{"electricity": map[string]any{"current": 1330 + 115}}}, http.StatusOK).data()
		if flags(fixed) != "" {
			t.Fatalf("corrected spike: %v", fixed["flags"])
		}
		misread := d.do(req{method: "PATCH", path: "/v1/meter-readings/" + got[3].Reading["id"].(string), body: map[string]any{"water": map[string]any{"current": 20}}}, http.StatusOK).data()
		if flags(misread) != "" {
			t.Fatalf("corrected water: %v", misread["flags"])
		}
		watered := d.do(req{method: "PATCH", path: "/v1/meter-readings/" + dry["id"].(string), body: map[string]any{"water": map[string]any{"current": 3}}}, http.StatusOK).data()
		if flags(watered) != "" {
			t.Fatalf("corrected dry room: %v", watered["flags"])
		}
		if ids := list("flagged=true"); len(ids) != 0 {
			t.Fatalf("flagged=true after the corrections: %v", ids)
		}
		if n := d.events("meter.reading.updated"); n != updated+3 {
			t.Fatalf("%d meter.reading.updated events, want %d", n, updated+3)
		}
		spiked := d.do(req{method: "PATCH", path: "/v1/meter-readings/" + fixed["id"].(string), body: map[string]any{"electricity": map[string]any{"current": 1330 + 400}}}, http.StatusOK).data()
		if flags(spiked) != "usage_high" {
			t.Fatalf("corrected into a spike: %v", spiked["flags"])
		}
		// Meters that wrapped: the months the flags look back on count
		// their usage past the maximum (250 kWh and 15 m³ each), so 400
		// kWh and 25 m³ are not twice their medians; and a month read
		// after a gap of more than the six months starts from the latest
		// reading before it. A rollover names its previous value, which
		// need not be the month before's current (in September here).
		wrapped := d.room("305", true)
		type part struct {
			previous, current float64
			rollover          bool
		}
		body := func(p part) map[string]any {
			b := map[string]any{"current": p.current}
			if p.rollover {
				b["previous"], b["rollover"] = p.previous, true
			}
			return b
		}
		for _, m := range []struct {
			month string
			e, w  part
		}{
			{"2026-01", part{0, 9800, false}, part{0, 9990, false}},
			{"2026-07", part{9800, 50, true}, part{9990, 5, true}},
			{"2026-08", part{50, 300, false}, part{5, 20, false}},
			{"2026-09", part{9950, 200, true}, part{9995, 10, true}},
			{"2026-10", part{200, 600, false}, part{10, 35, false}},
		} {
			r := post(map[string]any{"room_id": wrapped, "month": m.month, "electricity": body(m.e), "water": body(m.w)})
			if m.e.rollover && (r["electricity"].(map[string]any)["usage"] != 250.0 || r["water"].(map[string]any)["usage"] != 15.0) {
				t.Fatalf("%s: electricity %v, water %v", m.month, r["electricity"], r["water"])
			}
			if m.month == "2026-10" && flags(r) != "" {
				t.Fatalf("400 kWh and 25 m³ after three months of 250 and 15 over wrapped meters: flags %v", r["flags"])
			}
		}
		later := post(reading(wrapped, "2027-06", 700, 100))
		if e := later["electricity"].(map[string]any); e["previous"] != 600.0 || e["usage"] != 100.0 {
			t.Fatalf("after a gap: electricity %v, want previous 600", e)
		}
	})
}
