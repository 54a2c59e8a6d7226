package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// Idempotency timings: how long a response is kept, and how long a key
// held by an earlier version's separate claim stays held before a retry
// takes it over (its request died half way).
const (
	IdempotencyRetention = 24 * time.Hour
	IdempotencyStale     = 60 * time.Second
)

// IdempotencyKey names one stored request: keys are scoped to the
// application and the account.
type IdempotencyKey struct {
	ApplicationID string
	AccountID     string
	Key           string
}

// Claim is the outcome of claiming an idempotency key.
type Claim int

// The outcomes of ClaimIdempotency.
const (
	Claimed    Claim = iota // the caller runs the request and completes the key in the same transaction
	Replay                  // a stored response exists: send it
	InProgress              // the first request with this key is still running
	Mismatch                // the key was used for a different request
)

// StoredResponse is a response kept for replay, byte for byte.
type StoredResponse struct {
	Status int
	Header string // JSON object of the headers worth replaying
	Body   []byte
}

// ClaimIdempotency claims k, in the request's own transaction, for a
// request with the given fingerprint (of its method, path and body). On
// Claimed it returns a token that CompleteIdempotency must present before
// the same transaction commits; on Replay the stored response.
//
// The claim commits or rolls back with the request's work, so a key is
// never left held by a request that failed or a process that died, and
// it costs no commit of its own. Until then no other transaction sees the
// claim: one begun with BeginIdempotent for the same key is refused before
// it gets here (ErrKeyBusy); any other waits at the insert until this one
// ends (the unique index row is taken), then finds the stored response. A
// row that is not done was left by a version that claimed in a transaction
// of its own: while fresh it is InProgress, once stale it is taken over.
func (tx *Tx) ClaimIdempotency(ctx context.Context, k IdempotencyKey, fingerprint string) (Claim, int64, *StoredResponse, error) {
	now := ms(tx.Now)
	// Three looks: a row can go (purged, expired) between the insert that
	// met it and the select, and come back from another request.
	for range 3 {
		res, err := tx.c.ExecContext(ctx, `INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $5, $6) ON CONFLICT DO NOTHING`, k.ApplicationID, k.AccountID, k.Key, fingerprint, now, now+IdempotencyRetention.Milliseconds())
		if err != nil {
			return 0, 0, nil, fmt.Errorf("store: idempotency claim: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return Claimed, now, nil, nil
		}
		var fp string
		var done bool
		var locked, expires int64
		var status sql.NullInt64
		var header sql.NullString
		var body []byte
		err = tx.c.QueryRowContext(ctx, `SELECT fingerprint, done, locked_at, status_code, header, body, expires_at
			FROM idempotency_keys WHERE application_id = $1 AND account_id = $2 AND key = $3`, k.ApplicationID, k.AccountID, k.Key).
			Scan(&fp, &done, &locked, &status, &header, &body, &expires)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, 0, nil, fmt.Errorf("store: idempotency lookup: %w", err)
		}
		switch {
		case expires <= now:
			if _, err := tx.c.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE application_id = $1 AND account_id = $2 AND key = $3 AND expires_at = $4`,
				k.ApplicationID, k.AccountID, k.Key, expires); err != nil {
				return 0, 0, nil, fmt.Errorf("store: idempotency expire: %w", err)
			}
			continue
		case fp != fingerprint:
			return Mismatch, 0, nil, nil
		case done:
			return Replay, 0, &StoredResponse{Status: int(status.Int64), Header: header.String, Body: body}, nil
		case locked > now-IdempotencyStale.Milliseconds():
			return InProgress, 0, nil, nil
		}
		token := max(now, locked+1)
		res, err = tx.c.ExecContext(ctx, `UPDATE idempotency_keys SET locked_at = $5
			WHERE application_id = $1 AND account_id = $2 AND key = $3 AND locked_at = $4 AND done = FALSE`,
			k.ApplicationID, k.AccountID, k.Key, locked, token)
		if err != nil {
			return 0, 0, nil, fmt.Errorf("store: idempotency takeover: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return Claimed, token, nil, nil
		}
	}
	return InProgress, 0, nil, nil
}

// BeginIdempotent is BeginChecked, or with ahead BeginAhead, for a write
// with the Idempotency-Key k, which its transaction claims: on PostgreSQL
// the transaction first holds k, before anything else can make it wait
// (the landlord's lock), and while another transaction holds it, in this
// process or any other, it fails at once with ErrKeyBusy (its first round
// trip does: at once for BeginChecked, with the first statement for
// BeginAhead) and nothing after the hold runs. The specification answers
// such a request 409 idempotency_in_progress rather than make it wait for
// the first request's answer, and the claim itself, made in the request's
// own transaction (see ClaimIdempotency), is seen by no one until it
// commits.
//
// The hold is a PostgreSQL advisory lock for the transaction on a hash of
// k: it costs no round trip of its own (it travels with the claims), and
// it ends with the transaction, also when the process or its connection
// dies, so a retry of a request that stopped half way runs again at once.
// On SQLite, where one process serves the database file and its writes
// run one at a time, it is BeginChecked: the API's own list of the keys in
// use in the process refuses a second request first.
func (db *DB) BeginIdempotent(ctx context.Context, acct *rental.Account, kc *KeyCheck, k IdempotencyKey, ahead bool) (*Tx, error) {
	if ahead {
		return db.beginAhead(ctx, acct, kc, &k)
	}
	return db.beginChecked(ctx, acct, kc, &k)
}

// ErrKeyBusy is the failure of a transaction begun with BeginIdempotent
// whose Idempotency-Key another transaction holds: a request with it still
// runs. It is also the answer (409 idempotency_in_progress), never kept.
var ErrKeyBusy = rental.IdempotencyInProgress()

// holdKey queues the hold of k, if not nil, for the transaction's next
// round trip on PostgreSQL (see BeginIdempotent). The hold is a check the
// database makes (a division by zero unless the lock was free), so a batch
// stops at it.
func (tx *Tx) holdKey(k *IdempotencyKey) {
	if k == nil {
		return
	}
	tx.Ahead(database.Stmt{SQL: holdKey, Args: []any{k.lockID()}, What: "store: idempotency hold", Lost: ErrKeyBusy, Checked: true})
}

// holdKey takes the advisory lock $1 for the transaction if it is free,
// and fails with a division by zero if it is not.
const holdKey = `SELECT 1 / (CASE WHEN pg_try_advisory_xact_lock($1) THEN 1 ELSE 0 END)`

// lockID is k's advisory lock: 64 bits of a hash of k. The service's only
// other advisory lock is migrationLock; a collision, with it or between
// two keys in use at once, would only answer a request 409 to retry.
func (k IdempotencyKey) lockID() int64 {
	sum := sha256.Sum256([]byte("idempotency key\x00" + k.ApplicationID + "\x00" + k.AccountID + "\x00" + k.Key))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// ErrNotClaimed is the error of a transaction whose claim made ahead did
// not hold: the Idempotency-Key it claimed ahead (ClaimIdempotencyAhead)
// had a row at its commit, or its landlord's claim ahead (BeginAhead)
// found the clock moved on by another process. It must be rolled back, and the request
// run again with the claims made as usual (BeginChecked, and
// ClaimIdempotency to say what to answer).
var ErrNotClaimed = errors.New("store: a claim made ahead did not hold")

// ClaimIdempotencyAhead claims k for a request with the given fingerprint
// as if the key were free, as it is for all but retries: nothing is sent
// now, and CompleteIdempotency inserts the key's row, done, with the
// stored response, at Commit; if the key has a row by then (the request
// is a retry, or another process's request with it committed first)
// Commit fails with ErrNotClaimed, the work is rolled back, and the
// request runs again claiming as usual (ClaimIdempotency), which says what
// to answer. A key's one row write is the insert of its answer: a claim
// inserted first and completed later wrote the row twice, though no other
// transaction could ever see it claimed (a claim is seen by no one until
// it commits, see ClaimIdempotency, and on PostgreSQL the key's hold,
// BeginIdempotent, keeps out other requests with it meanwhile). It returns
// the token CompleteIdempotency presents.
func (tx *Tx) ClaimIdempotencyAhead(k IdempotencyKey, fingerprint string) int64 {
	now := ms(tx.Now)
	tx.keyAhead = &keyClaim{key: k, fingerprint: fingerprint, token: now}
	return now
}

// keyClaim is an Idempotency-Key claimed ahead (see ClaimIdempotencyAhead).
type keyClaim struct {
	key         IdempotencyKey
	fingerprint string
	token       int64
}

// CompleteIdempotency stores the response of a claimed request. Called inside
// the request's own transaction, so the write and its stored response commit
// together: the statement runs at Commit, with the others left for it (see
// database.Tx.AtCommit). A key claimed ahead is inserted then, and Commit
// fails with ErrNotClaimed if it has a row (see ClaimIdempotencyAhead);
// one claimed as usual is completed, and Commit fails if the claim was lost
// to a retry that took over.
func (tx *Tx) CompleteIdempotency(ctx context.Context, k IdempotencyKey, token int64, resp StoredResponse) error {
	if a := tx.keyAhead; a != nil && a.key == k && a.token == token {
		tx.AtCommit(database.Stmt{
			SQL: `INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at,
				done, status_code, header, body)
			VALUES ($1, $2, $3, $4, $5, $5, $6, TRUE, $7, $8, $9) ON CONFLICT DO NOTHING`,
			Args: []any{k.ApplicationID, k.AccountID, k.Key, a.fingerprint, token, token + IdempotencyRetention.Milliseconds(),
				resp.Status, resp.Header, resp.Body},
			What: "store: idempotency claim and answer",
			Lost: ErrNotClaimed,
		})
		return nil
	}
	tx.AtCommit(database.Stmt{
		SQL: `UPDATE idempotency_keys SET done = TRUE, status_code = $5, header = $6, body = $7
		WHERE application_id = $1 AND account_id = $2 AND key = $3 AND locked_at = $4 AND done = FALSE`,
		Args: []any{k.ApplicationID, k.AccountID, k.Key, token, resp.Status, resp.Header, resp.Body},
		What: "store: idempotency complete",
		// Lost only if this request ran past IdempotencyStale and a retry
		// took the key over: the retry's answer is the one that counts.
		Lost: rental.Errorf(rental.KindConflict, "idempotency_in_progress", "A retry with this Idempotency-Key took over this request; its result is the one kept."),
	})
	return nil
}

// PurgeIdempotency deletes stored responses past their retention.
func (db *DB) PurgeIdempotency(ctx context.Context) (int64, error) {
	return db.purge(ctx, "idempotency keys", "idempotency_keys", "expires_at <= $1", ms(db.now()))
}
