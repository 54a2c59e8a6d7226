package rental

import (
	"testing"
	"time"
)

// Days and months turn at midnight in Bangkok, seven hours before UTC's:
// 17:00 UTC on the last day of a month is already the 1st of the next.
func TestCalendar(t *testing.T) {
	t.Parallel()
	utc := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	bkk := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, Bangkok) }
	cases := []struct {
		name                string
		at                  time.Time
		day, month, before  string
		nextDay, start, end time.Time
		first, last         string
	}{
		{"mid-month", utc(2026, 11, 22, 3, 0), "2026-11-22", "2026-11", "2026-10",
			bkk(2026, 11, 23), bkk(2026, 11, 1), bkk(2026, 12, 1), "2026-11-01", "2026-11-30"},
		{"a minute before midnight in Bangkok", utc(2026, 11, 30, 16, 59), "2026-11-30", "2026-11", "2026-10",
			bkk(2026, 12, 1), bkk(2026, 11, 1), bkk(2026, 12, 1), "2026-11-01", "2026-11-30"},
		{"midnight in Bangkok, still the 30th in UTC", utc(2026, 11, 30, 17, 0), "2026-12-01", "2026-12", "2026-11",
			bkk(2026, 12, 2), bkk(2026, 12, 1), bkk(2027, 1, 1), "2026-12-01", "2026-12-31"},
		{"new year", utc(2026, 12, 31, 17, 30), "2027-01-01", "2027-01", "2026-12",
			bkk(2027, 1, 2), bkk(2027, 1, 1), bkk(2027, 2, 1), "2027-01-01", "2027-01-31"},
		{"leap February", utc(2028, 2, 10, 0, 0), "2028-02-10", "2028-02", "2028-01",
			bkk(2028, 2, 11), bkk(2028, 2, 1), bkk(2028, 3, 1), "2028-02-01", "2028-02-29"},
		{"last day of February", utc(2027, 2, 28, 12, 0), "2027-02-28", "2027-02", "2027-01",
			bkk(2027, 3, 1), bkk(2027, 2, 1), bkk(2027, 3, 1), "2027-02-01", "2027-02-28"},
	}
	for _, c := range cases {
		if got := DayOf(c.at); got != c.day {
			t.Errorf("%s: DayOf %s, want %s", c.name, got, c.day)
		}
		if got := MonthOf(c.at); got != c.month {
			t.Errorf("%s: MonthOf %s, want %s", c.name, got, c.month)
		}
		if got := MonthBefore(c.at); got != c.before {
			t.Errorf("%s: MonthBefore %s, want %s", c.name, got, c.before)
		}
		if got := PreviousMonth(c.month); got != c.before {
			t.Errorf("%s: PreviousMonth %s, want %s", c.name, got, c.before)
		}
		if got := NextDayStart(c.at); !got.Equal(c.nextDay) {
			t.Errorf("%s: NextDayStart %v, want %v", c.name, got, c.nextDay)
		}
		if got := MonthStart(c.at); !got.Equal(c.start) {
			t.Errorf("%s: MonthStart %v, want %v", c.name, got, c.start)
		}
		if got := NextMonthStart(c.at); !got.Equal(c.end) {
			t.Errorf("%s: NextMonthStart %v, want %v", c.name, got, c.end)
		}
		if first, last := MonthDays(c.start); first != c.first || last != c.last {
			t.Errorf("%s: MonthDays %s..%s, want %s..%s", c.name, first, last, c.first, c.last)
		}
		if got, err := MonthStartOf("month", c.month); err != nil || !got.Equal(c.start) {
			t.Errorf("%s: MonthStartOf %v, %v", c.name, got, err)
		}
	}
	for _, bad := range []string{"2026-13", "2026-1", "1999-12", "26-11", ""} {
		if _, err := MonthStartOf("month", bad); code(err) != "invalid_parameter" {
			t.Errorf("MonthStartOf(%q): %v", bad, err)
		}
	}
}
