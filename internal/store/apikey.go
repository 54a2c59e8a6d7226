package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// NewKey is a key to store: its settings, and the fingerprint and visible
// prefix of a secret the caller generated (the secret itself never arrives).
type NewKey struct {
	ApplicationID string
	Name          string
	Mode          rental.Mode
	Scopes        rental.Scopes
	AccountID     string
	ExpiresAt     *time.Time
	Fingerprint   string
	Prefix        string
	Last4         string // rental.KeyLast4 of the secret
}

// Minted is k with what is stored of the minted key m: its fingerprint,
// visible prefix and last four characters.
func (k NewKey) Minted(m rental.MintedKey) NewKey {
	k.Fingerprint, k.Prefix, k.Last4 = m.Fingerprint, m.Prefix, m.Last4
	return k
}

// CreateAPIKey stores a key after checking the rules of keys: scopes within
// the application's, live keys only once a landlord is linked, and a bound
// account that is a live account of this application.
func (tx *Tx) CreateAPIKey(ctx context.Context, k NewKey) (*rental.APIKey, error) {
	app, err := tx.GetApplication(ctx, k.ApplicationID)
	if err != nil {
		return nil, err
	}
	req := rental.KeyRequest{Mode: k.Mode, Scopes: k.Scopes, AppScopes: app.Scopes, BoundID: k.AccountID}
	if k.Mode == rental.ModeLive {
		if req.Linked, err = tx.HasLiveAccount(ctx, k.ApplicationID); err != nil {
			return nil, err
		}
		if k.AccountID != "" {
			if req.Bound, err = tx.GetAccount(ctx, k.ApplicationID, k.AccountID); err != nil {
				return nil, err
			}
		}
	}
	if err := rental.CheckKey(req); err != nil {
		return nil, err
	}
	key := &rental.APIKey{
		ID: rental.NewID(rental.PrefixAPIKey), ApplicationID: k.ApplicationID, Name: k.Name, Mode: k.Mode,
		Prefix: k.Prefix, Last4: k.Last4, Scopes: k.Scopes, AccountID: k.AccountID, CreatedAt: rental.Time{Time: tx.Now},
	}
	if k.ExpiresAt != nil {
		key.ExpiresAt = &rental.Time{Time: *k.ExpiresAt}
	}
	if err := tx.insertKey(ctx, key, k.Fingerprint); err != nil {
		return nil, err
	}
	return key, nil
}

func (tx *Tx) insertKey(ctx context.Context, key *rental.APIKey, fingerprint string) error {
	var expires *time.Time
	if key.ExpiresAt != nil {
		expires = &key.ExpiresAt.Time
	}
	_, err := tx.c.ExecContext(ctx, `INSERT INTO api_keys (id, application_id, name, mode, prefix, last4, fingerprint, scopes, account_id, expires_at, rotated_from, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		key.ID, key.ApplicationID, key.Name, string(key.Mode), key.Prefix, key.Last4, fingerprint, key.Scopes.String(),
		nullString(key.AccountID), nullMs(expires), nullString(key.RotatedFrom), ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: create key: %w", err)
	}
	return nil
}

// RotateAPIKey replaces a key with a new one of the same settings. The old
// key keeps working for rental.KeyRotationGraceHours (or until its own
// earlier expiry), so clients can switch over without downtime. prefix
// and last4 are the new secret's visible parts.
func (tx *Tx) RotateAPIKey(ctx context.Context, keyID, fingerprint, prefix, last4 string) (*rental.APIKey, error) {
	old, err := tx.getKey(ctx, `k.id = $1`, keyID)
	if err != nil {
		return nil, err
	}
	key, expiryChanged, err := old.Rotate(rental.NewID(rental.PrefixAPIKey), prefix, last4, tx.Now)
	if err != nil {
		return nil, err
	}
	if expiryChanged {
		if _, err := tx.c.ExecContext(ctx, `UPDATE api_keys SET expires_at = $2 WHERE id = $1`, keyID, ms(old.ExpiresAt.Time)); err != nil {
			return nil, fmt.Errorf("store: rotate key: %w", err)
		}
	}
	if err := tx.insertKey(ctx, &key, fingerprint); err != nil {
		return nil, err
	}
	return &key, nil
}

// RevokeAPIKey stops a key from the next request on. Revoking a revoked key
// changes nothing (it keeps the time it was first revoked); an unknown key
// is not found.
func (tx *Tx) RevokeAPIKey(ctx context.Context, keyID string) error {
	return tx.execOne(ctx, "key", keyID, `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, keyID, ms(tx.Now))
}

