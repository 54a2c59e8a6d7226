package jobs

import (
	"context"
	"sync"
	"time"

	"rentapi/internal/store"
)

// attemptLog records the delivery workers' finished attempts in batches: a
// worker hands its attempt over and waits until the transaction holding it
// has committed, so an attempt is still recorded before its job returns
// (and River completes it or schedules its retry, which NextRetry checks
// against the log). Whatever attempts arrive while one batch is being
// written go together in the next, so a lone attempt waits for no timer
// and a busy queue writes a few statements for many attempts instead of a
// transaction each.
type attemptLog struct {
	db *store.DB

	mu sync.Mutex
	// queue is the attempts waiting for the next batch.
	queue []*loggedAttempt
	// writing is set while a goroutine is writing batches; it writes until
	// the queue is empty, then ends.
	writing bool
}

// loggedAttempt is one attempt waiting to be recorded, and then the result.
type loggedAttempt struct {
	rec   store.AttemptRecord
	done  chan struct{}
	moved bool
	err   error
}

// recordWait bounds the writing of one batch: as long as one attempt's own
// transaction could take, waiting for the write connection included.
const recordWait = store.WriteWait + 5*time.Second

// record records the attempt and reports whether its delivery moved (see
// store.Tx.RecordAttempts). It returns once the attempt is committed or
// has failed to be; the write is not cut short with ctx, since the attempt
// happened whether or not the job is being stopped.
func (l *attemptLog) record(d *store.DeliveryWork, o store.AttemptOutcome) (bool, error) {
	a := &loggedAttempt{rec: store.AttemptRecord{Work: d, Outcome: o}, done: make(chan struct{})}
	l.mu.Lock()
	l.queue = append(l.queue, a)
	if !l.writing {
		l.writing = true
		go l.write()
	}
	l.mu.Unlock()
	<-a.done
	return a.moved, a.err
}

// write writes batches until none is waiting.
func (l *attemptLog) write() {
	for {
		l.mu.Lock()
		batch := l.take()
		if len(batch) == 0 {
			l.writing = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		l.commit(batch)
	}
}

// take removes the next batch from the queue: up to
// store.MaxAttemptRecords attempts, at most one of each delivery (a resend
// may have two jobs of one delivery running at once); a second attempt of
// a delivery waits for the batch after. The caller holds mu.
func (l *attemptLog) take() []*loggedAttempt {
	var batch, rest []*loggedAttempt
	seen := map[string]bool{}
	for _, a := range l.queue {
		if len(batch) == store.MaxAttemptRecords || seen[a.rec.Work.ID] {
			rest = append(rest, a)
			continue
		}
		seen[a.rec.Work.ID] = true
		batch = append(batch, a)
	}
	l.queue = rest
	return batch
}

// commit records a batch in one transaction. If that fails before its
// time is up, each attempt is tried in its own, so that one attempt the
// database refuses costs the others nothing.
func (l *attemptLog) commit(batch []*loggedAttempt) {
	ctx, cancel := context.WithTimeout(context.Background(), recordWait)
	defer cancel()
	recs := make([]store.AttemptRecord, len(batch))
	for i, a := range batch {
		recs[i] = a.rec
	}
	var moved []bool
	err := l.db.InTx(ctx, func(tx *store.Tx) (err error) {
		moved, err = tx.RecordAttempts(ctx, recs)
		return err
	})
	if err == nil || len(batch) == 1 || ctx.Err() != nil {
		for i, a := range batch {
			if err == nil {
				a.moved = moved[i]
			}
			a.err = err
			close(a.done)
		}
		return
	}
	cancel()
	for _, a := range batch {
		l.commit([]*loggedAttempt{a})
	}
}
