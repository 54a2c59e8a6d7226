package rental

import (
	"slices"
	"testing"
	"time"
)

// A schedule's lists are checked one by one, naming the list; a list left
// out is empty.
func TestNewReminders(t *testing.T) {
	t.Parallel()
	days := func(d ...int64) Optional[[]int64] { return Of(d) }
	for _, tc := range []struct {
		name          string
		c             ReminderChange
		before, after []int64
		param         string
	}{
		{name: "both lists", c: ReminderChange{BeforeDueDays: days(3, 1), AfterDueDays: days(2)}, before: []int64{3, 1}, after: []int64{2}},
		{name: "lists left out are empty", before: []int64{}, after: []int64{}},
		{name: "the due date itself and the bounds", c: ReminderChange{BeforeDueDays: days(0, 15), AfterDueDays: days(1, 60)}, before: []int64{0, 15}, after: []int64{1, 60}},
		{name: "five of each", c: ReminderChange{BeforeDueDays: days(1, 2, 3, 4, 5), AfterDueDays: days(1, 2, 3, 4, 5)}, before: []int64{1, 2, 3, 4, 5}, after: []int64{1, 2, 3, 4, 5}},
		{name: "six before", c: ReminderChange{BeforeDueDays: days(1, 2, 3, 4, 5, 6)}, param: "reminders.before_due_days"},
		{name: "six after", c: ReminderChange{AfterDueDays: days(1, 2, 3, 4, 5, 6)}, param: "reminders.after_due_days"},
		{name: "16 days before", c: ReminderChange{BeforeDueDays: days(16)}, param: "reminders.before_due_days"},
		{name: "a negative day before", c: ReminderChange{BeforeDueDays: days(-1)}, param: "reminders.before_due_days"},
		{name: "0 days after", c: ReminderChange{AfterDueDays: days(0)}, param: "reminders.after_due_days"},
		{name: "61 days after", c: ReminderChange{AfterDueDays: days(61)}, param: "reminders.after_due_days"},
		{name: "a day twice", c: ReminderChange{BeforeDueDays: days(3, 1, 3)}, param: "reminders.before_due_days"},
		{name: "a null list", c: ReminderChange{AfterDueDays: Optional[[]int64]{Set: true, Null: true}}, param: "reminders.after_due_days"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReminders(tc.c)
			if tc.param != "" {
				if e, ok := AsError(err); !ok || e.Code != "invalid_parameter" || e.Param != tc.param {
					t.Fatalf("%v, want invalid_parameter naming %s", err, tc.param)
				}
				return
			}
			if err != nil || !slices.Equal(r.BeforeDueDays, tc.before) || !slices.Equal(r.AfterDueDays, tc.after) || r.BeforeDueDays == nil || r.AfterDueDays == nil {
				t.Fatalf("%+v %v", r, err)
			}
		})
	}
}

// A property's reminders are replaced whole by a change, and null turns
// them off; a bad schedule changes nothing.
func TestPropertyReminders(t *testing.T) {
	t.Parallel()
	p, err := NewProperty(PropertyChange{Name: Of("Baan Suk"), ElectricityRate: Of[int64](800), WaterRate: Of[int64](1800)})
	if err != nil || p.Reminders != nil {
		t.Fatalf("a new property's reminders %v %v", p.Reminders, err)
	}
	if err := p.Apply(PropertyChange{Reminders: Of(ReminderChange{BeforeDueDays: Of([]int64{3, 1})})}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Reminders.BeforeDueDays, []int64{3, 1}) || len(p.Reminders.AfterDueDays) != 0 {
		t.Fatalf("%+v", p.Reminders)
	}
	if err := p.Apply(PropertyChange{Reminders: Of(ReminderChange{AfterDueDays: Of([]int64{0})})}); code(err) != "invalid_parameter" {
		t.Fatalf("a bad schedule: %v", err)
	}
	if err := p.Apply(PropertyChange{Reminders: Of(ReminderChange{AfterDueDays: Of([]int64{2})})}); err != nil {
		t.Fatal(err)
	}
	if len(p.Reminders.BeforeDueDays) != 0 || !slices.Equal(p.Reminders.AfterDueDays, []int64{2}) {
		t.Fatalf("a change replaces the schedule: %+v", p.Reminders)
	}
	if err := p.Apply(PropertyChange{Name: Of("Baan Suk 2")}); err != nil || p.Reminders == nil {
		t.Fatalf("a change without reminders keeps them: %+v %v", p.Reminders, err)
	}
	if err := p.Apply(PropertyChange{Reminders: Optional[ReminderChange]{Set: true, Null: true}}); err != nil || p.Reminders != nil {
		t.Fatalf("null turns them off: %+v %v", p.Reminders, err)
	}
}