const keyColumns = `k.id, k.application_id, k.name, k.mode, k.prefix, k.last4, k.scopes, k.account_id, k.expires_at, k.revoked_at, k.rotated_from, k.created_at, k.last_used_at`

func scanKey(sc interface{ Scan(...any) error }, k *rental.APIKey, more ...any) error {
	var mode, scopes string
	var account, rotated sql.NullString
	var expires, revoked, used sql.NullInt64
	var created int64
	err := sc.Scan(append([]any{&k.ID, &k.ApplicationID, &k.Name, &mode, &k.Prefix, &k.Last4, &scopes, &account, &expires, &revoked, &rotated, &created, &used}, more...)...)
	if err != nil {
		return err
	}
	k.Mode, k.AccountID, k.RotatedFrom = rental.Mode(mode), account.String, rotated.String
	k.Scopes, _ = rental.ParseScopes(scopes)
	k.ExpiresAt, k.RevokedAt, k.LastUsedAt = optTime(expires), optTime(revoked), optTime(used)
	k.CreatedAt = rental.UnixMilli(created)
	return nil
}

// APIKeys lists an application's keys, revoked and expired ones included,
// the newest first: what the people who manage its keys see. An unknown
// application has none.
func (q *Queries) APIKeys(ctx context.Context, appID string) ([]rental.APIKey, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys k WHERE k.application_id = $1 ORDER BY k.created_at DESC, k.id`, appID)
	if err != nil {
		return nil, fmt.Errorf("store: list keys: %w", err)
	}
	defer rows.Close()
	keys := []rental.APIKey{}
	for rows.Next() {
		var k rental.APIKey
		if err := scanKey(rows, &k); err != nil {
			return nil, fmt.Errorf("store: list keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list keys: %w", err)
	}
	return keys, nil
}

func (q *Queries) getKey(ctx context.Context, where string, arg any) (*rental.APIKey, error) {
	var k rental.APIKey
	err := scanKey(q.c.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys k WHERE `+where, arg), &k)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("key", fmt.Sprint(arg))
	}
	if err != nil {
		return nil, fmt.Errorf("store: get key: %w", err)
	}
	return &k, nil
}

// KeyByFingerprint finds the key with this fingerprint and its owners, in
// one indexed query (it runs on every request). The developer's plan is the
// one in effect at now (a downgrade counts from its 1st on without anything
// having written it), and InvoiceOverdue is set while an invoice is open
// past its due time at now, or the operator's flag is set: both flip on
// time, on every process, no job needed. Whether the key is expired or
// revoked is for the caller to judge against its clock.
func (q *Queries) KeyByFingerprint(ctx context.Context, fingerprint string, now time.Time) (*rental.KeyOwner, error) {
	return q.KeyForRequest(ctx, fingerprint, "", now)
}

// joinedAccountColumns are accountColumns from an outer join: absent, the
// account reads as an empty ID.
const joinedAccountColumns = `COALESCE(a.id, ''), COALESCE(a.application_id, ''), COALESCE(a.landlord_id, ''), COALESCE(l.name, ''),
	COALESCE(l.plan, ''), COALESCE(l.qr_payments, FALSE), COALESCE(a.sandbox, FALSE),
	a.revoked_at, COALESCE(a.scopes, ''), COALESCE(a.created_at, 0), COALESCE(a.updated_at, 0)`

