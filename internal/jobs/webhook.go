package jobs

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/metric"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

// deliveryWorker makes one attempt of a delivery per run. A failed attempt
// returns an error, and River runs the job again when NextRetry says, up to
// the delivery's 8 attempts; the attempt itself is recorded in our own
// tables first, so the log and the next attempt's time agree with River.
// Every attempt gets a log line at info, failed or not: a receiver that
// fails is the developer's to fix, not a fault of the service.
type deliveryWorker struct {
	river.WorkerDefaults[store.DeliveryArgs]
	db      *store.DB
	sender  *webhook.Sender
	secret  *secret.Secret
	log     *slog.Logger
	metrics *metric.Set
	// works loads the deliveries, many in one query.
	works *batch[string, *store.DeliveryWork]
	// attempts records the attempts, many in one transaction.
	attempts *batch[store.AttemptRecord, bool]
}

// Timeout leaves room for the receiver's 10 seconds and the bookkeeping.
func (w *deliveryWorker) Timeout(*river.Job[store.DeliveryArgs]) time.Duration {
	return 30 * time.Second
}

// NextRetry follows the spec's schedule from the failed attempt's time. A
// run that ended without logging its attempt (the process died, or the
// database failed) is retried at once: the receiver may not have been
// called at all, and a crash should cost no delivery a minute.
func (w *deliveryWorker) NextRetry(job *river.Job[store.DeliveryArgs]) time.Time {
	next, ok := w.next(job)
	if !ok {
		return w.db.Now()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := w.db.Read().DeliveryWork(ctx, job.Args.DeliveryID)
	if err == nil && (d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(next.Truncate(time.Millisecond))) {
		return w.db.Now()
	}
	return next
}

// next is when the attempt after the job's current one is due, counted from
// the time River started the current one.
func (w *deliveryWorker) next(job *river.Job[store.DeliveryArgs]) (time.Time, bool) {
	return rental.RetryAt(job.Attempt, job.MaxAttempts, w.from(job), jitter(job.Args, job.Attempt))
}

// from is when River started the job's current attempt: the retry
// schedule counts from it.
func (w *deliveryWorker) from(job *river.Job[store.DeliveryArgs]) time.Time {
	if job.AttemptedAt != nil {
		return *job.AttemptedAt
	}
	return w.db.Now()
}

// jitter is a fixed share in [0,1) for a delivery's attempt, so that the time
// logged for the next attempt is the time River schedules it.
func jitter(a store.DeliveryArgs, attempt int) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", a.DeliveryID, a.Generation, attempt)
	return float64(h.Sum64()%1000) / 1000
}

// Work runs one attempt. An error other than the attempt's own failure (the
// database, a secret that does not open) is logged here: River's warning
// for it is dropped with the failed attempts' (see RiverLog).
func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[store.DeliveryArgs]) error {
	err := w.attempt(ctx, job)
	var failed *failedAttempt
	if err != nil && !errors.As(err, &failed) {
		if job.Attempt >= job.MaxAttempts {
			w.fail(job.Args, err)
			return err
		}
		w.log.WarnContext(ctx, "webhook delivery run failed; River retries it", "delivery_id", job.Args.DeliveryID,
			"job_id", job.ID, "error", err.Error())
	}
	return err
}

// failedAttempt is the error of an attempt the receiver did not take.
type failedAttempt struct{ msg string }

func (e *failedAttempt) Error() string { return e.msg }

