package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/chat"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// sendWorker makes one attempt of a notification per run. A failed attempt
// that may succeed later returns an error and River runs the job again
// after the notification's retry schedule; every attempt pushes with the
// notification's one retry key, so LINE takes the message once even when a
// crash lost the record of an attempt that got through (LINE's 409 for a
// used key counts as sent). Test mode never calls LINE.
type sendWorker struct {
	river.WorkerDefaults[store.SendArgs]
	db   *store.DB
	line *chat.Client
	// timeout is sendTimeout, or half the rescue horizon when that is
	// shorter (sendTimeoutFor).
	timeout time.Duration
}

// sendTimeout leaves room for LINE's 10 seconds and the bookkeeping.
const sendTimeout = 30 * time.Second

// sendTimeoutFor is the longest a run may take with the given rescue
// horizon: sendTimeout, but no more than half the horizon, as every other
// job (River's JobTimeout). River does not rescue a running job before its
// own timeout has passed, so a longer one would keep a send that died with
// its process waiting past the horizon the operator set.
func sendTimeoutFor(rescueAfter time.Duration) time.Duration {
	return min(sendTimeout, rescueAfter/2)
}

// Timeout is the run's limit (sendTimeoutFor).
func (w *sendWorker) Timeout(*river.Job[store.SendArgs]) time.Duration { return w.timeout }

// NextRetry follows the notification schedule from now, on the store's
// clock (which tests move).
func (w *sendWorker) NextRetry(job *river.Job[store.SendArgs]) time.Time {
	wait, ok := rental.NextSend(job.Attempt)
	if !ok {
		wait = 0
	}
	return w.db.Now().Add(wait)
}

func (w *sendWorker) Work(ctx context.Context, job *river.Job[store.SendArgs]) error {
	n, err := w.db.Read().SendWork(ctx, job.Args.NotificationID)
	if rental.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if n.Status != rental.NotificationQueued {
		return nil
	}
	res := w.push(n)
	r := store.SendResult{Outcome: rental.ClassifySend(res.Status), Final: n.Attempts+1 >= rental.MaxSendAttempts || job.Attempt >= job.MaxAttempts}
	if r.Outcome != rental.SendDone {
		r.Reason = res.Err
		if r.Reason == "" {
			r.Reason = fmt.Sprintf("LINE answered %d", res.Status)
		}
	}
	// The push happened: record it even if the job is being stopped.
	rec, cancel := context.WithTimeout(context.WithoutCancel(ctx), store.WriteWait+5*time.Second)
	defer cancel()
	var moved bool
	err = w.db.InTx(rec, func(tx *store.Tx) (err error) {
		moved, err = tx.RecordSend(rec, n, r)
		return err
	})
	if err != nil || !moved || r.Outcome != rental.SendRetry || r.Final {
		return err
	}
	return fmt.Errorf("notification %s attempt %d: %s", n.ID, n.Attempts+1, r.Reason)
}

// push sends the notification, or in test mode plays LINE: the sandbox's
// unreachable tenant never answers, every other tenant gets it.
func (w *sendWorker) push(n *store.SendWork) chat.Result {
	switch {
	case n.Sandbox && n.Unreachable:
		return chat.Result{Status: 503, Err: "test mode: this sandbox tenant's LINE is unreachable"}
	case n.Sandbox:
		return chat.Result{Status: 200}
	case w.line == nil:
		return chat.Result{Err: "no LINE channel is configured"}
	case n.LineUserID == "":
		return chat.Result{Status: 400, Err: "the tenant has no LINE user linked"}
	}
	return w.line.Push(n.LineUserID, n.RetryKey, n.Notice)
}
