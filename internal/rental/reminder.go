package rental

import (
	"slices"
	"time"
)

// Scheduled reminders: a property's schedule says on which days before and
// after a bill's due date its tenant is reminded, at ReminderHour Thailand
// time; these rules decide which bills a day's reminders are for and which
// days a sweep or a sandbox clock's advance sends.

// Bounds of a reminder schedule: a reminder up to 15 days before the due
// date (0 is the due date itself) and from 1 to 60 days after it, at most 5
// of each, which already is more than any landlord asked for (RentChill's
// schedule is T−1, +3, +7).
const (
	MaxReminderDays  = 5
	MaxDaysBeforeDue = 15
	MaxDaysAfterDue  = 60
	minDaysAfterDue  = 1
)

// ReminderHour is the hour (Thailand time) of the day's reminders: in the
// morning, not at midnight when bills turn overdue.
const ReminderHour = 9

// WarningShortNotice is the warning of a bill issued fewer than
// shortNoticeDays before its due date.
const WarningShortNotice = "short_notice"

const shortNoticeDays = 7

// Reminders is a property's reminder schedule, as the API shows it.
type Reminders struct {
	BeforeDueDays []int64 `json:"before_due_days"`
	AfterDueDays  []int64 `json:"after_due_days"`
}

// ReminderChange is a reminders object of a property create or update
// body: it replaces the whole schedule, and a list left out is empty.
type ReminderChange struct {
	BeforeDueDays Optional[[]int64]
	AfterDueDays  Optional[[]int64]
}

// NewReminders checks a schedule: each list at most MaxReminderDays days,
// each day once, before the due date 0 to MaxDaysBeforeDue, after it 1 to
// MaxDaysAfterDue (400 naming the list). A day given twice is refused
// rather than quietly dropped, so that a schedule reads back as it was
// sent.
func NewReminders(c ReminderChange) (*Reminders, error) {
	before, err := reminderDays("reminders.before_due_days", c.BeforeDueDays, 0, MaxDaysBeforeDue)
	if err != nil {
		return nil, err
	}
	after, err := reminderDays("reminders.after_due_days", c.AfterDueDays, minDaysAfterDue, MaxDaysAfterDue)
	if err != nil {
		return nil, err
	}
	return &Reminders{BeforeDueDays: before, AfterDueDays: after}, nil
}

func reminderDays(param string, v Optional[[]int64], lo, hi int64) ([]int64, error) {
	switch {
	case !v.Set:
		return []int64{}, nil
	case v.Null:
		return nil, Invalid(param, "%s must be a list of days (an empty list for none).", param)
	case len(v.Value) > MaxReminderDays:
		return nil, Invalid(param, "%s takes at most %d days; it has %d.", param, MaxReminderDays, len(v.Value))
	}
	for i, d := range v.Value {
		if d < lo || d > hi {
			return nil, Invalid(param, "Each day of %s must be between %d and %d; %d is not.", param, lo, hi, d)
		}
		if slices.Contains(v.Value[:i], d) {
			return nil, Invalid(param, "%s lists day %d twice; give each day once.", param, d)
		}
	}
	return slices.Clone(v.Value), nil
}

// ReminderTime is ReminderHour in Thailand on day (YYYY-MM-DD): when that
// day's reminders are due.
func ReminderTime(day string) time.Time {
	t, _ := time.ParseInLocation(time.DateOnly, day, Bangkok)
	return t.Add(ReminderHour * time.Hour)
}

// RemindersDue is the day whose reminders a landlord's sweep queues at now,
// when the last day it queued was last (empty for never): today, once its
// ReminderHour has passed and today's are not queued yet. A day the service
// missed altogether is not made up the next day: a reminder for yesterday
// is stale, and tomorrow's schedule reminds again if still unpaid.
func RemindersDue(last string, now time.Time) (day string, ok bool) {
	day = DayOf(now)
	if now.Before(ReminderTime(day)) || last >= day {
		return "", false
	}
	return day, true
}

// ReminderDays are the days whose ReminderHour falls in (from, to], in
// order: what a sandbox's clock moved from from to to catches up on, day by
// day.
func ReminderDays(from, to time.Time) []string {
	var days []string
	for day := DayOf(from); ; day = AddDays(day, 1) {
		at := ReminderTime(day)
		if at.After(to) {
			return days
		}
		if at.After(from) {
			days = append(days, day)
		}
	}
}

// DueDates are the due dates of the bills that get a reminder on day under
// the schedule: day plus each day before, day minus each day after. The
// store narrows its query with them; RemindsOn is the rule.
func (r *Reminders) DueDates(day string) []string {
	if r == nil {
		return nil
	}
	t, _ := time.Parse(time.DateOnly, day)
	var out []string
	for _, d := range r.BeforeDueDays {
		out = append(out, t.AddDate(0, 0, int(d)).Format(time.DateOnly))
	}
	for _, d := range r.AfterDueDays {
		out = append(out, t.AddDate(0, 0, -int(d)).Format(time.DateOnly))
	}
	return out
}

// RemindsOn is the rule of scheduled reminders: on day, a bill gets a
// payment_reminder when its property has a schedule, it is issued or
// overdue with something left to pay (Payable), and its due date is one of
// the schedule's days ahead (0 for the due date) or past.
func RemindsOn(r *Reminders, b *Bill, day string) bool {
	if r == nil || !b.Payable() {
		return false
	}
	ahead := daysBetween(day, b.DueDate)
	if ahead >= 0 {
		return slices.Contains(r.BeforeDueDays, ahead)
	}
	return slices.Contains(r.AfterDueDays, -ahead)
}

// BillWarnings are what a bill's warnings say: short_notice for a bill
// issued fewer than 7 days (Thailand dates) before its due date, as Thai
// residential leasing rules ask for invoices at least 7 days ahead; none
// for a draft.
func BillWarnings(issuedAt *Time, dueDate string) []string {
	if issuedAt == nil || daysBetween(DayOf(issuedAt.Time), dueDate) >= shortNoticeDays {
		return []string{}
	}
	return []string{WarningShortNotice}
}