// Which bills get a reminder on a day at 09:00: an unpaid issued or
// overdue bill whose due date is one of the schedule's days ahead or past.
func TestRemindsOn(t *testing.T) {
	t.Parallel()
	sched := &Reminders{BeforeDueDays: []int64{3, 1, 0}, AfterDueDays: []int64{2, 30}}
	bill := func(status, due string, total, paid int64) *Bill {
		return &Bill{Status: status, DueDate: due, Total: total, AmountPaid: paid}
	}
	for _, tc := range []struct {
		name  string
		r     *Reminders
		b     *Bill
		day   string
		wants bool
	}{
		{"3 days before", sched, bill(BillIssued, "2026-12-05", 100, 0), "2026-12-02", true},
		{"1 day before", sched, bill(BillIssued, "2026-12-05", 100, 0), "2026-12-04", true},
		{"on the due date", sched, bill(BillIssued, "2026-12-05", 100, 0), "2026-12-05", true},
		{"2 days before: not in the schedule", sched, bill(BillIssued, "2026-12-05", 100, 0), "2026-12-03", false},
		{"2 days after, overdue", sched, bill(BillOverdue, "2026-12-05", 100, 0), "2026-12-07", true},
		{"30 days after, across a month", sched, bill(BillOverdue, "2026-12-05", 100, 0), "2027-01-04", true},
		{"1 day after: not in the schedule", sched, bill(BillOverdue, "2026-12-05", 100, 0), "2026-12-06", false},
		{"partly paid still owes", sched, bill(BillOverdue, "2026-12-05", 100, 40), "2026-12-07", true},
		{"paid", sched, bill(BillPaid, "2026-12-05", 100, 100), "2026-12-04", false},
		{"a draft", sched, bill(BillDraft, "2026-12-05", 100, 0), "2026-12-04", false},
		{"nothing left to pay", sched, bill(BillIssued, "2026-12-05", 100, 100), "2026-12-04", false},
		{"no schedule", nil, bill(BillIssued, "2026-12-05", 100, 0), "2026-12-04", false},
		{"an empty schedule", &Reminders{}, bill(BillIssued, "2026-12-05", 100, 0), "2026-12-05", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RemindsOn(tc.r, tc.b, tc.day); got != tc.wants {
				t.Fatalf("RemindsOn = %v, want %v", got, tc.wants)
			}
			// DueDates names every due date RemindsOn accepts.
			if tc.wants && !slices.Contains(tc.r.DueDates(tc.day), tc.b.DueDate) {
				t.Fatalf("DueDates(%s) = %v leaves out %s", tc.day, tc.r.DueDates(tc.day), tc.b.DueDate)
			}
		})
	}
}

