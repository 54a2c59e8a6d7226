package rental

import "time"

// The calendar every rule counts in: days and months in Thailand, whatever
// the clock of the machine. Due dates, overdue marking, the sandbox's daily
// limit, the monthly quota, plan changes and invoices all turn at midnight
// in Bangkok, so they are read and written here only.

// Bangkok is Thailand's time (UTC+7 all year): due dates, overdue marking
// and quotas follow the landlord's calendar.
var Bangkok = time.FixedZone("ICT", 7*60*60)

// DayOf is t's date in Thailand, as YYYY-MM-DD.
func DayOf(t time.Time) string { return t.In(Bangkok).Format(time.DateOnly) }

// NextDayStart is 00:00 Thailand time on the day after t's: when a daily
// count (the sandbox's requests) starts again.
func NextDayStart(t time.Time) time.Time {
	l := t.In(Bangkok)
	return time.Date(l.Year(), l.Month(), l.Day()+1, 0, 0, 0, 0, Bangkok)
}

// MonthStart is 00:00 Thailand time on the 1st of t's month.
func MonthStart(t time.Time) time.Time {
	l := t.In(Bangkok)
	return time.Date(l.Year(), l.Month(), 1, 0, 0, 0, 0, Bangkok)
}

// NextMonthStart is 00:00 Thailand time on the 1st of the month after t's:
// when the monthly quota restarts and a downgrade takes effect.
func NextMonthStart(t time.Time) time.Time { return MonthStart(t).AddDate(0, 1, 0) }

// MonthOf is t's month in Thailand, as YYYY-MM.
func MonthOf(t time.Time) string { return t.In(Bangkok).Format("2006-01") }

// MonthBefore is the month in Thailand before t's, as YYYY-MM: the month a
// developer's invoice is closed for once t's month has begun.
func MonthBefore(t time.Time) string { return MonthOf(MonthStart(t).Add(-time.Millisecond)) }

// PreviousMonth returns the month before a YYYY-MM month.
func PreviousMonth(month string) string {
	t, _ := time.Parse("2006-01", month)
	return t.AddDate(0, -1, 0).Format("2006-01")
}

// MonthStartOf reads a YYYY-MM month (as ParseMonth checks it) and returns
// its first instant in Thailand.
func MonthStartOf(param, month string) (time.Time, error) {
	if _, err := ParseMonth(param, month); err != nil {
		return time.Time{}, err
	}
	return time.ParseInLocation("2006-01", month, Bangkok)
}

// BegunMonthStart is MonthStartOf for a month that has begun at now: the
// current month or one before it, since a month to come has nothing to
// show yet (400 invalid_parameter).
func BegunMonthStart(param, month string, now time.Time) (time.Time, error) {
	start, err := MonthStartOf(param, month)
	if err != nil {
		return time.Time{}, err
	}
	if start.After(MonthStart(now)) {
		return time.Time{}, Invalid(param, "%s has not begun yet.", month)
	}
	return start, nil
}

// MonthDays are the first and last dates (YYYY-MM-DD) of the month starting
// at start, the range of a month's daily counts.
func MonthDays(start time.Time) (first, last string) {
	return DayOf(start), DayOf(start.AddDate(0, 1, -1))
}

// daysBetween counts the days from one date (YYYY-MM-DD) to another.
func daysBetween(from, to string) int64 {
	a, errA := time.Parse(time.DateOnly, from)
	b, errB := time.Parse(time.DateOnly, to)
	if errA != nil || errB != nil {
		return 0
	}
	return int64(b.Sub(a) / (24 * time.Hour))
}

// AddDays is the date (YYYY-MM-DD) n days after day.
func AddDays(day string, n int) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return t.AddDate(0, 0, n).Format(time.DateOnly)
}
