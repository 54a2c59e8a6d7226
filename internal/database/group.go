package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// group lets SQLite's writers share commits. SQLite has one writer, so
// write transactions run one after another anyway; each one's commit,
// though, wrote every page it changed to the log again (the same index
// leaves, the landlord's row), two system calls a page, and cleared the
// pages it had cached beyond the database's end. In a group, the writer
// that finds others waiting hands them the open transaction instead of
// committing it: each later writer's statements run inside a savepoint of
// its own (a failure rolls back that writer's and no other's; the first
// writer's rollback is the transaction's), and the last
// of the group, or the one that finds it full (groupMembers) or old
// (groupAge), commits for all. A writer's Commit returns only when the
// group's commit is done, so nothing is acknowledged that is not in the
// database; if that commit fails, every member's fails.
//
// The group's transaction outlives the request that opened it, so its
// statements run without their request's cancellation: SQLite rolls back
// a whole transaction whose write was interrupted, the other members'
// work with it.
type group struct {
	db *DB
	mu sync.Mutex
	// held is whether a writer has the turn; waiters wait for it in
	// order, each handed the turn by closing its channel.
	held    bool
	waiters []chan struct{}
	// open is the transaction being shared, nil between groups. Only the
	// writer holding the turn changes it.
	open *batch
}

// batch is one group's transaction.
type batch struct {
	conn *sql.Conn
	tx   *sql.Tx
	// members counts the writers whose work is in it to be committed,
	// and first is when the first of them began to wait for the commit.
	members int
	first   time.Time
	// broken is the first failure that left the transaction unusable
	// (SQLite rolled it back): the group's commit then fails with it.
	broken error
	// done is closed when the group has committed (err nil) or failed.
	done chan struct{}
	err  error
}

// groupMembers and groupAge bound a group: a full or old group is
// committed by the writer that finds it so, whoever waits. The age is
// that of the first member's wait for the commit: the most the group
// adds to any member's answer, beyond the work of the member that runs
// when it is reached (a member's work is never cut short, so one long
// transaction, a bill run of thousands of rooms, delays the answers of
// the members before it in its group by its own length).
const (
	groupMembers = 32
	groupAge     = 4 * time.Millisecond
)

// savepoint names each member's savepoint; members follow each other, so
// one name serves.
const savepoint = "member"

// take waits for the writer's turn, at most db.wait.
func (g *group) take(ctx context.Context) error {
	g.mu.Lock()
	if !g.held {
		g.held = true
		g.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	g.waiters = append(g.waiters, turn)
	g.mu.Unlock()
	timer := time.NewTimer(g.db.wait)
	defer timer.Stop()
	var err error
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		err = fmt.Errorf("database: begin: %w", ctx.Err())
	case <-timer.C:
		err = Unavailable(fmt.Errorf("database: begin: no turn to write after %s", g.db.wait))
	}
	g.mu.Lock()
	select {
	case <-turn: // handed over as the wait ended: pass it on
		g.mu.Unlock()
		g.leave()
		return err
	default:
	}
	for i, w := range g.waiters {
		if w == turn {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			break
		}
	}
	g.mu.Unlock()
	return err
}

// takeAlone takes the turn with no group open: one that is open is
// committed first. The holder gives the turn up with leave.
func (g *group) takeAlone(ctx context.Context) error {
	if err := g.take(ctx); err != nil {
		return err
	}
	if b := g.open; b != nil {
		g.open = nil
		b.end()
	}
	return nil
}

// leave gives up the turn. The open group goes on with the next writer
// while one waits and the group is neither full, old nor broken;
// otherwise it is committed (rolled back if it holds no member's work)
// first.
func (g *group) leave() {
	g.mu.Lock()
	b := g.open
	if len(g.waiters) > 0 && (b == nil || b.broken == nil && b.members < groupMembers && time.Since(b.first) < groupAge) {
		g.handLocked()
		g.mu.Unlock()
		return
	}
	g.open = nil
	g.mu.Unlock()
	if b != nil {
		b.end()
	}
	g.mu.Lock()
	handed := len(g.waiters) > 0
	if handed {
		g.handLocked()
	} else {
		g.held = false
	}
	g.mu.Unlock()
	if handed && b != nil {
		// handLocked readied the next writer after the group's members
		// (b.end closed done first), so it normally runs next on this
		// processor (another, idle one may take it after a few
		// microseconds): as soon as this goroutine yields. Gosched puts
		// this goroutine on the global run queue, so the writers' turn,
		// which bounds the write rate, moves on before this request
		// writes its answer and log line. Normally, not always: a
		// goroutine readied after it (one that waited for g.mu) runs
		// first. Only here: a writer that hands the turn on without
		// committing waits for the group's commit at once, which yields
		// all the same.
		runtime.Gosched()
	}
}

// handLocked gives the turn to the first waiter; g.mu is held.
func (g *group) handLocked() {
	turn := g.waiters[0]
	g.waiters = g.waiters[1:]
	close(turn)
}

