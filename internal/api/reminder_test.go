package api_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// sampleProperty is the ID of the sandbox's sample property of that name.
func sampleProperty(t *testing.T, h *harness, key, name string) string {
	t.Helper()
	for _, p := range list(t, h, key, "/v1/properties") {
		if p["name"] == name {
			return p["id"].(string)
		}
	}
	t.Fatalf("no sample property %q", name)
	return ""
}

// remindersOf counts the schedule's reminders by bill.
func remindersOf(t *testing.T, h *harness, key string) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, n := range list(t, h, key, "/v1/notifications?limit=100") {
		if n["trigger"] == rental.TriggerSchedule {
			out[n["bill_id"].(string)] = append(out[n["bill_id"].(string)], n)
		}
	}
	return out
}

// A property's reminder schedule is set on create and update, read back,
// replaced whole and turned off with null; a bad one is 400 naming the
// list, and changes nothing.
func TestReminderSchedule(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		m := newMonth(t, e)
		body := property("Baan Remind")
		body["reminders"] = map[string]any{"before_due_days": []int{3, 1}, "after_due_days": []int{2}}
		p := m.do(t, "POST", "/v1/properties", body, http.StatusCreated)
		id := p["id"].(string)
		r := p["reminders"].(map[string]any)
		if !slices.Equal(ids2(r["before_due_days"]), []float64{3, 1}) || !slices.Equal(ids2(r["after_due_days"]), []float64{2}) {
			t.Fatalf("reminders %v", r)
		}
		if plain := m.do(t, "POST", "/v1/properties", property("Baan Quiet"), http.StatusCreated); plain["reminders"] != nil {
			t.Fatalf("a property without a schedule: %v", plain["reminders"])
		}
		p = m.do(t, "PATCH", "/v1/properties/"+id, map[string]any{"reminders": map[string]any{"after_due_days": []int{7}}}, http.StatusOK)
		if r := p["reminders"].(map[string]any); len(r["before_due_days"].([]any)) != 0 || !slices.Equal(ids2(r["after_due_days"]), []float64{7}) {
			t.Fatalf("a PATCH replaces the schedule: %v", r)
		}
		for _, tc := range []struct {
			name  string
			body  any
			param string
		}{
			{"six days before", map[string]any{"reminders": map[string]any{"before_due_days": []int{1, 2, 3, 4, 5, 6}}}, "reminders.before_due_days"},
			{"16 days before", map[string]any{"reminders": map[string]any{"before_due_days": []int{16}}}, "reminders.before_due_days"},
			{"0 days after", map[string]any{"reminders": map[string]any{"after_due_days": []int{0}}}, "reminders.after_due_days"},
			{"61 days after", map[string]any{"reminders": map[string]any{"after_due_days": []int{61}}}, "reminders.after_due_days"},
			{"a day twice", map[string]any{"reminders": map[string]any{"after_due_days": []int{2, 2}}}, "reminders.after_due_days"},
			{"a fraction", `{"reminders": {"before_due_days": [1.5]}}`, "reminders.before_due_days"},
			{"not a list", `{"reminders": {"before_due_days": 3}}`, "reminders.before_due_days"},
			{"a null list", `{"reminders": {"before_due_days": null}}`, "reminders.before_due_days"},
			{"not an object", `{"reminders": [3, 1]}`, "reminders"},
			{"an unknown field", map[string]any{"reminders": map[string]any{"at": "09:00"}}, "reminders.at"},
		} {
			res := m.h.do(req{key: m.key, method: "PATCH", path: "/v1/properties/" + id, body: tc.body})
			want(t, res, http.StatusBadRequest, "invalid_parameter")
			if got := res.errField("param"); got != tc.param {
				t.Errorf("%s: param %q, want %q", tc.name, got, tc.param)
			}
		}
		p = m.do(t, "GET", "/v1/properties/"+id, nil, http.StatusOK)
		if r := p["reminders"].(map[string]any); !slices.Equal(ids2(r["after_due_days"]), []float64{7}) {
			t.Fatalf("refused changes changed the schedule: %v", r)
		}
		if p = m.do(t, "PATCH", "/v1/properties/"+id, map[string]any{"reminders": nil}, http.StatusOK); p["reminders"] != nil {
			t.Fatalf("null turns reminders off: %v", p["reminders"])
		}
	})
}

func ids2(v any) []float64 {
	var out []float64
	for _, it := range v.([]any) {
		out = append(out, it.(float64))
	}
	return out
}

