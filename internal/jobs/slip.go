package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/rental"
	"rentapi/internal/slip"
	"rentapi/internal/store"
)

// slipWorker makes one verification attempt of a slip per run. While the
// provider fails, the attempt returns an error and River runs it again on
// rental.VerifyRetries; after the last, the slip is rejected with
// provider_unavailable. Test mode never calls the provider: the sandbox's
// simulated provider answers (rental.SandboxSlip).
type slipWorker struct {
	river.WorkerDefaults[store.SlipArgs]
	db       *store.DB
	provider *slip.Client
	log      *slog.Logger
}

// Timeout leaves room for the provider's own and the bookkeeping.
func (w *slipWorker) Timeout(*river.Job[store.SlipArgs]) time.Duration {
	return slip.Timeout + 15*time.Second
}

// NextRetry follows the verification schedule from now, on the store's
// clock (which tests move).
func (w *slipWorker) NextRetry(job *river.Job[store.SlipArgs]) time.Time {
	wait, ok := rental.NextVerify(job.Attempt)
	if !ok {
		wait = 0
	}
	return w.db.Now().Add(wait)
}

func (w *slipWorker) Work(ctx context.Context, job *river.Job[store.SlipArgs]) error {
	final := job.Attempt >= rental.MaxVerifyAttempts || job.Attempt >= job.MaxAttempts
	return w.attempt(ctx, job.Args.SlipID, final, "attempt", job.Attempt)
}

// attempt makes one verification attempt of the slip, which is the last
// when final: a provider that fails then rejects it with
// provider_unavailable; before, the attempt returns an error to be retried.
// A slip no longer pending is left as it is. logAttrs go with its log lines.
func (w *slipWorker) attempt(ctx context.Context, id string, final bool, logAttrs ...any) error {
	sw, err := w.db.Read().SlipWork(ctx, id)
	if rental.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if sw.Status != rental.SlipPending {
		return nil
	}
	v, why := w.verify(ctx, sw)
	if why != "" && !final {
		// The slip's ID and the provider's reason only: never its image
		// or QR text.
		w.log.WarnContext(ctx, "slip verification failed", append([]any{"slip_id", sw.ID, "reason", why}, logAttrs...)...)
		return fmt.Errorf("slip %s: %s", sw.ID, why)
	}
	if why != "" {
		v = store.SlipVerdict{Reason: rental.RejectUnavailable}
	}
	// The provider answered: record it even if the job is being stopped.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), store.WriteWait+5*time.Second)
	defer cancel()
	s, err := w.db.SettleSlip(rec, sw.ID, v)
	if err != nil {
		return err
	}
	w.log.InfoContext(ctx, "slip settled", append([]any{"slip_id", s.ID, "status", s.Status}, logAttrs...)...)
	return nil
}

// verify is one attempt: the verdict, or why the provider failed ("" when
// it answered).
func (w *slipWorker) verify(ctx context.Context, sw *store.SlipWork) (store.SlipVerdict, string) {
	if sw.Sandbox {
		reason, fail := rental.SandboxSlip(sw.QRPayload)
		if fail {
			return store.SlipVerdict{}, "test mode: test_provider_unavailable fails every attempt"
		}
		return store.SlipVerdict{Reason: reason, Simulated: reason == ""}, ""
	}
	if sw.QRPayload == "" && sw.Image == nil {
		// Deleted by the retention sweep: nothing left to verify.
		return store.SlipVerdict{Reason: rental.RejectUnreadable}, ""
	}
	if w.provider == nil {
		return store.SlipVerdict{}, "no slip-verification provider is configured"
	}
	res, err := w.provider.Verify(ctx, slip.Request{QRPayload: sw.QRPayload, Image: sw.Image})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return store.SlipVerdict{}, "stopped: " + err.Error()
		}
		return store.SlipVerdict{}, err.Error()
	}
	switch res.Outcome {
	case slip.Read:
		return store.SlipVerdict{Reading: &res.Reading}, ""
	case slip.Unreadable:
		return store.SlipVerdict{Reason: rental.RejectUnreadable}, ""
	case slip.Duplicate:
		return store.SlipVerdict{Reason: rental.RejectDuplicate}, ""
	}
	return store.SlipVerdict{}, res.Reason
}
