package rental

import "time"

// MaxClockDays bounds how far a sandbox's clock may run ahead of real time,
// and how many days one advance may move it: far enough to walk a year of
// bills, near enough that no timestamp of a sandbox is absurd.
const MaxClockDays = 400

// ClockAdvance is what a developer asks of a sandbox's clock: to a time
// (To), or on by a number of days (Days); exactly one of the two.
type ClockAdvance struct {
	To   Optional[Time]
	Days Optional[int64]
}

// AdvanceClock is the rule of the sandbox's clock: given the clock's time
// now and real time, it returns the clock's new offset from real time, or
// why the advance is refused. A clock moves forward only (409
// invalid_state), by 1 to MaxClockDays days or to a time later than its
// own and at most MaxClockDays days past real time (400 naming the field):
// a sandbox's data never goes back in time, so what happened in it stays
// in the order it happened.
func AdvanceClock(a ClockAdvance, now, real time.Time) (time.Duration, error) {
	limit := real.Add(MaxClockDays * 24 * time.Hour)
	switch {
	case a.To.Set && a.Days.Set:
		return 0, Invalid("days", "Give either to or days, not both.")
	case a.Days.Set:
		if a.Days.Null || a.Days.Value < 1 || a.Days.Value > MaxClockDays {
			return 0, Invalid("days", "days must be a whole number from 1 to %d.", MaxClockDays)
		}
		to := now.Add(time.Duration(a.Days.Value) * 24 * time.Hour)
		if to.After(limit) {
			return 0, Invalid("days", "The clock may run at most %d days past real time; it is at %s.", MaxClockDays, now.UTC().Format(time.RFC3339))
		}
		return to.Sub(real), nil
	case a.To.Set && !a.To.Null:
		to := a.To.Value.Time
		if to.After(limit) {
			return 0, Invalid("to", "to may be at most %d days past real time (%s).", MaxClockDays, limit.UTC().Format(time.RFC3339))
		}
		if !to.After(now) {
			return 0, Conflict("invalid_state", "The sandbox's clock only moves forward: it is at %s already.", now.UTC().Format(time.RFC3339))
		}
		return to.Sub(real), nil
	case a.To.Set:
		return 0, Invalid("to", "to must be an ISO 8601 timestamp such as 2026-11-01T09:00:00Z.")
	}
	return 0, Missing("to")
}

// TestClock is the test_clock object: a sandbox's time, and real time
// beside it, so a developer sees how far ahead the sandbox runs.
type TestClock struct {
	Object  string `json:"object"`
	Now     Time   `json:"now"`
	RealNow Time   `json:"real_now"`
}

// NewTestClock shows a clock offset from real time.
func NewTestClock(offset time.Duration, real time.Time) TestClock {
	return TestClock{Object: "test_clock", Now: Time{Time: real.Add(offset).UTC()}, RealNow: Time{Time: real.UTC()}}
}

// SendsDue is how many attempts of a queued notification fall due by to,
// on its retry schedule (NextSend), when it has had attempts so far, the
// last at last (its creation, for none): what a sandbox's clock moved to
// to catches up on. Attempts made while catching up carry the clock's
// time, not the schedule's, so the schedule is counted from last.
func SendsDue(attempts int, last, to time.Time) int {
	n, at := 0, last
	for a := attempts; a < MaxSendAttempts; a++ {
		if a > 0 {
			wait, ok := NextSend(a)
			if !ok {
				break
			}
			at = at.Add(wait)
		}
		if at.After(to) {
			break
		}
		n++
	}
	return n
}