// The sandbox's month with reminders 3 and 1 days before the due date and
// 2 days after: once the clock is advanced past the due date, each unpaid
// bill of the property has had exactly one payment_reminder for each of
// those days (trigger schedule), sent, before the advance answered; the
// other property's bills, without a schedule, and paid bills have none.
// Advancing again, and the periodic sweep, queue none twice.
func TestRemindersWithTheClock(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		key := h.testKey(h.fixture(rental.PlanEnterprise))
		prop := sampleProperty(t, h, key, "Baan Suk Dormitory")
		res := h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + prop,
			body: map[string]any{"reminders": map[string]any{"before_due_days": []int{3, 1}, "after_due_days": []int{2}}}})
		want(t, res, http.StatusOK)
		// The sample bills of this month (2026-11) fall due on 2026-12-05.
		due := list(t, h, key, "/v1/bills?status=issued&property_id="+prop)
		if len(due) != 3 || due[0]["due_date"] != "2026-12-05" {
			t.Fatalf("the sample property's issued bills: %v", due)
		}
		if n := len(remindersOf(t, h, key)); n != 0 {
			t.Fatalf("%d bills reminded before the clock moved", n)
		}
		// To 2026-12-12 10:00 Thailand time: past 12-02, 12-04 and 12-07.
		advance(t, h, key, 20)
		got := remindersOf(t, h, key)
		if len(got) != len(due) {
			t.Fatalf("%d bills reminded, want the property's %d unpaid ones: %v", len(got), len(due), got)
		}
		for _, b := range due {
			rs := got[b["id"].(string)]
			if len(rs) != 3 {
				t.Fatalf("bill %s: %d reminders, want one for each of 12-02, 12-04 and 12-07", b["id"], len(rs))
			}
			for _, r := range rs {
				if r["type"] != rental.NotifyPaymentReminder || r["status"] != rental.NotificationSent || r["tenant_id"] != b["tenant_id"] {
					t.Fatalf("reminder %v", r)
				}
			}
		}
		if n := len(list(t, h, key, "/v1/events?type=notification.sent&limit=100")); n != 9 {
			t.Fatalf("%d notification.sent events, want 9", n)
		}
		// Nothing is queued twice: not by another advance, nor by the sweep.
		advance(t, h, key, 1)
		if _, err := jobs.SweepReminders(t.Context(), e.DB); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, rs := range remindersOf(t, h, key) {
			n += len(rs)
		}
		if n != 9 {
			t.Fatalf("%d reminders after another day, want still 9", n)
		}
	})
}

// Two processes over one PostgreSQL database sweeping the day's reminders
// at once, again and again, queue each bill's reminder of the day once.
func TestRemindersTwoProcesses(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	h := newHarness(t, e)
	other := e.Another(t).DB
	key := h.testKey(h.fixture(rental.PlanEnterprise))
	prop := sampleProperty(t, h, key, "Baan Suk Dormitory")
	// The clock is at 2026-11-22 10:00 in Thailand: 13 days before the
	// sample bills' due date, 2026-12-05.
	want(t, h.do(req{key: key, method: "PATCH", path: "/v1/properties/" + prop,
		body: map[string]any{"reminders": map[string]any{"before_due_days": []int{13}}}}), http.StatusOK)
	var wg sync.WaitGroup
	for _, db := range []*store.DB{e.DB, other, e.DB, other} {
		wg.Go(func() {
			if _, err := jobs.SweepReminders(t.Context(), db); err != nil {
				t.Errorf("sweep: %v", err)
			}
		})
	}
	wg.Wait()
	got := remindersOf(t, h, key)
	if len(got) != 3 {
		t.Fatalf("%d bills reminded, want 3", len(got))
	}
	for bill, rs := range got {
		if len(rs) != 1 {
			t.Fatalf("bill %s reminded %d times", bill, len(rs))
		}
	}
}

// A bill issued fewer than 7 days before its due date warns short_notice;
// one issued a month ahead, and a draft, warn nothing.
func TestShortNotice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		m := newMonth(t, e)
		body := property("Baan Late")
		body["due_day"] = 25
		prop := m.do(t, "POST", "/v1/properties", body, http.StatusCreated)["id"].(string)
		room, _ := m.room(t, prop, "101", "Tenant", false, true, "2026-10")
		m.do(t, "POST", "/v1/meter-readings", map[string]any{"room_id": room, "month": "2026-11",
			"electricity": map[string]any{"current": 1200}, "water": map[string]any{"current": 110}}, http.StatusCreated)
		// Issued on 2026-11-22, due 2026-11-25: three days.
		late := m.do(t, "POST", "/v1/bills", map[string]any{"room_id": room, "month": "2026-10"}, http.StatusCreated)
		if late["due_date"] != "2026-11-25" || !slices.Equal(ids(late["warnings"]), []string{"short_notice"}) {
			t.Fatalf("a bill issued 3 days before it falls due: %v %v", late["due_date"], late["warnings"])
		}
		if got := m.do(t, "GET", "/v1/bills/"+late["id"].(string), nil, http.StatusOK); !slices.Equal(ids(got["warnings"]), []string{"short_notice"}) {
			t.Fatalf("read back: %v", got["warnings"])
		}
		draft := m.do(t, "POST", "/v1/bills", map[string]any{"room_id": room, "month": "2026-11", "issue": false}, http.StatusCreated)
		if len(draft["warnings"].([]any)) != 0 {
			t.Fatalf("a draft warns %v", draft["warnings"])
		}
		issued := m.do(t, "POST", "/v1/bills/"+draft["id"].(string)+"/issue", nil, http.StatusOK)
		if issued["due_date"] != "2026-12-25" || len(issued["warnings"].([]any)) != 0 {
			t.Fatalf("a bill issued a month ahead: %v %v", issued["due_date"], issued["warnings"])
		}
	})
}
