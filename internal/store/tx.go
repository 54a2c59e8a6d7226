package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// Tx is one write transaction: a database.Tx (its Now, fixed when it
// begins, so every row it writes carries the same time; statements left
// for later or for the commit) with the store's read methods inside it,
// and what the store sends with the commit: the events and deliveries it
// recorded, the jobs it queued, the landlord's clock.
type Tx struct {
	Queries
	*database.Tx
	db        *DB
	lastEvent int64
	// quiet suppresses events, while the sandbox's sample data is made.
	quiet bool
	// claimed is the landlord whose clock this transaction holds.
	claimed string
	// offset is the claimed landlord's clock offset: how far its Now runs
	// ahead of real time (a sandbox's clock, see clock.go; 0 for live).
	offset time.Duration
	// release gives the landlord's turn to the next writer (BeginClaimed);
	// passed is whether it gave it as the commit was sent (see Commit).
	release func()
	passed  bool
	// events and deliveries are the rows of the events this transaction
	// recorded and of their deliveries, and jobs the jobs it queued (see
	// enqueue): all inserted together at Commit (see flush), where one
	// statement each made a transaction recording many events (a burst, a
	// month's bills) wait for a round trip per row.
	events, deliveries [][]any
	jobs               []river.InsertManyParams
	// endpoints are the landlord's webhook endpoints as a read queued
	// early found them (see readEndpointsAhead), while read is false.
	endpoints linkedEndpoints
	// keyAhead is the Idempotency-Key claimed ahead (see
	// ClaimIdempotencyAhead), whose row CompleteIdempotency inserts.
	keyAhead *keyClaim
	// version is the claimed landlord's data version as Claim left it (0
	// when claimed ahead, which learns it too late to use it).
	version int64
	// keepRooms is what the transaction's write of readings is to keep
	// of its rooms (see keptRooms), unless roomsChanged: the transaction
	// changed rooms, properties or readings (see changedRooms).
	keepRooms    *keptReadings
	roomsChanged bool
	// roomsTaken counts the rooms its write of readings took from those
	// kept, for tests.
	roomsTaken int
}

// Begin starts a write transaction (see database.DB.Begin): on SQLite it
// takes the write lock at once, on PostgreSQL BEGIN travels with the first
// statement. Waiting for the write connection is bounded by Options.Wait.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	t, err := db.DB.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	tx := &Tx{Queries: Queries{c: t, sec: db.sec}, Tx: t, db: db}
	t.OnFail(tx.failed)
	return tx, nil
}

