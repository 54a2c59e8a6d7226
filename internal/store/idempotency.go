package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

// Idempotency timings: how long a response is kept, and how long a request
// may hold its key before a retry can take over (it died half way).
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
	Claimed    Claim = iota // the caller runs the request and then completes or releases the key
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

// ClaimIdempotency claims k for a request with the given fingerprint (of its
// method, path and body). On Claimed it returns a token that Complete and
// Release must present; on Replay the stored response.
func (db *DB) ClaimIdempotency(ctx context.Context, k IdempotencyKey, fingerprint string) (Claim, int64, *StoredResponse, error) {
	// A new key, the common case, is claimed by one statement; a key seen
	// before (a replay, a mismatch, a takeover, an expired row) is looked at
	// in a transaction.
	now := ms(db.now())
	res, err := db.writer().ExecContext(ctx, `INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $5, $6) ON CONFLICT DO NOTHING`,
		k.ApplicationID, k.AccountID, k.Key, fingerprint, now, now+IdempotencyRetention.Milliseconds())
	if err != nil {
		return 0, 0, nil, fmt.Errorf("store: idempotency claim: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return Claimed, now, nil, nil
	}
	for range 3 {
		claim, token, resp, err := db.tryClaim(ctx, k, fingerprint)
		if err != nil && isUniqueViolation(err) {
			continue // another request inserted the key first: look again
		}
		return claim, token, resp, err
	}
	return InProgress, 0, nil, nil
}

func (db *DB) tryClaim(ctx context.Context, k IdempotencyKey, fingerprint string) (claim Claim, token int64, resp *StoredResponse, err error) {
	err = db.InTx(ctx, func(tx *Tx) error {
		now := ms(tx.Now)
		var fp string
		var done bool
		var locked, expires int64
		var status sql.NullInt64
		var header sql.NullString
		var body []byte
		err := tx.c.QueryRowContext(ctx, `SELECT fingerprint, done, locked_at, status_code, header, body, expires_at
			FROM idempotency_keys WHERE application_id = $1 AND account_id = $2 AND key = $3`, k.ApplicationID, k.AccountID, k.Key).
			Scan(&fp, &done, &locked, &status, &header, &body, &expires)
		fresh := errors.Is(err, sql.ErrNoRows)
		if err != nil && !fresh {
			return fmt.Errorf("store: idempotency lookup: %w", err)
		}
		if !fresh && expires <= now {
			if _, err := tx.c.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE application_id = $1 AND account_id = $2 AND key = $3`,
				k.ApplicationID, k.AccountID, k.Key); err != nil {
				return fmt.Errorf("store: idempotency expire: %w", err)
			}
			fresh = true
		}
		switch {
		case fresh:
			_, err := tx.c.ExecContext(ctx, `INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at)
				VALUES ($1, $2, $3, $4, $5, $5, $6)`, k.ApplicationID, k.AccountID, k.Key, fingerprint, now, now+IdempotencyRetention.Milliseconds())
			if err != nil {
				return err // a unique violation means a concurrent claim won: the caller looks again
			}
			claim, token = Claimed, now
		case fp != fingerprint:
			claim = Mismatch
		case done:
			claim, resp = Replay, &StoredResponse{Status: int(status.Int64), Header: header.String, Body: body}
		case locked > now-IdempotencyStale.Milliseconds():
			claim = InProgress
		default:
			res, err := tx.c.ExecContext(ctx, `UPDATE idempotency_keys SET locked_at = $5
				WHERE application_id = $1 AND account_id = $2 AND key = $3 AND locked_at = $4 AND done = FALSE`,
				k.ApplicationID, k.AccountID, k.Key, locked, max(now, locked+1))
			if err != nil {
				return fmt.Errorf("store: idempotency takeover: %w", err)
			}
			claim, token = InProgress, 0
			if n, _ := res.RowsAffected(); n == 1 {
				claim, token = Claimed, max(now, locked+1)
			}
		}
		return nil
	})
	return claim, token, resp, err
}

// CompleteIdempotency stores the response of a claimed request. Called inside
// the request's own transaction, so the write and its stored response commit
// together. It fails if the claim was lost to a retry that took over.
func (tx *Tx) CompleteIdempotency(ctx context.Context, k IdempotencyKey, token int64, resp StoredResponse) error {
	res, err := tx.c.ExecContext(ctx, `UPDATE idempotency_keys SET done = TRUE, status_code = $5, header = $6, body = $7
		WHERE application_id = $1 AND account_id = $2 AND key = $3 AND locked_at = $4 AND done = FALSE`,
		k.ApplicationID, k.AccountID, k.Key, token, resp.Status, resp.Header, resp.Body)
	if err != nil {
		return fmt.Errorf("store: idempotency complete: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		// This request ran past IdempotencyStale and a retry took the key over:
		// the retry's answer is the one that counts.
		return rental.Errorf(rental.KindConflict, "idempotency_in_progress", "A retry with this Idempotency-Key took over this request; its result is the one kept.")
	}
	return nil
}

// ReleaseIdempotency gives a claimed key back without a stored response (the
// request failed with a 5xx), so a retry runs the request again.
func (db *DB) ReleaseIdempotency(ctx context.Context, k IdempotencyKey, token int64) error {
	_, err := db.writer().ExecContext(ctx, `DELETE FROM idempotency_keys
		WHERE application_id = $1 AND account_id = $2 AND key = $3 AND locked_at = $4 AND done = FALSE`,
		k.ApplicationID, k.AccountID, k.Key, token)
	if err != nil {
		return fmt.Errorf("store: idempotency release: %w", err)
	}
	return nil
}

// PurgeIdempotency deletes stored responses past their retention.
func (db *DB) PurgeIdempotency(ctx context.Context) (int64, error) {
	res, err := db.write.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= $1`, ms(db.now()))
	if err != nil {
		return 0, fmt.Errorf("store: idempotency purge: %w", err)
	}
	return res.RowsAffected()
}
