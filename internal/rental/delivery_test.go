package rental

import (
	"testing"
	"time"
)

// An attempt that failed is tried again on the schedule, counted from when
// it started, until the run's or the delivery's attempts are used up; a
// success needs nothing more.
func TestAttemptConclude(t *testing.T) {
	from := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	status := func(s int) *int { return &s }
	cases := []struct {
		name   string
		status *int
		n, max int
		jitter float64
		next   time.Duration // 0: none
		final  bool
	}{
		{"200 on the first", status(200), 1, MaxAttempts, 0, 0, false},
		{"204 on the last", status(204), MaxAttempts, MaxAttempts, 0, 0, false},
		{"500 on the first: a minute", status(500), 1, MaxAttempts, 0, time.Minute, false},
		{"no answer on the first, full jitter share", nil, 1, MaxAttempts, 0.5, time.Minute + 3*time.Second, false},
		{"301 on the third: half an hour", status(301), 3, MaxAttempts, 0, 30 * time.Minute, false},
		{"404 on the seventh: a day", status(404), 7, MaxAttempts, 0, 24 * time.Hour, false},
		{"410 on the eighth: final", status(410), 8, MaxAttempts, 0, 0, true},
		{"a run of three stops at its third", status(503), 3, 3, 0, 0, true},
		{"a run longer than the delivery stops at its eighth", status(503), 8, 20, 0, 0, true},
	}
	for _, c := range cases {
		o := Attempt{StatusCode: c.status}.Conclude(c.n, c.max, from, c.jitter)
		switch {
		case o.Final != c.final:
			t.Errorf("%s: final %v", c.name, o.Final)
		case c.next == 0 && o.Next != nil:
			t.Errorf("%s: next at %v, want none", c.name, o.Next)
		case c.next != 0 && (o.Next == nil || !o.Next.Equal(from.Add(c.next))):
			t.Errorf("%s: next at %v, want %v", c.name, o.Next, from.Add(c.next))
		}
		if next, ok := RetryAt(c.n, c.max, from, c.jitter); !o.Succeeded() && (ok == c.final || (ok && !next.Equal(*o.Next))) {
			t.Errorf("%s: RetryAt %v %v, unlike the outcome", c.name, next, ok)
		}
	}
}

// A recorded attempt moves a pending delivery of its own generation only:
// succeeded, failed for good, or pending until the next attempt.
func TestDeliveryRecord(t *testing.T) {
	next := time.Date(2026, 11, 25, 3, 1, 0, 0, time.UTC)
	ok, bad := 200, 500
	success := AttemptOutcome{Attempt: Attempt{StatusCode: &ok}}
	retry := AttemptOutcome{Attempt: Attempt{StatusCode: &bad}, Next: &next}
	final := AttemptOutcome{Attempt: Attempt{StatusCode: &bad}, Final: true}
	cases := []struct {
		name   string
		status string
		gen    int
		o      AttemptOutcome
		want   DeliveryStep
	}{
		{"success", DeliveryPending, 1, success, DeliveryStep{Moved: true, Status: DeliverySucceeded}},
		{"failure to retry", DeliveryPending, 1, retry, DeliveryStep{Moved: true, Status: DeliveryPending, NextAttemptAt: &next}},
		{"final failure", DeliveryPending, 1, final, DeliveryStep{Moved: true, Status: DeliveryFailed}},
		{"resent since", DeliveryPending, 2, success, DeliveryStep{Status: DeliveryPending}},
		{"already succeeded", DeliverySucceeded, 1, final, DeliveryStep{Status: DeliverySucceeded}},
		{"already failed", DeliveryFailed, 1, success, DeliveryStep{Status: DeliveryFailed}},
	}
	for _, c := range cases {
		d := Delivery{Status: c.status, Generation: c.gen}
		got := d.Record(1, c.o)
		if got.Moved != c.want.Moved || got.Status != c.want.Status || got.NextAttemptAt != c.want.NextAttemptAt {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// Attempts recorded together count as if recorded one by one: any success
// clears an endpoint's record of failing, a last failure starts it.
func TestEndpointHealth(t *testing.T) {
	cases := []struct {
		oks  []bool
		want HealthChange
	}{
		{nil, HealthChange{}},
		{[]bool{true}, HealthChange{Clear: true}},
		{[]bool{false}, HealthChange{Fail: true}},
		{[]bool{false, true}, HealthChange{Clear: true}},
		{[]bool{true, false}, HealthChange{Clear: true, Fail: true}},
		{[]bool{false, false, false}, HealthChange{Fail: true}},
	}
	for _, c := range cases {
		if got := EndpointHealth(c.oks); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.oks, got, c.want)
		}
	}
}

// An endpoint is disabled once every delivery has failed for three days,
// to the millisecond.
func TestFailedTooLong(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name  string
		since time.Time
		want  bool
	}{
		{"never failed", time.Time{}, false},
		{"failing since now", now, false},
		{"a millisecond short of three days", now.Add(-FailingFor + time.Millisecond), false},
		{"three days to the millisecond", now.Add(-FailingFor), true},
		{"a week", now.Add(-7 * 24 * time.Hour), true},
	}
	for _, c := range cases {
		if got := FailedTooLong(c.since, now); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// Only an enabled endpoint is disabled for failing too long; one disabled
// already keeps its status and reason.
func TestDisablesFailing(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	long, short := now.Add(-FailingFor), now.Add(-FailingFor+time.Millisecond)
	for _, c := range []struct {
		status string
		since  time.Time
		want   bool
	}{
		{EndpointEnabled, long, true},
		{EndpointEnabled, short, false},
		{EndpointEnabled, time.Time{}, false},
		{EndpointDisabled, long, false},
		{EndpointDisabled, short, false},
	} {
		if got := DisablesFailing(c.status, c.since, now); got != c.want {
			t.Errorf("%s since %v: %v, want %v", c.status, c.since, got, c.want)
		}
	}
}
