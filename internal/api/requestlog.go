package api

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"rentapi/internal/store"
)

// requestLog keeps each application's API requests for the portal's
// Requests page. It never slows an answer: a request is added to a batch
// in memory after its answer is written, and the batch goes to the
// database half a second later, or at once when it is full, in a
// goroutine of its own. The log is a help for developers, not a record:
// when the database is down or far behind, what does not fit is dropped
// (and counted in the process's log) rather than held.
type requestLog struct {
	db  *store.DB
	log *slog.Logger

	mu      sync.Mutex
	pending []store.LoggedRequest
	// seq numbers the requests in the order they were answered, from the
	// process's start in microseconds, so that a restarted process's
	// numbers come after its last run's.
	seq     int64
	timer   *time.Timer
	dropped int
	// closed is set by the last flush, on shutdown: what comes after is
	// not kept.
	closed bool
	// writing keeps the batches in order, one at a time.
	writing sync.Mutex
	// spare is a written batch's array, emptied, which the next batch
	// fills: growing a new one for every batch was a twentieth of what a
	// read allocated.
	spare []store.LoggedRequest
}

const (
	// requestLogDelay is how long a request waits in memory at most.
	requestLogDelay = 500 * time.Millisecond
	// requestLogBatch is the batch that is written at once.
	requestLogBatch = 500
	// requestLogMax is how many requests wait at most; more are dropped.
	requestLogMax = 50_000
	// batchRoom is the room a batch is made with: the requests answered
	// while the batch before is still being written join it.
	batchRoom = 2 * requestLogBatch
)

func (l *requestLog) add(r store.LoggedRequest) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	if len(l.pending) >= requestLogMax {
		l.dropped++
		return
	}
	if l.seq == 0 {
		l.seq = time.Now().UnixMicro()
	}
	l.seq++
	r.Seq = l.seq
	if l.pending == nil {
		l.pending, l.spare = l.spare, nil
		if l.pending == nil {
			l.pending = make([]store.LoggedRequest, 0, batchRoom)
		}
	}
	l.pending = append(l.pending, r)
	switch {
	case len(l.pending) == requestLogBatch:
		go l.flush(context.Background())
	case l.timer == nil:
		l.timer = time.AfterFunc(requestLogDelay, func() { l.flush(context.Background()) })
	}
}

// flush writes what waits; the process calls it on shutdown too.
func (l *requestLog) flush(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.writing.Lock()
	defer l.writing.Unlock()
	l.mu.Lock()
	batch, dropped := l.pending, l.dropped
	l.pending, l.dropped = nil, 0
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	if dropped > 0 {
		l.log.WarnContext(ctx, "request log full: requests not logged", "requests", dropped)
	}
	if len(batch) == 0 {
		return nil
	}
	// A transaction a batch, so that a backlog (the database was away)
	// holds SQLite's one writer no longer than a batch at a time.
	for rest := batch; len(rest) > 0; {
		n := min(len(rest), requestLogBatch)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := l.db.LogRequests(wctx, rest[:n])
		cancel()
		if err != nil {
			l.log.WarnContext(ctx, "request log not written", "requests", len(rest), "error", err.Error())
			return err
		}
		rest = rest[n:]
	}
	if cap(batch) == batchRoom {
		clear(batch) // holds no request's strings while it waits
		l.mu.Lock()
		l.spare = batch[:0]
		l.mu.Unlock()
	}
	return nil
}

// close writes what waits and keeps nothing more: the process is
// shutting down.
func (l *requestLog) close(ctx context.Context) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	return l.flush(ctx)
}

// loggedPath is a request's path as the request log keeps it: keys and
// secrets redacted (logPath), at most 300 bytes of valid UTF-8.
func loggedPath(p string) string {
	p = logPath(p)
	if len(p) > 300 {
		p = strings.ToValidUTF8(p[:300], "")
	}
	return p
}