func (w *deliveryWorker) attempt(ctx context.Context, job *river.Job[store.DeliveryArgs]) error {
	d, err := w.works.do(job.Args.DeliveryID)
	if err != nil {
		return err
	}
	if d == nil {
		return nil // the endpoint was deleted, or the delivery purged
	}
	if err := ctx.Err(); err != nil {
		return err // stopped while loading: no attempt made, none spent
	}
	if d.Generation != job.Args.Generation || d.Status != rental.DeliveryPending {
		return nil // resent since, or already done
	}
	if d.EndpointStatus != rental.EndpointEnabled {
		return w.db.InTx(ctx, func(tx *store.Tx) error { return tx.AbandonDelivery(ctx, d.ID, d.Generation) })
	}
	secrets, err := w.secrets(d)
	if err != nil {
		return err
	}
	now := w.db.Now()
	res := w.sender.Send(ctx, webhook.Delivery{
		URL: d.URL, Body: []byte(d.Body), EventID: d.EventID, EventType: d.EventType, DeliveryID: d.ID,
		Attempt: d.AttemptCount + 1, Secrets: secrets, Now: now,
	})
	a := rental.Attempt{AttemptedAt: rental.Time{Time: now}, DurationMS: res.Duration.Milliseconds(), ResponseBody: res.Body}
	if res.StatusCode != 0 {
		a.StatusCode = &res.StatusCode
	}
	if res.Err != "" {
		a.Error = &res.Err
	}
	o := a.Conclude(job.Attempt, job.MaxAttempts, w.from(job), jitter(job.Args, job.Attempt))
	w.logAttempt(ctx, d, res, o)
	// The attempt happened: record it even if the job is being stopped.
	moved, err := w.attempts.do(store.AttemptRecord{Work: d, Outcome: o})
	if err != nil || !moved || res.OK() || o.Final {
		return err
	}
	why := res.Err
	if why == "" {
		why = fmt.Sprintf("status %d", res.StatusCode)
	}
	return &failedAttempt{fmt.Sprintf("webhook delivery %s attempt %d failed: %s", d.ID, d.AttemptCount+1, why)}
}

// fail ends a delivery whose job River will not run again (its last run
// failed before its attempt was recorded), so that no delivery stays
// pending with no job left to send it: it is failed, and a resend starts
// it over.
func (w *deliveryWorker) fail(a store.DeliveryArgs, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), store.WriteWait+5*time.Second)
	defer cancel()
	err := w.db.InTx(ctx, func(tx *store.Tx) error { return tx.AbandonDelivery(ctx, a.DeliveryID, a.Generation) })
	attrs := []any{"delivery_id", a.DeliveryID, "cause", cause.Error()}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	w.log.WarnContext(ctx, "webhook delivery failed: its job's last run could not record an attempt", attrs...)
}

// logAttempt writes the attempt's log line and counts it. The URL is left
// out: a developer may have put a token of their own in it.
func (w *deliveryWorker) logAttempt(ctx context.Context, d *store.DeliveryWork, res webhook.Result, o store.AttemptOutcome) {
	w.metrics.WebhookAttempt(res.OK())
	result := "success"
	if !res.OK() {
		result = "failure"
	}
	attrs := []any{"endpoint_id", d.EndpointID, "delivery_id", d.ID, "event_id", d.EventID, "attempt", d.AttemptCount + 1,
		"result", result, "status", res.StatusCode, "duration_ms", res.Duration.Milliseconds()}
	if res.Err != "" {
		attrs = append(attrs, "error", res.Err)
	}
	if o.Next != nil {
		attrs = append(attrs, "next_attempt_at", o.Next.UTC().Format(time.RFC3339))
	}
	if o.Final {
		attrs = append(attrs, "final", true)
	}
	w.log.InfoContext(ctx, "webhook attempt", attrs...)
}

// secrets opens the endpoint's signing secrets: the current one, and the
// previous one while a rotation's overlap lasts.
func (w *deliveryWorker) secrets(d *store.DeliveryWork) ([]string, error) {
	cur, err := w.secret.Open(d.Secret, []byte(d.EndpointID))
	if err != nil {
		return nil, fmt.Errorf("jobs: signing secret of %s: %w", d.EndpointID, err)
	}
	out := []string{string(cur)}
	if d.OldSecret != "" && w.db.Now().Before(d.OldSecretUntil) {
		old, err := w.secret.Open(d.OldSecret, []byte(d.EndpointID))
		if err != nil {
			return nil, fmt.Errorf("jobs: old signing secret of %s: %w", d.EndpointID, err)
		}
		out = append(out, string(old))
	}
	return out, nil
}