// end commits the batch, or rolls it back when it is broken or holds no
// member's work, gives its connection back and tells the members.
func (b *batch) end() {
	switch {
	case b.broken != nil:
		b.err = b.broken
		b.tx.Rollback()
	case b.members == 0:
		b.tx.Rollback()
	default:
		if b.err = b.tx.Commit(); b.err != nil {
			// A failed COMMIT may leave the transaction open on the
			// connection, where the next group's BEGIN would fail.
			b.conn.ExecContext(context.Background(), "ROLLBACK")
		}
	}
	b.conn.Close()
	close(b.done)
}

// check breaks the batch if err is one of SQLite's failures after which
// the transaction may have been rolled back (a full disk, an I/O error,
// no memory, an interrupt, a busy lock), and returns err.
func (b *batch) check(err error) error {
	var lite *sqlite.Error
	if b.broken == nil && errors.As(err, &lite) {
		switch lite.Code() & 0xff {
		case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_BUSY,
			sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_ABORT:
			b.broken = fmt.Errorf("database: group commit: %w", err)
		}
	}
	return err
}

// begin starts a member's transaction: the open group's, inside a
// savepoint, or a new one (BEGIN IMMEDIATE on the write connection).
func (g *group) begin(ctx context.Context) (*Tx, error) {
	if err := g.take(ctx); err != nil {
		return nil, err
	}
	b := g.open
	if b == nil {
		conn, err := g.db.acquire(ctx, g.db.write)
		if err != nil {
			g.leave()
			return nil, fmt.Errorf("database: begin: %w", err)
		}
		// Not the request's context: database/sql rolls a transaction
		// back when its context ends, and this one is the group's.
		tx, err := conn.BeginTx(context.Background(), nil)
		if err != nil {
			conn.Close()
			g.leave()
			if Refused(err) {
				return nil, Unavailable(err)
			}
			return nil, fmt.Errorf("database: begin: %w", err)
		}
		b = &batch{conn: conn, tx: tx, done: make(chan struct{})}
		g.open = b
	}
	// The first member's work is the transaction's own: its rollback is
	// the transaction's (see leaveGroup), and it needs no savepoint. A
	// savepoint makes SQLite copy every page the member changes aside
	// until its release, and truncate that copy back at each statement's
	// end by walking it from its start: a big writer (a batch of
	// readings, a bill run) spent more in that than in its inserts.
	others := b.members > 0
	if others {
		if _, err := b.tx.ExecContext(context.Background(), "SAVEPOINT "+savepoint); err != nil {
			b.broken = err
			g.leave()
			return nil, fmt.Errorf("database: begin: %w", err)
		}
	}
	tx := &Tx{b: b, g: g, others: others, Now: g.db.now().UTC()}
	tx.c = &txConn{tx: tx}
	return tx, nil
}

// leaveGroup ends tx's part of its group: rows it left open are closed
// (SQLite releases no savepoint under a statement that still runs), its
// work is kept (its savepoint released; then its OnKept hooks run) or
// undone (its savepoint rolled back; the first member's, the
// transaction), and the turn goes on (see group.leave). A savepoint that cannot be released or rolled back breaks
// the group. From here on tx's statements fail with sql.ErrTxDone: they
// would run in the next writer's work.
func (tx *Tx) leaveGroup(keep bool) {
	b, bg := tx.b, context.Background()
	tx.left = true
	tx.c.(*txConn).closeRows()
	var err error
	switch {
	case keep && tx.others:
		if _, err = b.tx.ExecContext(bg, "RELEASE "+savepoint); err == nil {
			b.members++
		}
	case keep:
		b.members, b.first = 1, time.Now()
	case tx.others:
		if _, err = b.tx.ExecContext(bg, "ROLLBACK TO "+savepoint); err == nil {
			_, err = b.tx.ExecContext(bg, "RELEASE "+savepoint)
		}
	default:
		// The first member's rollback is the transaction's: the group
		// ends, and the next writer begins another.
		tx.g.open = nil
		b.end()
	}
	if err != nil && b.broken == nil {
		b.broken = fmt.Errorf("database: group commit: %w", err)
	}
	if keep && err == nil {
		for _, fn := range tx.onKept {
			fn(Work{b: b})
		}
	}
	tx.g.leave()
}

// commitMember keeps tx's work in its group after running last, and waits
// for the group's commit.
func (tx *Tx) commitMember(ctx context.Context, last []Stmt) error {
	if err := tx.ExecAll(ctx, last); err != nil {
		return err
	}
	tx.leaveGroup(true)
	<-tx.b.done
	return tx.b.err
}

// rollbackMember undoes tx's work in its group. A member that began after
// others' work may have read it, and may tell its caller something of it
// (a kept answer to replay), so it also waits until that work is committed
// or failed, and returns the failure: no answer is made of work the
// database does not have.
func (tx *Tx) rollbackMember() error {
	if !tx.left {
		tx.leaveGroup(false)
	}
	if tx.others {
		<-tx.b.done
		return tx.b.err
	}
	return nil
}
