package store

import (
	"context"
	"errors"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// KeyCheck saves a read on PostgreSQL the round trip of LookupKey's
// version read: the request runs on the key's kept lookup (KeptKey), and
// the access version travels to the database in one pipelined batch with
// the read's first statement (ReadChecking). The read's answer counts only
// if the version is still the one the kept lookup read, that is, only if
// LookupKey would have answered the same: nothing a request answers may rest
// on the kept lookup before Confirm says it held. It is the database.Check
// such a read carries (Pending, Outcome); a write carries it too (carry).
// The API sees none of it but through ServeKey and KeyRun.
type KeyCheck struct {
	db      *DB
	version int64
	ran     bool
	held    bool
	err     error
}

// KeptKey returns the key's kept lookup, a copy the caller may change, and
// the check that must confirm it, for a request that writes (write) or
// reads; nil when there is none to use: when the key has no kept lookup,
// when the passing of time has changed it, or for a read on SQLite. There
// a read of the version costs no round trip, but on a reader it costs a
// read transaction whose page cache starts over after every commit; a
// write's check is read by the write connection in the transaction
// itself (see carry), from pages it has cached.
func (db *DB) KeptKey(fingerprint, accountHint string, now time.Time, write bool) (*rental.KeyOwner, *KeyCheck) {
	if db.Engine() != Postgres && !write {
		return nil, nil
	}
	o, version, ok := db.keys.kept(fingerprint, accountHint, now)
	if !ok {
		return nil, nil
	}
	return o, &KeyCheck{db: db, version: version}
}

// Confirm reports whether the kept lookup still holds, reading the
// version on its own if no statement has taken it along yet.
func (kc *KeyCheck) Confirm(ctx context.Context) bool {
	if !kc.ran {
		s, _ := kc.Pending()
		s.Scan(kc.db.Reader().QueryRowContext(ctx, s.SQL))
	}
	return kc.held
}

// Err is why the check could not run (no connection, a refusal), when it
// could not: the answer a lookup made now would have met too.
func (kc *KeyCheck) Err() error { return kc.err }

func (kc *KeyCheck) record(version int64, err error) {
	kc.ran, kc.err = true, err
	kc.held = err == nil && version == kc.version
	if kc.held {
		kc.db.keys.confirmed.Add(1)
	}
}

// BeginChecked begins a write of acct's landlord like BeginClaimed (or,
// for no account, like Begin) and confirms kc, if any, first: on
// PostgreSQL the version read travels in one batch with BEGIN and the
// claim. When the kept lookup did not hold the transaction ends at once
// with ErrKeyChanged: nothing was done, and the request runs again on a
// lookup made now.
func (db *DB) BeginChecked(ctx context.Context, acct *rental.Account, kc *KeyCheck) (*Tx, error) {
	return db.beginChecked(ctx, acct, kc, nil)
}

// beginChecked is BeginChecked, holding the key hold first if not nil (see
// BeginIdempotent).
func (db *DB) beginChecked(ctx context.Context, acct *rental.Account, kc *KeyCheck, hold *IdempotencyKey) (*Tx, error) {
	var tx *Tx
	var err error
	if acct == nil {
		if tx, err = db.Begin(ctx); err != nil {
			return nil, err
		}
		// On SQLite the write connection reads the check now (a reader
		// would, below, while this holds the writers' turn); on
		// PostgreSQL Confirm reads it below, at once, as it did.
		if !tx.Pipelined() {
			if err := kc.carry(ctx, tx); err != nil {
				tx.Rollback()
				return nil, err
			}
		}
		tx.holdKey(hold)
	} else {
		tx, err = db.beginClaimed(ctx, acct, kc, hold, false)
	}
	if err == nil && kc != nil && !kc.Confirm(ctx) {
		tx.Rollback()
		return nil, ErrKeyChanged
	}
	return tx, err
}

// BeginAhead is BeginChecked that sends nothing yet: on PostgreSQL, BEGIN,
// kc's version read and the landlord's claim, made ahead (see claimAhead),
// travel with the transaction's first round trip (its first statement, or
// the flush before its jobs, or Commit). That round trip fails with
// ErrKeyChanged if the kept lookup did not hold, and with ErrNotClaimed if
// the claim ahead lost; both are checks the database makes, so nothing
// after them ran, and the request runs again: on a lookup made now, or
// with BeginChecked. A landlord whose claim ahead lost lately is claimed
// as usual (see aheadPause). On SQLite it is BeginChecked.
func (db *DB) BeginAhead(ctx context.Context, acct *rental.Account, kc *KeyCheck) (*Tx, error) {
	return db.beginAhead(ctx, acct, kc, nil)
}

// beginAhead is BeginAhead, holding the key hold first if not nil (see
// BeginIdempotent).
func (db *DB) beginAhead(ctx context.Context, acct *rental.Account, kc *KeyCheck, hold *IdempotencyKey) (*Tx, error) {
	if db.Engine() != Postgres {
		return db.beginChecked(ctx, acct, kc, hold)
	}
	if acct != nil {
		return db.beginClaimed(ctx, acct, kc, hold, true)
	}
	tx, err := db.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if err := kc.carry(ctx, tx); err != nil {
		tx.Rollback()
		return nil, err
	}
	tx.holdKey(hold)
	return tx, nil
}

// carry queues kc's version read in tx, for its next round trip. The read
// is a check the database makes (a division by zero unless the version is
// still kc's), so that it holds even when it travels with COMMIT, and a
// batch stops at it: nothing after it runs on a lookup that did not hold.
// On SQLite, where nothing is queued, the write connection reads the
// version at once, in the transaction, and the error is ErrKeyChanged if
// the kept lookup did not hold: the transaction has done nothing yet.
func (kc *KeyCheck) carry(ctx context.Context, tx *Tx) error {
	if kc == nil || kc.ran {
		return nil
	}
	if !tx.Pipelined() {
		s, _ := kc.Pending()
		return s.Scan(tx.c.QueryRowContext(ctx, s.SQL))
	}
	tx.Ahead(database.Stmt{SQL: accessVersionIs, Args: []any{kc.version}, What: "store: access version", Scan: func(r database.Row) error {
		var v int64
		err := r.Scan(&v)
		if database.IsCheckFailure(err) {
			kc.ran, kc.held = true, false
			return ErrKeyChanged
		}
		kc.record(v, err)
		return err
	}})
	return nil
}

// KeptConfirmed counts the requests this process answered on a kept key
// lookup that a KeyCheck confirmed.
func (db *DB) KeptConfirmed() int64 { return db.keys.confirmed.Load() }

// accessVersion reads the access version (see LookupKey).
const accessVersion = `SELECT version FROM access_version`

// accessVersionIs reads the access version if it is $1, and fails with a
// division by zero if it is not.
const accessVersionIs = `SELECT version / (CASE WHEN version = $1 THEN 1 ELSE 0 END) FROM access_version`

// ErrKeyChanged is what a statement of ReadChecking's Queries, BeginChecked,
// or the first round trip of a transaction begun with BeginAhead returns
// when the key's kept lookup did not hold: the request must run again as
// usual.
var ErrKeyChanged = errors.New("store: the key's kept lookup is out of date")

// ReadChecking returns the read methods on the read pool, the first
// statement of which carries kc's version read in the same round trip.
// Once that has run, every statement fails with ErrKeyChanged unless the
// kept lookup held.
func (db *DB) ReadChecking(kc *KeyCheck) *Queries {
	return &Queries{c: db.ReadChecked(kc), sec: db.sec}
}

// Pending is the version read, while it has not run (see
// database.Check): a KeyCheck is the check its read carries.
func (kc *KeyCheck) Pending() (database.Stmt, bool) {
	if kc.ran {
		return database.Stmt{}, false
	}
	return database.Stmt{SQL: accessVersion, What: "store: access version", Scan: func(r database.Row) error {
		var v int64
		err := r.Scan(&v)
		kc.record(v, err)
		if err != nil {
			return err
		}
		return kc.Outcome()
	}}, true
}

// Outcome is nil if the kept lookup held, ErrKeyChanged if not.
func (kc *KeyCheck) Outcome() error {
	if kc.held {
		return nil
	}
	return ErrKeyChanged
}

// KeyRun is one run of a request on its key's lookup (see ServeKey): on
// the key's kept lookup, with the check its statements carry, or on a
// lookup made now.
type KeyRun struct {
	db                *DB
	fingerprint, hint string
	// kept is the kept lookup the run is on, check what confirms it; both
	// nil on a lookup made now.
	kept  *rental.KeyOwner
	check *KeyCheck
	// failed is why the check of the run before could not run (no
	// connection, a refusal): what a lookup made now would have met too.
	failed error
	// wantsVersion asks the lookup made now for the data version of the
	// key's landlord too (WantVersion); along is what it read.
	wantsVersion bool
	along        versionRead
}

// ServeKey runs a request made with the key of fingerprint (and the
// account hint) until a run answers, so that the answer always rests on
// what a lookup made now says of the key. On PostgreSQL, and on SQLite for
// a request that writes, it first runs the request on the key's kept
// lookup, if there is one the key may still use at now (see KeptKey): the
// lookup's check then costs no round trip (no read transaction) of its
// own. If the check finds that the lookup no longer holds, run must have
// answered nothing (it answers only once KeyRun.Held says so) and returns
// false, and the request runs again on a lookup made now: what it did on
// its way is run's to keep from counting twice (the API reads the body
// and takes the per-second limit's token once a request).
func (db *DB) ServeKey(fingerprint, hint string, now time.Time, write bool, run func(*KeyRun) bool) {
	k := &KeyRun{db: db, fingerprint: fingerprint, hint: hint}
	if kept, kc := db.KeptKey(fingerprint, hint, now, write); kc != nil && kept.Key.Usable(now) {
		// A key refused at now takes the usual way, where its failure is
		// counted once.
		k.kept, k.check = kept, kc
		if run(k) {
			return
		}
		k.kept, k.check, k.failed = nil, nil, kc.Err()
	}
	run(k)
}

// Owner is the key's owner for this run: the kept lookup, or a lookup made
// now (see LookupKey; shared, not to be changed); after a check that
// could not run, why.
func (k *KeyRun) Owner(ctx context.Context, now time.Time) (*rental.KeyOwner, error) {
	switch {
	case k.kept != nil:
		return k.kept, nil
	case k.failed != nil:
		return nil, k.failed
	}
	if !k.wantsVersion {
		return k.db.LookupKey(ctx, k.fingerprint, k.hint, now)
	}
	return k.db.lookupKey(ctx, k.fingerprint, k.hint, now, &k.along)
}

// WantVersion asks the run's lookup made now to read, in the same
// statement as the access version, the data version of the landlord of
// the key's account, for DataVersion: a read that will be tagged by it
// saves a statement (on SQLite; on PostgreSQL the read's first statement
// carries the check anyway).
func (k *KeyRun) WantVersion() {
	if k != nil {
		k.wantsVersion = true
	}
}

// DataVersion is the landlord's data version (see Queries.DataVersion):
// the one read along with the run's key lookup if it was this landlord's,
// else read with q, whose first statement carries the run's check.
func (k *KeyRun) DataVersion(ctx context.Context, q *Queries, landlordID string) (string, error) {
	if k != nil && k.along.landlordID == landlordID && landlordID != "" {
		return k.along.version, nil
	}
	if kc := k.Check(); kc != nil && !kc.ran {
		return kc.dataVersion(ctx, landlordID)
	}
	return q.DataVersion(ctx, landlordID)
}

// dataVersion reads the landlord's data version (see Queries.DataVersion)
// and the access version in one statement, and makes the check with the
// latter: a statement the fewer than a read carrying the check, and on
// PostgreSQL the whole of a read answered from its tag (a 304, or an
// answer kept under the tag). The statement is shared with the reads of
// requests made at the same time (see versionReads).
func (kc *KeyCheck) dataVersion(ctx context.Context, landlordID string) (string, error) {
	version, writes, clock, err := kc.db.readVersions(ctx, landlordID)
	kc.record(version, err)
	if err != nil {
		return "", err
	}
	if err := kc.Outcome(); err != nil {
		return "", err
	}
	return dataVersion{writes.Int64, clock.Int64}.String(), nil
}

// Kept reports whether the run is on a kept lookup, whose answer counts
// only once Held says so.
func (k *KeyRun) Kept() bool { return k != nil && k.check != nil }

// Check is what the run's statements carry (ReadChecking, BeginChecked,
// BeginAhead, BeginIdempotent); nil on a lookup made now.
func (k *KeyRun) Check() *KeyCheck {
	if k == nil {
		return nil
	}
	return k.check
}

// Held reports whether the run may answer: always on a lookup made now;
// on a kept lookup, once its check confirms it (reading the version on
// its own if no statement took it along).
func (k *KeyRun) Held(ctx context.Context) bool {
	return !k.Kept() || k.check.Confirm(ctx)
}
