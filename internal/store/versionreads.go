package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"rentapi/internal/database"
)

// versionReads gathers the reads that requests on kept key lookups make of
// the access version and their landlords' data versions (see
// KeyCheck.dataVersion) into shared statements, on PostgreSQL. Such a read
// is the whole database work of a read answered from its tag, so under
// load a process would otherwise send one round trip per request, each
// waking a server process and this one. A read that finds fewer than
// versionStatements statements of its kind in flight sends its own at
// once; one that finds them busy waits, and all that wait go together in
// the next statement, sent as soon as one in flight has answered. Every
// statement starts after each of its reads was asked for, so the answer
// is never older than the request: a key revoked, a link ended or a write
// committed before the request came is seen, on every process, as it was
// with a statement of the request's own.
type versionReads struct {
	mu sync.Mutex
	// running counts the statements in flight; waiting are the reads
	// that came while versionStatements were.
	running int
	waiting []*versionAsk
	// statements and reads count both since the process began (for
	// tests and the closing notes of benchmarks).
	statements, reads atomic.Int64
}

// versionStatements is how many statements of versionReads may be in
// flight at once: two, so that one can gather reads while the other is
// on its way and a request never waits for more than the one ahead of it.
const versionStatements = 2

// versionBatch bounds the reads of one statement (its array parameter).
const versionBatch = 512

// versionAsk is one read: of the access version and of the data version
// of landlordID. done, for a read that waits, receives false once the
// result is in, or true to make the read the one that sends the statement
// of batch.
type versionAsk struct {
	landlordID    string
	access        int64
	writes, clock sql.NullInt64
	err           error
	done          chan bool
	batch         []*versionAsk
}

// readVersions reads the access version and the data version of
// landlordID's landlord (null parts when there is no such landlord), in a
// statement shared with the reads of other requests made at the same
// time (see versionReads).
func (db *DB) readVersions(ctx context.Context, landlordID string) (access int64, writes, clock sql.NullInt64, err error) {
	v := &db.versions
	v.reads.Add(1)
	r := &versionAsk{landlordID: landlordID}
	v.mu.Lock()
	if v.running < versionStatements {
		v.running++
		v.mu.Unlock()
		db.sendVersions(ctx, []*versionAsk{r})
	} else {
		r.done = make(chan bool, 1)
		v.waiting = append(v.waiting, r)
		v.mu.Unlock()
		// The wait is for a statement in flight and the one after it,
		// each bounded by versionTimeout. A request that ends while its
		// read still waits leaves; once a statement has taken the read,
		// the read may be the one that sends it, and stays.
		select {
		case lead := <-r.done:
			if lead {
				db.sendVersions(ctx, r.batch)
			}
		case <-ctx.Done():
			if v.leave(r) {
				return 0, sql.NullInt64{}, sql.NullInt64{}, ctx.Err()
			}
			if lead := <-r.done; lead {
				db.sendVersions(ctx, r.batch)
			}
		}
	}
	return r.access, r.writes, r.clock, r.err
}

// leave takes r out of the reads waiting, if no statement has taken it
// yet, and reports whether it did.
func (v *versionReads) leave(r *versionAsk) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	i := slices.Index(v.waiting, r)
	if i < 0 {
		return false
	}
	v.waiting = slices.Delete(v.waiting, i, i+1)
	return true
}

// sendVersions runs the statement of batch, gives each read its result,
// and hands the statement's place to the reads that came meanwhile, if
// any: the first of them sends their statement. It hands it on even if
// the statement panics (each read then fails), so that no read waits
// for ever.
func (db *DB) sendVersions(ctx context.Context, batch []*versionAsk) {
	v := &db.versions
	v.statements.Add(1)
	ran := false
	defer func() {
		if !ran {
			for _, r := range batch {
				r.err = errVersionPanic
			}
		}
		v.handOn(batch)
	}()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), versionTimeout)
	defer cancel()
	db.versionStatement(ctx, batch)
	ran = true
}

// versionTimeout bounds a shared version statement, which runs without
// any one request's cancellation: a database that does not answer fails
// the reads waiting for it as unavailable, rather than holding them all.
const versionTimeout = 10 * time.Second

// errVersionPanic is a version read's failure when its statement's code
// panicked (in the goroutine of the read that sent it).
var errVersionPanic = errors.New("store: data version: the statement's code panicked")

// handOn answers batch's reads and hands the statement's place on to the
// reads that came meanwhile.
func (v *versionReads) handOn(batch []*versionAsk) {
	v.mu.Lock()
	next := v.waiting
	if len(next) > versionBatch {
		next, v.waiting = next[:versionBatch], next[versionBatch:]
	} else {
		v.waiting = nil
	}
	if len(next) == 0 {
		v.running--
	}
	v.mu.Unlock()
	if len(next) > 0 { // first: the next statement is on its way sooner
		next[0].batch = next
		next[0].done <- true
	}
	for _, r := range batch[1:] {
		r.done <- false
	}
}

// versionStatement reads the versions of batch's reads in one statement.
// It runs without the request's cancellation: it answers other requests
// too.
func (db *DB) versionStatement(ctx context.Context, batch []*versionAsk) {
	// Lists, not maps: a batch is short unless the process is very busy,
	// and then a statement the less is worth far more than the search.
	ids := make([]string, 0, len(batch))
	for _, r := range batch {
		r.err = errNoVersion
		if !slices.Contains(ids, r.landlordID) {
			ids = append(ids, r.landlordID)
		}
	}
	found := func(id string, access int64, writes, clock sql.NullInt64) {
		for _, r := range batch {
			if r.landlordID == id {
				r.access, r.writes, r.clock, r.err = access, writes, clock, nil
			}
		}
	}
	err := func() error {
		var access int64
		var writes, clock sql.NullInt64
		if len(ids) == 1 { // the usual read when the process is not busy: no array
			if err := db.Reader().QueryRowContext(ctx, accessAndDataVersion, ids[0]).Scan(&access, &writes, &clock); err != nil {
				return err
			}
			found(ids[0], access, writes, clock)
			return nil
		}
		rows, err := db.Reader().QueryContext(ctx, `SELECT a.version, x.id, l.data_version, l.clock
			FROM access_version a CROSS JOIN unnest($1::text[]) AS x(id) LEFT JOIN landlords l ON l.id = x.id`, ids)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&access, &id, &writes, &clock); err != nil {
				return err
			}
			found(id, access, writes, clock)
		}
		return rows.Err()
	}()
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			err = database.Unavailable(err)
		}
		for _, r := range batch {
			r.err = fmt.Errorf("store: data version: %w", err)
		}
	}
}

// errNoVersion is a version read's failure when its statement returned no
// row for it (no access version).
var errNoVersion = fmt.Errorf("store: data version: %w", sql.ErrNoRows)
