package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// turns queues this process's writers of each landlord, so that at most one
// of them at a time is in the database, besides one whose commit is on its
// way (see Tx.Commit). Writes of one landlord are serial
// anyway (each holds the landlord's row lock until it commits, see Claim);
// without the queue, every waiting writer would hold a pooled connection
// while PostgreSQL queues it on that lock, leaving none for other landlords,
// and every commit would wake them all to fight for the lock again. Writers
// in other processes still wait on the row lock itself: the queue is only
// what makes one process's own waiting cheap. PostgreSQL's alone: SQLite's
// writers all queue for its one write connection, where they share
// commits (see database.Begin).
type turns struct {
	mu sync.Mutex
	m  map[string]*turn
	// clocks are what this process knows of landlords' clocks, for the
	// claims made ahead (see Tx.claimAhead); at maxClocks landlords they
	// are all forgotten at once.
	clocks map[string]clockNote
}

// clockNote is a landlord's clock and clock offset as this process's
// writers last committed them, and until when its writes claim as usual,
// since a claim ahead lost to another process's writer (Unix ms); and
// pending, the clock a transaction whose commit is on its way leaves if it
// commits (see committing), 0 if none.
type clockNote struct{ clock, offset, usualUntil, pending int64 }

// maxClocks bounds turns.clocks.
const maxClocks = 10_000

// aheadPause is how long a landlord's writes claim as usual after a claim
// ahead lost: several processes writing one landlord at once would
// otherwise keep losing, each loss a batch thrown away and a rollback.
const aheadPause = time.Second

// predict returns the landlord's clock and clock offset as this process
// last committed them (0 if it does not know), or the clock a commit on its
// way leaves if it is later, and whether a claim ahead may use them at now
// (Unix ms).
func (t *turns) predict(landlordID string, now int64) (last, offset int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.clocks[landlordID]
	return max(n.clock, n.pending), n.offset, now >= n.usualUntil
}

// note changes what is known of the landlord's clock.
func (t *turns) note(landlordID string, change func(*clockNote)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.clocks == nil || len(t.clocks) >= maxClocks {
		t.clocks = map[string]clockNote{}
	}
	n := t.clocks[landlordID]
	change(&n)
	t.clocks[landlordID] = n
}

// committed notes a landlord's clock and clock offset as a transaction
// committed them. A new offset (a sandbox's clock advanced, or reset to
// real time, which sets the clock back) replaces the clock noted, and the
// clock of a commit on its way, made at the old offset, is forgotten.
func (t *turns) committed(landlordID string, clock, offset int64) {
	t.note(landlordID, func(n *clockNote) {
		if n.offset != offset {
			n.clock, n.offset, n.pending = clock, offset, 0
			return
		}
		n.clock = max(n.clock, clock)
	})
}

// committing notes the clock a transaction of the landlord leaves if the
// commit it is about to send succeeds, so that the next writer may predict
// its tick before that commit is answered; false, and nothing noted, when
// the transaction's clock offset is not the one noted (the next writer then
// waits for the commit to be answered, see Tx.Commit).
func (t *turns) committing(landlordID string, clock, offset int64) (ok bool) {
	t.note(landlordID, func(n *clockNote) {
		if ok = n.offset == offset; ok {
			n.pending = max(n.pending, clock)
		}
	})
	return ok
}

// settled ends what committing noted, once the commit was answered: the
// pending clock is forgotten (unless a later transaction's is noted in its
// place), and if the commit succeeded, its clock is noted as committed's
// would be, but only while the offset is still the one it was made at: a
// clock reset committed meanwhile, by the next writer, is not undone.
func (t *turns) settled(landlordID string, clock, offset int64, ok bool) {
	t.note(landlordID, func(n *clockNote) {
		if n.pending == clock {
			n.pending = 0
		}
		if ok && n.offset == offset {
			n.clock = max(n.clock, clock)
		}
	})
}

// lost notes that a claim ahead of the landlord lost at now (Unix ms).
func (t *turns) lost(landlordID string, now int64) {
	t.note(landlordID, func(n *clockNote) { n.usualUntil = now + aheadPause.Milliseconds() })
}

// turn is one landlord's queue: a token passed from writer to writer (a
// channel's blocked senders are served in order), and how many writers hold
// or wait for it, so an idle landlord's queue is dropped.
type turn struct {
	token   chan struct{}
	holders int
}

// take waits for landlordID's turn; release gives it to the next writer.
// The wait ends with ctx.
func (t *turns) take(ctx context.Context, landlordID string) (release func(), err error) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*turn{}
	}
	tn := t.m[landlordID]
	if tn == nil {
		tn = &turn{token: make(chan struct{}, 1)}
		t.m[landlordID] = tn
	}
	tn.holders++
	t.mu.Unlock()
	select {
	case tn.token <- struct{}{}:
		var once sync.Once
		return func() {
			once.Do(func() {
				<-tn.token
				t.leave(landlordID, tn)
			})
		}, nil
	case <-ctx.Done():
		t.leave(landlordID, tn)
		return nil, ctx.Err()
	}
}

func (t *turns) leave(landlordID string, tn *turn) {
	t.mu.Lock()
	if tn.holders--; tn.holders == 0 {
		delete(t.m, landlordID)
	}
	t.mu.Unlock()
}

// BeginClaimed begins a write transaction of acct's landlord and claims it
// (see Claim), after this process's earlier writers of the same landlord
// are done or have sent their commit (see turns). Waiting for the turn and
// for a connection together is bounded like Begin's wait: beyond it, the
// service is unavailable.
func (db *DB) BeginClaimed(ctx context.Context, acct *rental.Account) (*Tx, error) {
	return db.beginClaimed(ctx, acct, nil, nil, false)
}

// beginClaimed is BeginClaimed, with kc's version read, if any, and then
// the hold of the Idempotency-Key hold, if any (see BeginIdempotent), sent
// with the claim (see BeginChecked); with ahead, on PostgreSQL, all are
// only queued, and the claim is made ahead (see BeginAhead).
func (db *DB) beginClaimed(ctx context.Context, acct *rental.Account, kc *KeyCheck, hold *IdempotencyKey, ahead bool) (*Tx, error) {
	release := func() {}
	// On SQLite every writer waits in one queue anyway, the write
	// connection's, where waiting is what lets writers share a commit.
	if db.Engine() == Postgres {
		wait, cancel := context.WithTimeout(ctx, db.Wait())
		var err error
		release, err = db.turns.take(wait, acct.LandlordID)
		cancel()
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				return nil, database.Unavailable(err)
			}
			return nil, err
		}
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		release()
		return nil, err
	}
	tx.release = release
	claimed := false
	defer func() {
		if !claimed { // failed or panicked: the connection and the turn go back
			tx.Rollback()
		}
	}()
	if err := kc.carry(ctx, tx); err != nil {
		return nil, err
	}
	tx.holdKey(hold) // before the landlord's lock: a request whose key is busy must not wait for it
	if last, offset, ok := db.turns.predict(acct.LandlordID, ms(tx.Now)); ahead && ok && tx.Pipelined() {
		tx.claimAhead(acct.LandlordID, last, offset)
	} else if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	claimed = true
	return tx, nil
}
