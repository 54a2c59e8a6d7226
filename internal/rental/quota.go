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
	if mode == ModeTest {
		day := DayOf(now)
		return Quota{Mode: mode, From: day, To: day, Limit: SandboxDailyRequests, Stops: true, Reset: NextDayStart(now)}
	}
	limits := plan.Limits()
	first, last := MonthDays(MonthStart(now))
	return Quota{Mode: mode, From: first, To: last, Limit: limits.MonthlyIncluded, Stops: limits.StopsAtIncluded, Reset: NextMonthStart(now)}
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