// A landlord's sweep queues today's reminders once 09:00 Thailand time has
// passed and they are not queued yet; a day missed altogether is skipped.
func TestRemindersDue(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, Bangkok)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name, last string
		now        time.Time
		day        string
	}{
		{"before 09:00", "2026-12-01", at("2026-12-02 08:59"), ""},
		{"at 09:00", "2026-12-01", at("2026-12-02 09:00"), "2026-12-02"},
		{"later that day (a process down at 09:00)", "2026-12-01", at("2026-12-02 17:30"), "2026-12-02"},
		{"never queued", "", at("2026-12-02 09:00"), "2026-12-02"},
		{"queued already", "2026-12-02", at("2026-12-02 09:01"), ""},
		{"a missed day is skipped", "2026-11-29", at("2026-12-02 09:01"), "2026-12-02"},
		{"just before midnight, UTC already the next day", "2026-12-01", at("2026-12-02 23:59"), "2026-12-02"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			day, ok := RemindersDue(tc.last, tc.now)
			if day != tc.day || ok != (tc.day != "") {
				t.Fatalf("RemindersDue = %q %v, want %q", day, ok, tc.day)
			}
		})
	}
}

// A sandbox clock moved from from to to catches up on every day whose
// 09:00 falls in (from, to], in order.
func TestReminderDays(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, _ := time.ParseInLocation("2006-01-02 15:04", s, Bangkok)
		return v
	}
	for _, tc := range []struct {
		name     string
		from, to time.Time
		days     []string
	}{
		{"within one morning", at("2026-12-02 07:00"), at("2026-12-02 08:00"), nil},
		{"past 09:00", at("2026-12-02 07:00"), at("2026-12-02 09:00"), []string{"2026-12-02"}},
		{"from 09:00 exactly", at("2026-12-02 09:00"), at("2026-12-03 08:59"), nil},
		{"three days", at("2026-12-02 10:00"), at("2026-12-05 10:00"), []string{"2026-12-03", "2026-12-04", "2026-12-05"}},
		{"across a year", at("2026-12-31 08:00"), at("2027-01-01 09:30"), []string{"2026-12-31", "2027-01-01"}},
		{"UTC times", time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC), []string{"2026-12-02"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReminderDays(tc.from, tc.to); !slices.Equal(got, tc.days) {
				t.Fatalf("ReminderDays = %v, want %v", got, tc.days)
			}
		})
	}
	if got := len(ReminderDays(at("2026-01-01 00:00"), at("2027-02-05 00:00"))); got != 400 {
		t.Fatalf("400 days of reminders: %d", got)
	}
}

// short_notice marks a bill issued fewer than 7 days (Thailand dates)
// before its due date; a draft has no warnings.
func TestBillWarnings(t *testing.T) {
	t.Parallel()
	at := func(s string) *Time {
		v, _ := time.ParseInLocation("2006-01-02 15:04", s, Bangkok)
		return &Time{Time: v.UTC()}
	}
	for _, tc := range []struct {
		name   string
		issued *Time
		due    string
		want   []string
	}{
		{"a draft", nil, "2026-12-05", []string{}},
		{"3 days before", at("2026-11-22 10:00"), "2026-11-25", []string{WarningShortNotice}},
		{"6 days before, late at night", at("2026-11-29 23:59"), "2026-12-05", []string{WarningShortNotice}},
		{"7 days before, just after midnight (UTC the day before)", at("2026-11-28 00:30"), "2026-12-05", []string{}},
		{"issued after the due date", at("2026-12-06 09:00"), "2026-12-05", []string{WarningShortNotice}},
		{"a month ahead", at("2026-11-01 09:00"), "2026-12-05", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := BillWarnings(tc.issued, tc.due)
			if got == nil || !slices.Equal(got, tc.want) {
				t.Fatalf("BillWarnings = %#v, want %v", got, tc.want)
			}
		})
	}
	b, err := NewBill(BillSource{Room: Room{ID: "room_1"}, Reading: &Reading{ID: "mrd_1"}, DueDay: 25, Month: "2026-10", Issue: true}, now)
	if err != nil || !slices.Equal(b.Warnings, []string{WarningShortNotice}) {
		t.Fatalf("a bill issued on the 22nd due on the 25th: %v %v", b.Warnings, err)
	}
	d, _ := NewBill(BillSource{Room: Room{ID: "room_1"}, Reading: &Reading{ID: "mrd_1"}, DueDay: 25, Month: "2026-10"}, now)
	if d.Warnings == nil || len(d.Warnings) != 0 {
		t.Fatalf("a draft's warnings %#v", d.Warnings)
	}
	if err := d.Issue(now, nil); err != nil || !slices.Equal(d.Warnings, []string{WarningShortNotice}) {
		t.Fatalf("issued later: %v %v", d.Warnings, err)
	}
}

