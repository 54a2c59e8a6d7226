package rental

import "time"

// SandboxDailyRequests is the test-mode requests a developer may make per
// day (Thailand time), all applications together.
const SandboxDailyRequests = 20_000

// Quota is a developer's request quota in one mode as it stands at an
// instant: the period its requests are counted over (the Thailand dates
// From to To: the day in test mode, the month in live mode), how many the
// period includes, whether requests past them are refused, and when the
// count starts again.
type Quota struct {
	Mode     Mode
	From, To string
	Limit    int64
	Stops    bool
	Reset    time.Time
}

// QuotaAt is the quota of a developer on plan in mode at now: in test mode
// the sandbox's SandboxDailyRequests a day, refused past them until
// midnight in Thailand; in live mode the plan's included requests a month,
// refused past them on the free plan only (a paid plan's extra requests are
// served and billed), until the 1st.
func QuotaAt(mode Mode, plan DeveloperPlan, now time.Time) Quota {
	return TodayAt(now).Quota(mode, plan)
}

// Today is the calendar of one day in Thailand as a request's quota
// counts it: its date, its month's first and last dates, and when the next
// day and month begin. It is the same for every instant of the day, so a
// server works it out once a day and asks Holds, rather than formatting
// dates at every request.
type Today struct {
	// Start and End bound the day: Start is its 00:00 Thailand time, End
	// the next day's.
	Start, End time.Time
	// Date is the day as YYYY-MM-DD; MonthFirst and MonthLast its month's
	// first and last dates.
	Date, MonthFirst, MonthLast string
	// NextMonth is 00:00 Thailand time on the 1st of the next month.
	NextMonth time.Time
}

// TodayAt is the Today now falls in.
func TodayAt(now time.Time) *Today {
	l := now.In(Bangkok)
	start := time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, Bangkok)
	first, last := MonthDays(MonthStart(now))
	return &Today{Start: start, End: NextDayStart(now), Date: DayOf(now), MonthFirst: first, MonthLast: last, NextMonth: NextMonthStart(now)}
}

// Holds reports whether now falls in the day.
func (t *Today) Holds(now time.Time) bool { return !now.Before(t.Start) && now.Before(t.End) }

// Quota is QuotaAt for any instant of the day.
func (t *Today) Quota(mode Mode, plan DeveloperPlan) Quota {
	if mode == ModeTest {
		return Quota{Mode: mode, From: t.Date, To: t.Date, Limit: SandboxDailyRequests, Stops: true, Reset: t.End}
	}
	limits := plan.Limits()
	return Quota{Mode: mode, From: t.MonthFirst, To: t.MonthLast, Limit: limits.MonthlyIncluded, Stops: limits.StopsAtIncluded, Reset: t.NextMonth}
}

// Remaining is what the period includes beyond a request made when used
// requests were counted before it.
func (q Quota) Remaining(used int64) int64 { return max(0, q.Limit-used-1) }

// Check is nil when a request may be made at now with used requests
// counted in the period, else 429 (sandbox_limit in test mode,
// monthly_quota_exceeded in live mode) to retry once the count restarts.
func (q Quota) Check(used int64, now time.Time) error {
	if !q.Stops || used < q.Limit {
		return nil
	}
	var e *Error
	if q.Mode == ModeTest {
		e = Errorf(KindRateLimited, "sandbox_limit", "The sandbox allows %d requests per day; the count restarts at midnight Thailand time.", q.Limit)
	} else {
		e = Errorf(KindRateLimited, "monthly_quota_exceeded",
			"The free plan's %d requests for this month are used; the quota restarts on the 1st (Thailand time).", q.Limit)
	}
	e.RetryAfter = int(q.Reset.Sub(now).Seconds()) + 1
	return e
}
