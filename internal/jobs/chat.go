package jobs

import (
	"context"
	"errors"
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
	again, err := sendOnce(ctx, w.db, w.line, job.Args.NotificationID, job.Attempt >= job.MaxAttempts)
	if err != nil || again == "" {
		return err
	}
	return errors.New(again)
}

// sendOnce makes one attempt of a queued notification and records it: the
// work of one run of its job, and of a sandbox's clock catching up (see
// clock.go). lastRun says no run of the job follows. When the attempt
// failed and the notification waits for its next, again says why (and
// which attempt); it is empty when the notification is done, or was not
// queued, or another run recorded this attempt first.
func sendOnce(ctx context.Context, db *store.DB, line *chat.Client, id string, lastRun bool) (again string, err error) {
	n, err := db.Read().SendWork(ctx, id)
	if rental.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if n.Status != rental.NotificationQueued {
		return "", nil
	}
	res := push(line, n)
	r := store.SendResult{Outcome: rental.ClassifySend(res.Status), Final: n.Attempts+1 >= rental.MaxSendAttempts || lastRun}
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
	err = db.InTx(rec, func(tx *store.Tx) (err error) {
		moved, err = tx.RecordSend(rec, n, r)
		return err
	})
	if err != nil || !moved || r.Outcome != rental.SendRetry || r.Final {
		return "", err
	}
	return fmt.Sprintf("notification %s attempt %d: %s", n.ID, n.Attempts+1, r.Reason), nil
}

// push sends the notification, or in test mode plays LINE: the sandbox's
// unreachable tenant never answers, every other tenant gets it.
func push(line *chat.Client, n *store.SendWork) chat.Result {
	switch {
	case n.Sandbox && n.Unreachable:
		return chat.Result{Status: 503, Err: "test mode: this sandbox tenant's LINE is unreachable"}
	case n.Sandbox:
		return chat.Result{Status: 200}
	case line == nil:
		return chat.Result{Err: "no LINE channel is configured"}
	case n.LineUserID == "":
		return chat.Result{Status: 400, Err: "the tenant has no LINE user linked"}
	}
	return line.Push(n.LineUserID, n.RetryKey, n.Notice)
}