// Commit commits the transaction. Its jobs are inserted first; then the
// statements left for the end (events and deliveries, the landlord's
// clock, the stored response) and, on PostgreSQL, COMMIT itself go in one
// round trip: the landlord's lock is held until the end, and each round
// trip saved is time every other writer of the landlord waits less.
func (tx *Tx) Commit() error {
	defer tx.done()
	if err := tx.insertJobs(context.Background()); err != nil {
		tx.Tx.Rollback()
		return fmt.Errorf("store: commit: queue jobs: %w", err)
	}
	first := tx.inserts()
	if tx.claimed != "" && tx.lastEvent > ms(tx.Now) {
		// Events of this transaction ticked the clock on; the next writer starts after them.
		first = append(first, database.Stmt{SQL: setClock, Args: []any{tx.claimed, tx.lastEvent}, What: "store: clock"})
	}
	final, offset := tx.final(), tx.offset.Milliseconds()
	if tx.release != nil && tx.Pipelined() && tx.Begun() && tx.db.turns.committing(tx.claimed, final, offset) {
		// The landlord's next writer here may send its first batch now,
		// predicting its tick from this one's: PostgreSQL holds that batch
		// at the landlord's row lock, which this COMMIT hands it, so the
		// lock waits neither for this answer's way back nor for the next
		// writer's first statements on their way in. Only once this one's
		// claim was sent (and so holds the lock): else the next one's
		// could take it first. Should the commit fail, the clock stays
		// below the tick predicted, and the next claim still holds.
		tx.passed = true
		tx.done()
	}
	err := tx.Tx.Commit(first...)
	if tx.passed {
		tx.db.turns.settled(tx.claimed, final, offset, err == nil)
	}
	if err != nil {
		if e, ok := rental.AsError(err); ok {
			return e
		}
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// insertJobs inserts the jobs the transaction queued, in it.
func (tx *Tx) insertJobs(ctx context.Context) error {
	if len(tx.jobs) == 0 {
		return nil
	}
	if tx.Pipelined() {
		_, err := tx.db.pgQueue.InsertManyTx(ctx, tx.PgxTx(), tx.jobs)
		return err
	}
	sqlTx := tx.SQLTx()
	if sqlTx == nil { // over, or broken
		if err := tx.Err(); err != nil {
			return err
		}
		return sql.ErrTxDone
	}
	_, err := tx.db.queue.InsertManyTx(ctx, sqlTx, tx.jobs)
	return err
}

// Rollback abandons the transaction; after Commit it does nothing.
func (tx *Tx) Rollback() error {
	err := tx.Tx.Rollback()
	tx.done()
	return err
}

// done gives the landlord's turn to the next writer; a second call does
// nothing (see turns.take).
func (tx *Tx) done() {
	if tx.release != nil {
		tx.release()
	}
}

// Claim makes the transaction the landlord's only writer until it ends: it
// takes the landlord's row lock, moves the landlord's data version on (see
// DataVersion), and takes the next tick of the landlord's clock as the
// transaction's Now. That clock runs at real time plus the
// landlord's clock offset (a sandbox's clock, moved by its test helper;
// 0 for every live landlord), so this one statement is where every write
// of a sandbox, and every job run for it, gets the sandbox's time. Every write to a landlord's data claims first,
// so creation times follow commit order (a page never skips a row committed
// late) and every write takes its locks in the same order (no deadlocks).
// Claiming again in the same transaction does nothing.
func (tx *Tx) Claim(ctx context.Context, acct *rental.Account) error {
	if tx.claimed != "" {
		return nil
	}
	var clock, offset int64
	err := tx.c.QueryRowContext(ctx, `UPDATE landlords SET clock = CASE WHEN clock >= $2 + clock_offset THEN clock + 1 ELSE $2 + clock_offset END,
		data_version = data_version + 1 WHERE id = $1 RETURNING clock, clock_offset, data_version`, acct.LandlordID, ms(tx.Now)).Scan(&clock, &offset, &tx.version)
	if err != nil {
		return fmt.Errorf("store: claim landlord: %w", err)
	}
	tx.claimed, tx.Now, tx.lastEvent = acct.LandlordID, time.UnixMilli(clock).UTC(), clock-1
	tx.offset = time.Duration(offset) * time.Millisecond
	if tx.Pipelined() { // only PostgreSQL's claims ahead read it
		tx.OnCommit(tx.committed)
	}
	return nil
}

// final is the claimed landlord's clock as the transaction leaves it.
func (tx *Tx) final() int64 { return max(ms(tx.Now), tx.lastEvent) }

// committed tells this process's next writers of the landlord where its
// clock is now; settled does for a transaction that passed its turn as it
// sent its commit (see Commit).
func (tx *Tx) committed() {
	if tx.passed {
		return
	}
	tx.db.turns.committed(tx.claimed, tx.final(), tx.offset.Milliseconds())
}

// claimAhead is Claim queued for the transaction's next round trip (on
// PostgreSQL), with the tick it predicts: the one after last, the clock
// as this process's last writer of the landlord committed it, or now
// (plus offset, the landlord's clock offset as that writer saw it) if that
// is later. The claim takes the tick only if the clock is still below it
// and the offset unchanged, and then the tick is the very one Claim would
// have taken (the clock is where last left it, or below now), unless last
// was predicted from a commit then on its way that failed: the clock then
// skips that commit's ticks, and order holds all the same. If another process
// ticked the clock past it, the claim fails in the database, so nothing
// after it in its batch runs without the landlord's lock, and the
// transaction fails with ErrNotClaimed (errClockMoved): whatever it did
// with Now is undone, and the landlord's writes here claim as usual for a
// while (see aheadPause).
func (tx *Tx) claimAhead(landlordID string, last, offset int64) {
	clock := max(last+1, ms(tx.Now)+offset)
	tx.Ahead(database.Stmt{SQL: database.MustChangeOne(claimAheadClock), Args: []any{landlordID, clock, offset}, What: "store: claim landlord",
		Lost: errClockMoved, Checked: true})
	tx.claimed, tx.Now, tx.lastEvent = landlordID, time.UnixMilli(clock).UTC(), clock-1
	tx.offset = time.Duration(offset) * time.Millisecond
	tx.OnCommit(tx.committed)
}

// failed is told the transaction's first failure on PostgreSQL: a claim
// ahead that lost is counted, and the landlord's writes claim as usual for
// a while.
func (tx *Tx) failed(err error) {
	if errors.Is(err, errClockMoved) {
		tx.db.aheadLost.Add(1)
		tx.db.turns.lost(tx.claimed, ms(tx.db.now()))
	}
}

// errClockMoved is the failure of a claim ahead whose tick another
// process took.
var errClockMoved = fmt.Errorf("%w: another writer moved the landlord's clock on", ErrNotClaimed)

// ClaimsAheadLost counts this process's claims ahead that lost (see
// claimAhead).
func (db *DB) ClaimsAheadLost() int64 { return db.aheadLost.Load() }

// setClock moves a landlord's clock on to $2, if it is below.
const setClock = `UPDATE landlords SET clock = $2 WHERE id = $1 AND clock < $2`

// claimAheadClock is setClock for a claim ahead, which also holds only
// while the landlord's clock offset is still $3.
const claimAheadClock = `UPDATE landlords SET clock = $2, data_version = data_version + 1 WHERE id = $1 AND clock < $2 AND clock_offset = $3`

// Exec runs a statement of the caller's own in the transaction: the bench
// seeder's bulk inserts, a test's change that no store method makes.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.c.ExecContext(ctx, query, args...)
}

// QueryRow runs a query of the caller's own in the transaction and returns
// its first row.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	return tx.c.QueryRowContext(ctx, query, args...)
}

// InTx runs fn in a write transaction and commits if fn returns nil.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}