// KeyForRequest is KeyByFingerprint that also reads, in the same query (one
// round trip on every request instead of two), the account a request with
// this key most likely acts on: the one it names (accountHint, the
// SERVICE-Account header), else the key's bound account, else a test key's
// sandbox. KeyOwner.Account is that account of the key's application when it
// exists. Which account the request may act on is rental's to decide
// (KeyOwner.Target); when that is not this one, the caller looks it up.
func (q *Queries) KeyForRequest(ctx context.Context, fingerprint, accountHint string, now time.Time) (*rental.KeyOwner, error) {
	l, err := q.lookupKey(ctx, fingerprint, accountHint, now)
	return l.owner, err
}

// keyLookup is what KeyForRequest found, with what says how long it holds:
// the access version it read (see migration 00011), and when the passing
// of time alone changes it (an invoice falling due, a plan change taking
// effect), from the instant of the lookup.
type keyLookup struct {
	owner       *rental.KeyOwner
	version     int64
	from, until int64 // ms
}

func (q *Queries) lookupKey(ctx context.Context, fingerprint, accountHint string, now time.Time) (keyLookup, error) {
	return scanKeyOwner(q.c.QueryRowContext(ctx, keyForRequest, fingerprint, accountHint, ms(now)), now)
}

// keyForRequest is KeyForRequest's query: $1 the fingerprint, $2 the
// account hint, $3 now (ms).
const keyForRequest = `SELECT ` + keyColumns + `,
		ap.developer_id, ap.name, ap.disabled, ap.scopes, ap.sandbox_account_id,
		d.plan, d.pending_plan, d.pending_from, d.suspended,
		d.invoice_overdue OR EXISTS (SELECT 1 FROM invoices i WHERE i.developer_id = d.id AND i.status = 'open' AND i.due_at < $3),
		(SELECT MIN(i.due_at) FROM invoices i WHERE i.developer_id = d.id AND i.status = 'open' AND i.due_at >= $3),
		(SELECT version FROM access_version),
		d.created_at, ` + joinedAccountColumns + `
	FROM api_keys k JOIN applications ap ON ap.id = k.application_id JOIN developers d ON d.id = ap.developer_id
	LEFT JOIN accounts a ON a.application_id = ap.id
		AND a.id = COALESCE(NULLIF($2, ''), k.account_id, CASE WHEN k.mode = 'test' THEN ap.sandbox_account_id END)
	LEFT JOIN landlords l ON l.id = a.landlord_id
	WHERE k.fingerprint = $1`

// scanKeyOwner reads the row of keyForRequest run at now; no row is
// rental's not found.
func scanKeyOwner(row database.Row, now time.Time) (keyLookup, error) {
	var o rental.KeyOwner
	var appScopes, plan string
	var pending sql.NullString
	var from, nextDue sql.NullInt64
	var created int64
	var acct rental.Account
	l := keyLookup{owner: &o, from: ms(now), until: math.MaxInt64}
	acctDest, finishAcct := accountDest(&acct)
	err := scanKey(row, &o.Key, append([]any{&o.App.DeveloperID, &o.App.Name, &o.App.Disabled, &appScopes, &o.App.SandboxAccountID,
		&plan, &pending, &from, &o.Developer.Suspended, &o.Developer.InvoiceOverdue, &nextDue, &l.version, &created}, acctDest...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return keyLookup{}, rental.NotFound("key", "")
	}
	if err != nil {
		return keyLookup{}, fmt.Errorf("store: key lookup: %w", err)
	}
	if nextDue.Valid {
		l.until = nextDue.Int64
	}
	if from.Valid && from.Int64 > l.from {
		l.until = min(l.until, from.Int64)
	}
	o.App.ID = o.Key.ApplicationID
	o.App.Scopes, _ = rental.ParseScopes(appScopes)
	st := rental.PlanState{Plan: rental.DeveloperPlan(plan), Pending: rental.DeveloperPlan(pending.String), PendingFrom: optTime(from)}
	o.Developer.ID, o.Developer.Plan, o.Developer.CreatedAt = o.App.DeveloperID, st.At(now), rental.UnixMilli(created)
	if finishAcct(); acct.ID != "" {
		o.Account = &acct
	}
	return l, nil
}
