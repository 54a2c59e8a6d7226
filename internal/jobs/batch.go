package jobs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"rentapi/internal/store"
)

// batch runs many workers' calls as one: a worker hands its item over and
// waits for its result, and whatever items arrive while one run is under
// way go together in the next. A lone call waits for no timer, and a busy
// queue makes one statement or transaction for many deliveries instead of
// one each. The delivery workers load their deliveries and record their
// attempts this way: the attempt is still committed before its job returns
// (and River completes the job or schedules its retry, which NextRetry
// checks against the log).
type batch[T, R any] struct {
	// key names an item; a run takes at most one item of each key, and a
	// second waits for the run after.
	key func(T) string
	// max is the most items in one run.
	max int
	// run does the work of the items, and returns a result for each in
	// order, or an error for all.
	run func(context.Context, []T) ([]R, error)

	mu sync.Mutex
	// queue is the calls waiting for the next run.
	queue []*batchCall[T, R]
	// running is set while a goroutine is making runs; it runs until the
	// queue is empty, then ends.
	running bool
}

// batchCall is one item waiting for its run, and then its result.
type batchCall[T, R any] struct {
	item T
	done chan struct{}
	res  R
	err  error
}

// batchWait bounds one run: as long as one delivery's own transaction
// could take, waiting for the write connection included.
const batchWait = store.WriteWait + 5*time.Second

// do runs item in the next run and returns its result. The run is not cut
// short with the caller's context: an attempt that happened is recorded
// even while its job is being stopped, and every run is bounded by
// batchWait.
func (b *batch[T, R]) do(item T) (R, error) {
	c := &batchCall[T, R]{item: item, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if !b.running {
		b.running = true
		go b.loop()
	}
	b.mu.Unlock()
	<-c.done
	return c.res, c.err
}

// loop makes runs until no call is waiting.
func (b *batch[T, R]) loop() {
	for {
		b.mu.Lock()
		calls := b.take()
		if len(calls) == 0 {
			b.running = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.finish(calls)
	}
}

// take removes the calls of the next run from the queue. The caller holds mu.
func (b *batch[T, R]) take() []*batchCall[T, R] {
	var calls, rest []*batchCall[T, R]
	seen := map[string]bool{}
	for _, c := range b.queue {
		k := b.key(c.item)
		if len(calls) == b.max || seen[k] {
			rest = append(rest, c)
			continue
		}
		seen[k] = true
		calls = append(calls, c)
	}
	b.queue = rest
	return calls
}

// finish makes one run of the calls and hands each its result. If the run
// fails before its time is up, each item is run alone, so that one item
// the database refuses costs the others nothing.
func (b *batch[T, R]) finish(calls []*batchCall[T, R]) {
	ctx, cancel := context.WithTimeout(context.Background(), batchWait)
	defer cancel()
	items := make([]T, len(calls))
	for i, c := range calls {
		items[i] = c.item
	}
	res, err := b.runSafely(ctx, items)
	if err == nil || len(calls) == 1 || ctx.Err() != nil {
		for i, c := range calls {
			if err == nil {
				c.res = res[i]
			}
			c.err = err
			close(c.done)
		}
		return
	}
	cancel()
	for _, c := range calls {
		b.finish([]*batchCall[T, R]{c})
	}
}

// runSafely is run with a panic, or a result per item missing, turned into
// the run's error: runs happen on the batch's own goroutine, out of reach
// of River's recovery of a worker's panic, and a call left unanswered would
// hang its worker and every later one.
func (b *batch[T, R]) runSafely(ctx context.Context, items []T) (res []R, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("jobs: batch run panicked: %v", p)
		}
	}()
	res, err = b.run(ctx, items)
	if err == nil && len(res) != len(items) {
		return nil, fmt.Errorf("jobs: batch run answered %d of %d items", len(res), len(items))
	}
	return res, err
}

// attemptLog records finished attempts, many in one transaction.
func attemptLog(db *store.DB) *batch[store.AttemptRecord, bool] {
	return &batch[store.AttemptRecord, bool]{
		key: func(r store.AttemptRecord) string { return r.Work.ID },
		max: store.MaxAttemptRecords,
		run: func(ctx context.Context, recs []store.AttemptRecord) (moved []bool, err error) {
			err = db.InTx(ctx, func(tx *store.Tx) (err error) {
				moved, err = tx.RecordAttempts(ctx, recs)
				return err
			})
			return moved, err
		},
	}
}

// workLoader loads deliveries for their jobs, many in one query: a fetch
// of the delivery queue starts many jobs at once.
func workLoader(db *store.DB) *batch[string, *store.DeliveryWork] {
	return &batch[string, *store.DeliveryWork]{
		key: func(id string) string { return id },
		max: store.MaxDeliveryWorks,
		run: func(ctx context.Context, ids []string) ([]*store.DeliveryWork, error) {
			return db.Read().DeliveryWorks(ctx, ids)
		},
	}
}
