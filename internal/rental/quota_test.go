package rental

import (
	"testing"
	"time"
)

// The sandbox stops at 20,000 requests a Thailand day; the free plan stops
// at its 1,000 of the month, the paid plans never do; each refusal waits
// until its count restarts.
func TestQuota(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 16, 59, 30, 0, time.UTC) // 23:59:30 on the 30th in Bangkok
	midnight := time.Date(2026, 12, 1, 0, 0, 0, 0, Bangkok)
	cases := []struct {
		name      string
		mode      Mode
		plan      DeveloperPlan
		used      int64
		from, to  string
		limit     int64
		remaining int64
		code      string
	}{
		{"sandbox, first request", ModeTest, PlanFree, 0, "2026-11-30", "2026-11-30", 20_000, 19_999, ""},
		{"sandbox, last request of the day", ModeTest, PlanPro, 19_999, "2026-11-30", "2026-11-30", 20_000, 0, ""},
		{"sandbox, over", ModeTest, PlanEnterprise, 20_000, "2026-11-30", "2026-11-30", 20_000, 0, "sandbox_limit"},
		{"free, last included", ModeLive, PlanFree, 999, "2026-11-01", "2026-11-30", 1_000, 0, ""},
		{"free, over", ModeLive, PlanFree, 1_000, "2026-11-01", "2026-11-30", 1_000, 0, "monthly_quota_exceeded"},
		{"free, far over", ModeLive, PlanFree, 5_000, "2026-11-01", "2026-11-30", 1_000, 0, "monthly_quota_exceeded"},
		{"developer, within", ModeLive, PlanDeveloper, 10, "2026-11-01", "2026-11-30", 50_000, 49_989, ""},
		{"developer, past the included", ModeLive, PlanDeveloper, 80_000, "2026-11-01", "2026-11-30", 50_000, 0, ""},
		{"enterprise, past the included", ModeLive, PlanEnterprise, 20_000_000, "2026-11-01", "2026-11-30", 10_000_000, 0, ""},
	}
	for _, c := range cases {
		q := QuotaAt(c.mode, c.plan, at)
		if q.From != c.from || q.To != c.to || q.Limit != c.limit || !q.Reset.Equal(midnight) || q.Mode != c.mode {
			t.Errorf("%s: %+v", c.name, q)
		}
		if got := q.Remaining(c.used); got != c.remaining {
			t.Errorf("%s: remaining %d, want %d", c.name, got, c.remaining)
		}
		err := q.Check(c.used, at)
		if code(err) != c.code {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
		}
		if e, ok := AsError(err); ok && (e.Kind != KindRateLimited || e.RetryAfter != 31) {
			t.Errorf("%s: %+v, want 429 after 31 s", c.name, e)
		}
	}
	// Midday: the sandbox waits for tonight, the month for the 1st.
	noon := time.Date(2026, 11, 15, 5, 0, 0, 0, time.UTC)
	for mode, wait := range map[Mode]int{ModeTest: 12*3600 + 1, ModeLive: 15*86400 + 12*3600 + 1} {
		q := QuotaAt(mode, PlanFree, noon)
		if e, _ := AsError(q.Check(q.Limit, noon)); e == nil || e.RetryAfter != wait {
			t.Errorf("%s: %+v, want a wait of %d s", mode, e, wait)
		}
	}
}

// A Today holds from the day's midnight in Thailand to the next, and
// answers every instant of it as the day's first instant would.
func TestToday(t *testing.T) {
	t.Parallel()
	first := time.Date(2026, 11, 30, 0, 0, 0, 0, Bangkok)
	today := TodayAt(first.Add(13 * time.Hour))
	if !today.Start.Equal(first) || !today.End.Equal(first.AddDate(0, 0, 1)) || today.Date != "2026-11-30" ||
		today.MonthFirst != "2026-11-01" || today.MonthLast != "2026-11-30" || !today.NextMonth.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, Bangkok)) {
		t.Fatalf("%+v", today)
	}
	for _, at := range []time.Time{first, first.Add(time.Nanosecond), first.Add(24*time.Hour - time.Nanosecond)} {
		if !today.Holds(at) {
			t.Errorf("%v is not in %+v", at, today)
		}
		for _, mode := range []Mode{ModeTest, ModeLive} {
			if got, want := today.Quota(mode, PlanFree), QuotaAt(mode, PlanFree, at); got != want {
				t.Errorf("%v, %s: %+v, want %+v", at, mode, got, want)
			}
		}
	}
	for _, at := range []time.Time{first.Add(-time.Nanosecond), first.Add(24 * time.Hour)} {
		if today.Holds(at) {
			t.Errorf("%v is in %+v", at, today)
		}
	}
}
