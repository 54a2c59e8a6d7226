package rental

import "time"

// AttemptOutcome is one finished attempt of a delivery and what follows
// from it: a success, a failure with the next attempt due at Next, or a
// failure for good (Final).
type AttemptOutcome struct {
	Attempt
	// Next is when the following attempt is due; nil when there is none.
	Next *time.Time
	// Final marks a failure with no attempt left: the delivery fails.
	Final bool
}

// RetryAt is when the attempt after attempt n (1-based) of a run of at most
// max attempts is due, counted from from (when attempt n started) with the
// jitter share of NextAttempt; false when n was the run's last. A run
// stops at max or at the delivery's MaxAttempts, whichever comes first.
func RetryAt(n, max int, from time.Time, jitter float64) (time.Time, bool) {
	if n >= max {
		return time.Time{}, false
	}
	return NextAttempt(n, from, jitter)
}

// Conclude is the outcome of attempt a, the n-th of a run of at most max
// attempts that started at from: a success needs nothing more; a failure
// is tried again at RetryAt, or is final when no attempt is left.
func (a Attempt) Conclude(n, max int, from time.Time, jitter float64) AttemptOutcome {
	o := AttemptOutcome{Attempt: a}
	if a.Succeeded() {
		return o
	}
	if next, ok := RetryAt(n, max, from, jitter); ok {
		o.Next = &next
	} else {
		o.Final = true
	}
	return o
}

// DeliveryStep is what one recorded attempt does to its delivery.
type DeliveryStep struct {
	// Moved is false when the attempt is only logged: it belongs to a
	// generation resent since, or the delivery is no longer pending.
	Moved bool
	// Status is the delivery's status after the attempt.
	Status string
	// NextAttemptAt is when the delivery is tried again; nil unless it
	// stays pending.
	NextAttemptAt *time.Time
}

// Record is what attempt o, made for generation gen, does to the delivery
// as stored (its Status and Generation): a success ends it succeeded, a
// final failure ends it failed, another failure leaves it pending until
// o.Next. An attempt of another generation, or of a delivery no longer
// pending, moves nothing: the delivery was resent or ended meanwhile, and
// the attempt's own job is stale.
func (d *Delivery) Record(gen int, o AttemptOutcome) DeliveryStep {
	if d.Generation != gen || d.Status != DeliveryPending {
		return DeliveryStep{Status: d.Status}
	}
	switch {
	case o.Succeeded():
		return DeliveryStep{Moved: true, Status: DeliverySucceeded}
	case o.Final:
		return DeliveryStep{Moved: true, Status: DeliveryFailed}
	}
	return DeliveryStep{Moved: true, Status: DeliveryPending, NextAttemptAt: o.Next}
}

// EndpointFailingReason is the disabled_reason of an endpoint disabled
// because every delivery to it failed for FailingFor.
const EndpointFailingReason = "Every delivery failed for 3 days; fix the receiver, then enable the endpoint again."

// HealthChange is what attempts to one endpoint do to its record of
// failing (the time since which every delivery to it has failed).
type HealthChange struct {
	// Clear drops the record: an attempt succeeded.
	Clear bool
	// Fail starts the record now unless it has started (and, when Clear is
	// set too, starts it again after the success): the last attempt failed.
	Fail bool
}

// EndpointHealth is what an endpoint's attempts, in the order they are
// recorded (true for a success), do to its record of failing, as if they
// were recorded one by one: any success clears the record, and a last
// failure starts it unless it has started.
func EndpointHealth(oks []bool) HealthChange {
	var h HealthChange
	for _, ok := range oks {
		h.Clear = h.Clear || ok
	}
	h.Fail = len(oks) > 0 && !oks[len(oks)-1]
	return h
}

// FailedTooLong reports whether an enabled endpoint whose deliveries have
// all failed since since is disabled at now: it has failed for FailingFor.
// A zero since (no record of failing) is never too long.
func FailedTooLong(since, now time.Time) bool {
	return !since.IsZero() && !since.After(now.Add(-FailingFor))
}

// DisablesFailing reports whether an endpoint in status, whose deliveries
// have all failed since since, is disabled at now: an enabled one that
// FailedTooLong (a disabled one stays as it is, with its own reason).
func DisablesFailing(status string, since, now time.Time) bool {
	return status == EndpointEnabled && FailedTooLong(since, now)
}
