package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// bangkok is Asia/Bangkok, where the service's days begin and end.
var bangkok = time.FixedZone("ICT", 7*3600)

// story is a 10-room dormitory's three months in a sandbox, moved by the
// sandbox's clock: charges and a discount, readings in batches with a
// spike flagged, a bill run with notify each month, one tenant paying late
// (reminders before and after the due date, late fees day by day up to
// the cap), the last month issued on short notice. Its requests go to the
// harnesses in turn (one, or two processes over one database) and sweeps
// may run beside its clock's advances; what it records is compared across
// runs.
type story struct {
	t    *testing.T
	hs   []*harness
	n    int
	key  string
	prop string
	// rooms are the room IDs by number, tenants the tenant IDs by number.
	rooms, tenants map[string]string
	// m1 is the first month billed; due1 its bills' due date.
	m1   time.Time
	due1 time.Time
	// sweep, when set, runs beside every advance of the clock.
	sweep func()
	// billRooms are the room numbers of the story's bills, by bill ID.
	billRooms map[string]string
}

// h is the harness the next request goes to: each in turn.
func (s *story) h() *harness {
	s.n++
	return s.hs[s.n%len(s.hs)]
}

func (s *story) post(path string, body any, status int) map[string]any {
	s.t.Helper()
	res := s.h().do(req{key: s.key, method: "POST", path: path, body: body, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
	want(s.t, res, status)
	return res.data()
}

func (s *story) get(path string) map[string]any {
	s.t.Helper()
	res := s.h().do(req{key: s.key, method: "GET", path: path})
	want(s.t, res, http.StatusOK)
	return res.data()
}

// all reads every page of a list.
func (s *story) all(path string) []map[string]any {
	s.t.Helper()
	var out []map[string]any
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for cursor := ""; ; {
		p := path + sep + "limit=100&order=asc"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		res := s.h().do(req{key: s.key, method: "GET", path: p})
		want(s.t, res, http.StatusOK)
		for _, it := range res.json()["data"].([]any) {
			out = append(out, it.(map[string]any))
		}
		pg := res.json()["pagination"].(map[string]any)
		if pg["has_more"] != true {
			return out
		}
		cursor = pg["next_cursor"].(string)
	}
}

// at moves the sandbox's clock to the Bangkok time of day on the date,
// with the sweep (when set) racing the advance.
func (s *story) at(date time.Time, hour, minute int) {
	s.t.Helper()
	to := time.Date(date.Year(), date.Month(), date.Day(), hour, minute, 0, 0, bangkok)
	var wg sync.WaitGroup
	if s.sweep != nil {
		wg.Go(s.sweep)
	}
	res := s.h().do(req{key: s.key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"to": to.UTC().Format(time.RFC3339)},
		headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
	wg.Wait()
	want(s.t, res, http.StatusOK)
}

func monthOff(t time.Time, add int) string { return t.AddDate(0, add, 0).Format("2006-01") }

var storyRooms = []string{"101", "102", "103", "104", "105", "106", "107", "108", "109", "110"}

// setUp makes the property, its rooms, tenants (registered on LINE) and
// charges, and three months of ordinary readings before m1, at 10:00 on
// the 25th of the month after the sandbox's real one.
func (s *story) setUp() {
	t := s.t
	now := parseTime(t, s.get("/v1/test-helpers/clock")["now"]).In(bangkok)
	s.m1 = time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, bangkok)
	s.due1 = s.m1.AddDate(0, 1, 4)
	s.at(s.m1.AddDate(0, 0, 24), 10, 0)

	s.prop = s.post("/v1/properties", map[string]any{"name": "Baan Story", "address": "1 Soi Story, Bangkok", "electricity_rate": 800,
		"water_rate": 1800, "due_day": 5,
		"late_fee":  map[string]any{"amount": 5000, "per": "day", "grace_days": 2, "max_amount": 12000},
		"reminders": map[string]any{"before_due_days": []int{3, 1}, "after_due_days": []int{2}}}, http.StatusCreated)["id"].(string)
	s.rooms, s.tenants = map[string]string{}, map[string]string{}
	for i, n := range storyRooms {
		s.rooms[n] = s.post("/v1/properties/"+s.prop+"/rooms", map[string]any{"number": n, "monthly_rent": 350000}, http.StatusCreated)["id"].(string)
		s.tenants[n] = s.post("/v1/rooms/"+s.rooms[n]+"/tenant", map[string]any{"name": "Tenant " + n, "phone": fmt.Sprintf("08123456%02d", i)},
			http.StatusCreated)["id"].(string)
		s.post("/v1/test-helpers/tenants/"+s.tenants[n]+"/line-register", nil, http.StatusOK)
		s.post("/v1/rooms/"+s.rooms[n]+"/charges", map[string]any{"description": "Internet", "amount": 30000, "recurring": true,
			"month": monthOff(s.m1, 0)}, http.StatusCreated)
	}
	s.post("/v1/rooms/"+s.rooms["102"]+"/charges", map[string]any{"type": "discount", "description": "Long-stay discount", "amount": 50000,
		"month": monthOff(s.m1, 0)}, http.StatusCreated)
	s.post("/v1/rooms/"+s.rooms["103"]+"/charges", map[string]any{"description": "Parking", "amount": 100000, "recurring": true,
		"month": monthOff(s.m1, 0), "ends_month": monthOff(s.m1, 1)}, http.StatusCreated)

	// Three ordinary months: 100 kWh and 10 m³ each.
	var readings []map[string]any
	for i := -3; i < 0; i++ {
		for _, n := range storyRooms {
			r := map[string]any{"room_id": s.rooms[n], "month": monthOff(s.m1, i),
				"electricity": map[string]any{"current": 1000 + 100*(i+4)}, "water": map[string]any{"current": 100 + 10*(i+4)}}
			if i == -3 {
				r["electricity"].(map[string]any)["previous"] = 1000
				r["water"].(map[string]any)["previous"] = 100
			}
			readings = append(readings, r)
		}
	}
	s.batch(readings, 30)
}

// batch records readings in one request and checks each was created.
func (s *story) batch(readings []map[string]any, created int) []any {
	s.t.Helper()
	res := s.h().do(req{key: s.key, method: "POST", path: "/v1/meter-readings/batch", body: map[string]any{"readings": readings},
		headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
	want(s.t, res, http.StatusOK)
	items := res.json()["data"].([]any)
	n := 0
	for i, it := range items {
		item := it.(map[string]any)
		if item["index"] != float64(i) {
			s.t.Fatalf("batch item %d has index %v", i, item["index"])
		}
		if item["status"] == float64(http.StatusCreated) {
			n++
		} else {
			s.t.Fatalf("batch item %d: %v", i, item)
		}
	}
	if n != created {
		s.t.Fatalf("%d readings created, want %d", n, created)
	}
	return items
}

// monthOf records month m+k's readings (100 kWh and 10 m³ each, but for
// the rooms in usage) and runs its bills with notify.
func (s *story) monthOf(k int, usage map[string][2]int) map[string]any {
	s.t.Helper()
	var readings []map[string]any
	for _, n := range storyRooms {
		u, ok := usage[n]
		if !ok {
			u = [2]int{100, 10}
		}
		readings = append(readings, map[string]any{"room_id": s.rooms[n], "month": monthOff(s.m1, k),
			"electricity": map[string]any{"current": s.lastMeter(n, "electricity") + u[0]}, "water": map[string]any{"current": s.lastMeter(n, "water") + u[1]}})
	}
	s.batch(readings, len(storyRooms))
	run := s.post("/v1/properties/"+s.prop+"/bills", map[string]any{"month": monthOff(s.m1, k), "notify": true}, http.StatusOK)
	if run["object"] != "bill_run" || len(run["created"].([]any)) != len(storyRooms) || len(run["skipped"].([]any)) != 0 ||
		run["notifications_queued"] != float64(len(storyRooms)) {
		s.t.Fatalf("bill run of %s: %v", monthOff(s.m1, k), run)
	}
	// A second run finds every room billed.
	again := s.post("/v1/properties/"+s.prop+"/bills", map[string]any{"month": monthOff(s.m1, k)}, http.StatusOK)
	if len(again["created"].([]any)) != 0 || len(again["skipped"].([]any)) != len(storyRooms) {
		s.t.Fatalf("a second bill run of %s: %v", monthOff(s.m1, k), again)
	}
	for _, sk := range again["skipped"].([]any) {
		if sk.(map[string]any)["reason"] != "bill_exists" {
			s.t.Fatalf("a second bill run skipped %v", sk)
		}
	}
	return run
}

// lastMeter is the room's meter's last value.
func (s *story) lastMeter(room, kind string) int {
	s.t.Helper()
	for _, m := range s.all("/v1/meters?room_id=" + s.rooms[room]) {
		if m["kind"] == kind {
			return int(m["last_value"].(float64))
		}
	}
	s.t.Fatalf("room %s has no %s meter", room, kind)
	return 0
}

// bill is the room's bill of month m1+k.
func (s *story) bill(room string, k int) map[string]any {
	s.t.Helper()
	bills := s.all("/v1/bills?room_id=" + s.rooms[room] + "&month=" + monthOff(s.m1, k))
	if len(bills) != 1 {
		s.t.Fatalf("room %s has %d bills of %s", room, len(bills), monthOff(s.m1, k))
	}
	return bills[0]
}

// payAll pays the month's bills but those of the rooms skipped.
func (s *story) payAll(k int, skip ...string) {
	s.t.Helper()
	for _, n := range storyRooms {
		if !slices.Contains(skip, n) {
			s.post("/v1/test-helpers/payments", map[string]any{"bill_id": s.bill(n, k)["id"], "outcome": "paid"}, http.StatusOK)
		}
	}
}

// lineAmounts sums a bill's lines by type.
func lineAmounts(b map[string]any) map[string]int64 {
	out := map[string]int64{}
	for _, l := range b["lines"].([]any) {
		line := l.(map[string]any)
		out[line["type"].(string)] += int64(line["amount"].(float64))
	}
	return out
}

// run plays the whole story and returns what it recorded: the property's
// bills and events, as lines comparable across runs.
func (s *story) run() (bills, events []string) {
	t := s.t
	s.setUp()

	// Month 1: room 105 uses four times its usual electricity.
	s.monthOf(0, map[string][2]int{"105": {400, 10}})
	flagged := s.all("/v1/meter-readings?flagged=true&property_id=" + s.prop)
	if len(flagged) != 1 || flagged[0]["room_id"] != s.rooms["105"] || !slices.Contains(flagged[0]["flags"].([]any), any("usage_high")) {
		t.Fatalf("flagged readings %v", flagged)
	}
	for n, want := range map[string]int64{"101": 478000, "102": 428000, "103": 578000, "105": 718000} {
		b := s.bill(n, 0)
		if got := int64(b["total"].(float64)); got != want || b["status"] != rental.BillIssued {
			t.Fatalf("room %s's first bill: %v %d, want issued %d (lines %v)", n, b["status"], got, want, b["lines"])
		}
		if w := b["warnings"].([]any); len(w) != 0 {
			t.Fatalf("room %s's first bill, issued 11 days ahead, warns %v", n, w)
		}
	}
	s.payAll(0, "107")
	late := s.bill("107", 0)["id"].(string)

	// Reminders three days and one day before the due date, then the bill
	// turns overdue, is reminded of two days after, and takes its late
	// fee from the third day (two days' grace): 5,000, 10,000, then the
	// cap of 12,000.
	fees := map[string]int64{}
	for d := -3; d <= 7; d++ {
		day := s.due1.AddDate(0, 0, d)
		s.at(day, 0, 30)
		fees[day.Format("01-02")] = lineAmounts(s.bill("107", 0))["late_fee"]
		s.at(day, 10, 0)
	}
	wantFees := map[string]int64{}
	for d := -3; d <= 7; d++ {
		day := s.due1.AddDate(0, 0, d).Format("01-02")
		wantFees[day] = [...]int64{0, 0, 0, 0, 0, 0, 5000, 10000, 12000, 12000, 12000}[d+3]
	}
	if fmt.Sprint(fees) != fmt.Sprint(wantFees) {
		t.Fatalf("late fees by day %v, want %v", fees, wantFees)
	}
	b := s.bill("107", 0)
	if b["status"] != rental.BillOverdue || int64(b["total"].(float64)) != 478000+12000 {
		t.Fatalf("the late bill after a week: %v", b)
	}
	// A reminder is queued on its day (at 09:00, or when an advance
	// passes it), once.
	var reminded, wantReminded []string
	for _, n := range s.all("/v1/notifications?bill_id=" + late) {
		if n["type"] == "payment_reminder" {
			if n["trigger"] != "schedule" || n["status"] != rental.NotificationSent {
				t.Fatalf("reminder %v", n)
			}
			reminded = append(reminded, parseTime(t, n["created_at"]).In(bangkok).Format("01-02"))
		}
	}
	for _, d := range []int{-3, -1, 2} {
		wantReminded = append(wantReminded, s.due1.AddDate(0, 0, d).Format("01-02"))
	}
	if fmt.Sprint(reminded) != fmt.Sprint(wantReminded) {
		t.Fatalf("reminders on %v, want %v", reminded, wantReminded)
	}
	// Paid at last: the fee stops.
	s.post("/v1/test-helpers/payments", map[string]any{"bill_id": late, "outcome": "paid"}, http.StatusOK)
	s.at(s.due1.AddDate(0, 0, 9), 10, 0)
	if b := s.bill("107", 0); b["status"] != rental.BillPaid || lineAmounts(b)["late_fee"] != 12000 {
		t.Fatalf("the late bill paid: %v", b)
	}

	// Month 2, on the 25th: room 108's electricity meter does not move.
	s.at(s.m1.AddDate(0, 1, 24), 10, 0)
	s.monthOf(1, map[string][2]int{"108": {0, 10}})
	flagged = s.all("/v1/meter-readings?flagged=true&month=" + monthOff(s.m1, 1))
	if len(flagged) != 1 || flagged[0]["room_id"] != s.rooms["108"] || !slices.Contains(flagged[0]["flags"].([]any), any("usage_zero")) {
		t.Fatalf("flagged readings of month 2: %v", flagged)
	}
	if l := lineAmounts(s.bill("102", 1)); l["discount"] != 0 || l["charge"] != 30000 {
		t.Fatalf("room 102's second bill keeps a one-off discount: %v", l)
	}
	if l := lineAmounts(s.bill("103", 1)); l["charge"] != 130000 {
		t.Fatalf("room 103's second bill lacks its parking: %v", l)
	}
	s.payAll(1)

	// Month 3, billed on the 1st for the 5th: short notice.
	s.at(s.m1.AddDate(0, 3, 0), 10, 0)
	s.monthOf(2, nil)
	for _, n := range storyRooms {
		b := s.bill(n, 2)
		if w := b["warnings"].([]any); len(w) != 1 || w[0] != "short_notice" {
			t.Fatalf("room %s's third bill, issued 4 days ahead, warns %v", n, w)
		}
	}
	if l := lineAmounts(s.bill("103", 2)); l["charge"] != 30000 {
		t.Fatalf("room 103's parking went on past its last month: %v", l)
	}
	s.payAll(2)
	s.at(s.m1.AddDate(0, 3, 9), 10, 0)

	// Every notice of the three months was sent once.
	notices := map[string]int{}
	for _, n := range s.all("/v1/notifications") {
		if n["bill_id"] == nil {
			continue
		}
		if _, ours := s.billRoom(n["bill_id"].(string)); !ours {
			continue
		}
		if n["status"] != rental.NotificationSent {
			t.Fatalf("notice %v", n)
		}
		notices[n["type"].(string)+" "+n["trigger"].(string)]++
	}
	if fmt.Sprint(notices) != fmt.Sprint(map[string]int{"new_bill bill_run": 30, "payment_reminder schedule": 3}) {
		t.Fatalf("notices %v", notices)
	}

	// What the run leaves, in words that do not depend on IDs or times.
	room := map[string]string{}
	for n, id := range s.rooms {
		room[id] = n
	}
	for _, b := range s.all("/v1/bills?property_id=" + s.prop) {
		bills = append(bills, fmt.Sprintf("%s %s %s total=%v paid=%v lines=%v warnings=%v", room[b["room_id"].(string)], b["month"], b["status"],
			b["total"], b["amount_paid"], lineAmounts(b), b["warnings"]))
	}
	sort.Strings(bills)
	for _, ev := range s.all("/v1/events") {
		obj := ev["data"].(map[string]any)["object"].(map[string]any)
		r, ok := room[fmt.Sprint(obj["room_id"])]
		if !ok {
			r, ok = room[fmt.Sprint(obj["id"])]
		}
		if !ok && obj["bill_id"] != nil {
			r, ok = s.billRoom(obj["bill_id"].(string))
		}
		if !ok {
			continue // the sandbox's sample data
		}
		line := fmt.Sprintf("%s %s %s", ev["type"], obj["object"], r)
		switch obj["object"] {
		case "bill":
			line += fmt.Sprintf(" %s %s total=%v paid=%v", obj["month"], obj["status"], obj["total"], obj["amount_paid"])
		case "notification":
			line += fmt.Sprintf(" %s %s %s", obj["type"], obj["trigger"], obj["status"])
		case "meter_reading":
			line += fmt.Sprintf(" %s %v", obj["month"], obj["flags"])
		}
		events = append(events, line)
	}
	sort.Strings(events)
	return bills, events
}

// billRoom is the number of the room of one of the story's bills; false
// for a bill of the sandbox's sample data.
func (s *story) billRoom(billID string) (string, bool) {
	if s.billRooms == nil {
		room := map[string]string{}
		for n, id := range s.rooms {
			room[id] = n
		}
		s.billRooms = map[string]string{}
		for _, b := range s.all("/v1/bills?property_id=" + s.prop) {
			s.billRooms[b["id"].(string)] = room[b["room_id"].(string)]
		}
	}
	r, ok := s.billRooms[billID]
	return r, ok
}

func newStory(t *testing.T, hs ...*harness) *story {
	key := hs[0].testKey(hs[0].fixture(rental.PlanEnterprise))
	return &story{t: t, hs: hs, key: key}
}

func TestMonthStory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		bills, events := newStory(t, newHarness(t, e)).run()
		if len(bills) != 30 {
			t.Fatalf("%d bills", len(bills))
		}
		seen := map[string]int{}
		for _, ev := range events {
			seen[strings.Fields(ev)[0]]++
		}
		// One bill.created a bill, one bill.overdue for the late one, one
		// payment.paid a bill (the late one paid once, in full), two sends
		// a month's notices and three reminders.
		for typ, n := range map[string]int{"bill.created": 30, "bill.overdue": 1, "payment.paid": 30, "notification.sent": 33,
			"meter.reading.created": 60} {
			if seen[typ] != n {
				t.Errorf("%d %s events, want %d", seen[typ], typ, n)
			}
		}
	})
}

// The same story over two processes on one PostgreSQL database, its
// requests alternating between them and every time-driven sweep of a
// third running beside each advance, ends with the same bills and exactly
// the same events as on one, none twice.
func TestMonthStoryTwoProcesses(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	one, oneEvents := newStory(t, newHarness(t, e)).run()

	other := e.Another(t)
	db := other.DB
	s := newStory(t, newHarness(t, e), newHarness(t, other))
	s.sweep = func() {
		for _, sweep := range []func(context.Context, *store.DB) (int, error){jobs.SweepOverdue, jobs.SweepExpiredPayments} {
			if _, err := sweep(t.Context(), db); err != nil {
				t.Errorf("sweep: %v", err)
			}
		}
	}
	two, twoEvents := s.run()
	if strings.Join(one, "\n") != strings.Join(two, "\n") {
		t.Fatalf("bills on one process:\n%s\non two:\n%s", strings.Join(one, "\n"), strings.Join(two, "\n"))
	}
	if strings.Join(oneEvents, "\n") != strings.Join(twoEvents, "\n") {
		t.Fatalf("events on one process:\n%s\non two:\n%s", strings.Join(oneEvents, "\n"), strings.Join(twoEvents, "\n"))
	}
}

// In live mode the reminders of a bill left unpaid reach LINE: three days
// and one day before its due date and two days after, each pushed once
// whatever the number of sweeps that run on each day, with its own retry
// key, the process's clock moved day by day as real time would move it.
func TestRemindersOverLINE(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		registerTenant(t, h, billTenant(t, h, p))
		bill := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill}).data()
		res := h.do(req{key: p.key, method: "PATCH", path: "/v1/properties/" + bill["property_id"].(string),
			body: map[string]any{"reminders": map[string]any{"before_due_days": []int{3, 1}, "after_due_days": []int{2}}}})
		want(t, res, http.StatusOK)
		due, err := time.ParseInLocation(time.DateOnly, bill["due_date"].(string), bangkok)
		if err != nil {
			t.Fatal(err)
		}
		sweeps := []func(context.Context, *store.DB) (int, error){jobs.SweepOverdue, jobs.SweepLateFees, jobs.SweepReminders}
		pushedOn := map[string]int{}
		for d := -4; d <= 4; d++ {
			day := due.AddDate(0, 0, d)
			for _, at := range []time.Time{day.Add(8 * time.Hour), day.Add(9*time.Hour + time.Minute), day.Add(15 * time.Hour)} {
				if gap := at.Sub(e.Clock.Now()); gap > 0 {
					e.Clock.Advance(gap)
				}
				var wg sync.WaitGroup
				for range 2 {
					for _, sweep := range sweeps {
						wg.Go(func() {
							if _, err := sweep(t.Context(), e.DB); err != nil {
								t.Errorf("sweep: %v", err)
							}
						})
					}
				}
				wg.Wait()
				h.settleChat()
			}
			n, _ := line.pushes()
			pushedOn[day.Format("01-02")] = n
		}
		var days []string
		for d := -4; d <= 4; d++ {
			day := due.AddDate(0, 0, d).Format("01-02")
			if prev := due.AddDate(0, 0, d-1).Format("01-02"); pushedOn[day] > pushedOn[prev] {
				days = append(days, fmt.Sprintf("%s+%d", day, pushedOn[day]-pushedOn[prev]))
			}
		}
		wantDays := []string{due.AddDate(0, 0, -3).Format("01-02") + "+1", due.AddDate(0, 0, -1).Format("01-02") + "+1",
			due.AddDate(0, 0, 2).Format("01-02") + "+1"}
		if fmt.Sprint(days) != fmt.Sprint(wantDays) {
			t.Fatalf("pushes by day %v, want %v", days, wantDays)
		}
		pushes, accepted := line.pushes()
		if pushes != 3 || len(accepted) != 3 {
			t.Fatalf("%d pushes, %d accepted", pushes, len(accepted))
		}
		for _, m := range accepted {
			if !strings.Contains(string(m), rental.Baht(p.total)) {
				t.Fatalf("a reminder without the bill's total %s: %s", rental.Baht(p.total), m)
			}
		}
		var reminders int
		for _, n := range list(t, h, p.key, "/v1/notifications?bill_id="+p.bill) {
			if n["type"] != "payment_reminder" || n["trigger"] != "schedule" || n["status"] != rental.NotificationSent || n["attempts"] != float64(1) {
				t.Fatalf("notification %v", n)
			}
			reminders++
		}
		if reminders != 3 {
			t.Fatalf("%d reminders", reminders)
		}
	})
}
