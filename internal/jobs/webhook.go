package jobs

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

// deliveryWorker makes one attempt of a delivery per run. A failed attempt
// returns an error, and River runs the job again when NextRetry says, up to
// the delivery's 8 attempts; the attempt itself is recorded in our own
// tables first, so the log and the next attempt's time agree with River.
type deliveryWorker struct {
	river.WorkerDefaults[store.DeliveryArgs]
	db     *store.DB
	sender *webhook.Sender
	secret *secret.Secret
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
	from := w.db.Now()
	if job.AttemptedAt != nil {
		from = *job.AttemptedAt
	}
	if job.Attempt >= job.MaxAttempts {
		return time.Time{}, false
	}
	return rental.NextAttempt(job.Attempt, from, jitter(job.Args, job.Attempt))
}

// jitter is a fixed share in [0,1) for a delivery's attempt, so that the time
// logged for the next attempt is the time River schedules it.
func jitter(a store.DeliveryArgs, attempt int) float64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", a.DeliveryID, a.Generation, attempt)
	return float64(h.Sum64()%1000) / 1000
}

func (w *deliveryWorker) Work(ctx context.Context, job *river.Job[store.DeliveryArgs]) error {
	d, err := w.db.Read().DeliveryWork(ctx, job.Args.DeliveryID)
	if rental.IsNotFound(err) {
		return nil // the endpoint was deleted, or the delivery purged
	}
	if err != nil {
		return err
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
	o := store.AttemptOutcome{Attempt: rental.Attempt{AttemptedAt: rental.Time{Time: now}, DurationMS: res.Duration.Milliseconds(), ResponseBody: res.Body}}
	if res.StatusCode != 0 {
		o.StatusCode = &res.StatusCode
	}
	if res.Err != "" {
		o.Error = &res.Err
	}
	if !res.OK() {
		if next, ok := w.next(job); ok {
			o.Next = &next
		} else {
			o.Final = true
		}
	}
	// The attempt happened: record it even if the job is being stopped.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), store.WriteWait+5*time.Second)
	defer cancel()
	var moved bool
	err = w.db.InTx(rec, func(tx *store.Tx) (err error) {
		moved, err = tx.RecordAttempt(rec, d, o)
		return err
	})
	if err != nil || !moved || res.OK() || o.Final {
		return err
	}
	why := res.Err
	if why == "" {
		why = fmt.Sprintf("status %d", res.StatusCode)
	}
	return fmt.Errorf("webhook delivery %s attempt %d failed: %s", d.ID, d.AttemptCount+1, why)
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