// Paced notices go SendInterval apart from the landlord's next free slot,
// or from the start when that is later: never more than 60 a minute.
func TestPaceSends(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 12, 2, 2, 0, 0, 0, time.UTC)
	at, next := PaceSends(time.Time{}, base, 3)
	if !slices.Equal(at, []time.Time{base, base.Add(time.Second), base.Add(2 * time.Second)}) || !next.Equal(base.Add(3*time.Second)) {
		t.Fatalf("from now: %v next %v", at, next)
	}
	at, next = PaceSends(next, base.Add(time.Second), 2)
	if !at[0].Equal(base.Add(3*time.Second)) || !next.Equal(base.Add(5*time.Second)) {
		t.Fatalf("after a queue: %v next %v", at, next)
	}
	at, next = PaceSends(next, base.Add(time.Hour), 0)
	if len(at) != 0 || !next.Equal(base.Add(time.Hour)) {
		t.Fatalf("none: %v next %v", at, next)
	}
	at, _ = PaceSends(time.Time{}, base, 500)
	for i := 60; i < len(at); i++ {
		if at[i].Sub(at[i-60]) < time.Minute {
			t.Fatalf("sends %d and %d are %v apart: over 60 a minute", i-60, i, at[i].Sub(at[i-60]))
		}
	}
}

// A bill run bills each room by NewBill's rule and skips those without a
// reading or with a bill, in order; notify without issuing is refused.
func TestPlanBillRun(t *testing.T) {
	t.Parallel()
	billID := "bill_9"
	room := func(id string) Room { return Room{ID: id, PropertyID: "prop_1", Number: id, MonthlyRent: 100} }
	srcs := []BillSource{
		{Room: room("r1"), Reading: &Reading{ID: "mrd_1"}, Month: "2026-11", DueDay: 5, Issue: true},
		{Room: room("r2"), Month: "2026-11", DueDay: 5, Issue: true},
		{Room: room("r3"), Reading: &Reading{ID: "mrd_3", BillID: &billID}, Bills: []RoomBill{{ID: billID}}, Month: "2026-11", DueDay: 5, Issue: true},
		{Room: room("r4"), Reading: &Reading{ID: "mrd_4"}, Tenant: &Tenant{ID: "tnt_4", Occupants: 1}, Month: "2026-11", DueDay: 5, Issue: true},
	}
	bills, skipped, err := PlanBillRun(srcs, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(bills) != 2 || bills[0].RoomID != "r1" || bills[1].RoomID != "r4" || bills[1].Status != BillIssued || *bills[1].TenantID != "tnt_4" {
		t.Fatalf("bills %+v", bills)
	}
	want := []BillRunSkip{{"r2", SkipReadingRequired}, {"r3", SkipBillExists}}
	if !slices.Equal(skipped, want) {
		t.Fatalf("skipped %v, want %v", skipped, want)
	}
	if _, skipped, _ := PlanBillRun(nil, now); skipped == nil {
		t.Fatal("no rooms: skipped is an empty list, not null")
	}
	for _, tc := range []struct {
		issue, notify bool
		ok            bool
	}{{true, true, true}, {true, false, true}, {false, false, true}, {false, true, false}} {
		err := CheckBillRun(tc.issue, tc.notify)
		if e, _ := AsError(err); tc.ok != (err == nil) || (!tc.ok && e.Param != "notify") {
			t.Errorf("issue %v notify %v: %v", tc.issue, tc.notify, err)
		}
	}
}
