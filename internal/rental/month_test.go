package rental

import (
	"testing"
	"time"
)

// A month to show must have begun in Thailand: the current month and any
// before it are taken, the next is refused even an hour before it starts.
func TestBegunMonthStart(t *testing.T) {
	now := time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC) // 23:00 on the 30th in Bangkok
	cases := []struct {
		month string
		want  time.Time
		code  string
	}{
		{"2026-11", time.Date(2026, 11, 1, 0, 0, 0, 0, Bangkok), ""},
		{"2026-10", time.Date(2026, 10, 1, 0, 0, 0, 0, Bangkok), ""},
		{"2000-01", time.Date(2000, 1, 1, 0, 0, 0, 0, Bangkok), ""},
		{"2026-12", time.Time{}, "invalid_parameter"},
		{"2027-01", time.Time{}, "invalid_parameter"},
		{"2026-13", time.Time{}, "invalid_parameter"},
		{"2026-1", time.Time{}, "invalid_parameter"},
		{"", time.Time{}, "invalid_parameter"},
	}
	for _, c := range cases {
		got, err := BegunMonthStart("month", c.month, now)
		if code(err) != c.code || !got.Equal(c.want) {
			t.Errorf("%q: %v, %v; want %v, %q", c.month, got, err, c.want, c.code)
		}
		if e, ok := AsError(err); ok && e.Param != "month" {
			t.Errorf("%q: param %q", c.month, e.Param)
		}
	}
}

// A developer's month closes once it has ended in Thailand, and only for a
// developer who existed before its end.
func TestMonthClosable(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 10, 1, 0, 0, 0, 0, Bangkok)
	end := time.Date(2026, 11, 1, 0, 0, 0, 0, Bangkok)
	before := start.AddDate(-1, 0, 0)
	for _, c := range []struct {
		name         string
		created, now time.Time
		want         bool
	}{
		{"ended", before, end, true},
		{"long ended", before, end.AddDate(1, 0, 0), true},
		{"a moment before its end", before, end.Add(-time.Millisecond), false},
		{"in it", before, start.AddDate(0, 0, 10), false},
		{"created in it", start.AddDate(0, 0, 30), end, true},
		{"created at its end", end, end.Add(time.Hour), false},
		{"created after it", end.Add(time.Hour), end.Add(2 * time.Hour), false},
	} {
		if got := MonthClosable(start, c.created, c.now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// A month is counted under the plan in effect while it runs, and once it
// is over under the plan it ended on: a downgrade on the 1st after it does
// not reach back.
func TestPlanForMonth(t *testing.T) {
	december := Time{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, Bangkok)}
	downgrade := PlanState{Plan: PlanPro, Pending: PlanFree, PendingFrom: &december}
	november := time.Date(2026, 11, 1, 0, 0, 0, 0, Bangkok)
	cases := []struct {
		name  string
		st    PlanState
		start time.Time
		now   time.Time
		want  DeveloperPlan
	}{
		{"this month, downgrade waiting", downgrade, november, time.Date(2026, 11, 20, 0, 0, 0, 0, Bangkok), PlanPro},
		{"this month, its last millisecond", downgrade, november, december.Add(-time.Millisecond), PlanPro},
		{"last month, downgrade since", downgrade, november, december.Time, PlanPro},
		{"new month, downgrade in effect", downgrade, december.Time, december.Add(time.Hour), PlanFree},
		{"a month long ago", PlanState{Plan: PlanDeveloper}, time.Date(2025, 1, 1, 0, 0, 0, 0, Bangkok), november, PlanDeveloper},
	}
	for _, c := range cases {
		if got := c.st.ForMonth(c.start, c.now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
