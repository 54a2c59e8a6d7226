package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// metaDemoApplication names the application `admin create-key` uses when no
// --app is given: the one made for a new database by `serve`.
const metaDemoApplication = "demo_application"

// CreateDeveloper adds a developer on the given plan.
func (tx *Tx) CreateDeveloper(ctx context.Context, name string, plan rental.DeveloperPlan) (*rental.Developer, error) {
	if err := plan.Check(); err != nil {
		return nil, err
	}
	d := &rental.Developer{ID: rental.NewID(rental.PrefixDeveloper), Name: name, Plan: plan, CreatedAt: rental.Time{Time: tx.Now}}
	_, err := tx.c.ExecContext(ctx, `INSERT INTO developers (id, name, plan, created_at) VALUES ($1, $2, $3, $4)`,
		d.ID, d.Name, string(d.Plan), ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: create developer: %w", err)
	}
	return d, nil
}

// SetDeveloperStatus suspends or restores a developer and marks whether an
// invoice is overdue.
func (tx *Tx) SetDeveloperStatus(ctx context.Context, id string, suspended, invoiceOverdue bool) error {
	return tx.execOne(ctx, "developer", id, `UPDATE developers SET suspended = $2, invoice_overdue = $3 WHERE id = $1`, id, suspended, invoiceOverdue)
}

// SetDeveloperSuspended suspends a developer (every key of every one of its
// applications is refused with 403 developer_suspended from the next
// request on) or lifts the suspension; whether an invoice is overdue stays
// as it is.
func (tx *Tx) SetDeveloperSuspended(ctx context.Context, id string, suspended bool) error {
	return tx.execOne(ctx, "developer", id, `UPDATE developers SET suspended = $2 WHERE id = $1`, id, suspended)
}

// ApplicationSpec describes a new application.
type ApplicationSpec struct {
	DeveloperID  string
	Name         string
	Company      string
	Description  string
	Scopes       rental.Scopes
	RedirectURIs []string
}

// CreateApplication adds an application together with its sandbox: a sample
// landlord on the pro plan, the account linking it (granted every scope),
// and the sample data.
func (tx *Tx) CreateApplication(ctx context.Context, spec ApplicationSpec) (*rental.Application, error) {
	if err := rental.CheckRedirectURIs(spec.RedirectURIs); err != nil {
		return nil, err
	}
	uris, err := json.Marshal(append([]string{}, spec.RedirectURIs...))
	if err != nil {
		return nil, fmt.Errorf("store: create application: %w", err)
	}
	app := &rental.Application{
		ID: rental.NewID(rental.PrefixApplication), DeveloperID: spec.DeveloperID, Name: spec.Name, Company: spec.Company,
		Description: spec.Description, Scopes: spec.Scopes, RedirectURIs: spec.RedirectURIs, CreatedAt: rental.Time{Time: tx.Now},
	}
	app.SandboxAccountID = rental.NewID(rental.PrefixAccount)
	_, err = tx.c.ExecContext(ctx, `INSERT INTO applications (id, developer_id, name, company, description, scopes, redirect_uris, sandbox_account_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		app.ID, app.DeveloperID, app.Name, app.Company, app.Description, app.Scopes.String(), string(uris), app.SandboxAccountID, ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: create application: %w", err)
	}
	ll, err := tx.createLandlord(ctx, "Sandbox landlord of "+spec.Name, rental.LandlordPro, true, true)
	if err != nil {
		return nil, err
	}
	if err := tx.insertAccount(ctx, app.SandboxAccountID, app.ID, ll, true, rental.AllScopes); err != nil {
		return nil, err
	}
	sandbox, err := tx.GetAccount(ctx, app.ID, app.SandboxAccountID)
	if err != nil {
		return nil, err
	}
	return app, tx.seedSandbox(ctx, sandbox)
}

// SetApplicationDisabled turns all of an application's keys off or on.
func (tx *Tx) SetApplicationDisabled(ctx context.Context, id string, disabled bool) error {
	return tx.execOne(ctx, "application", id, `UPDATE applications SET disabled = $2 WHERE id = $1`, id, disabled)
}

// SetDemoApplication records the application made for a new database. It
// fails if one is recorded already (another process bootstrapped first).
func (tx *Tx) SetDemoApplication(ctx context.Context, appID string) error {
	_, err := tx.c.ExecContext(ctx, `INSERT INTO meta (name, value) VALUES ($1, $2)`, metaDemoApplication, appID)
	if err != nil {
		return fmt.Errorf("store: set demo application: %w", err)
	}
	return nil
}

// DemoApplication returns the ID of the application made for a new database.
func (q *Queries) DemoApplication(ctx context.Context) (string, error) {
	var id string
	err := q.c.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = $1`, metaDemoApplication).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", rental.NotFound("demo application", "")
	}
	if err != nil {
		return "", fmt.Errorf("store: demo application: %w", err)
	}
	return id, nil
}

// CountDevelopers tells whether the database is new.
func (q *Queries) CountDevelopers(ctx context.Context) (int, error) {
	var n int
	if err := q.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM developers`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count developers: %w", err)
	}
	return n, nil
}

// GetApplication returns one application.
func (q *Queries) GetApplication(ctx context.Context, id string) (*rental.Application, error) {
	var app rental.Application
	var scopes, uris string
	var created int64
	err := q.c.QueryRowContext(ctx, `SELECT id, developer_id, name, company, description, disabled, scopes, redirect_uris, sandbox_account_id, created_at
		FROM applications WHERE id = $1`, id).
		Scan(&app.ID, &app.DeveloperID, &app.Name, &app.Company, &app.Description, &app.Disabled, &scopes, &uris, &app.SandboxAccountID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("application", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get application: %w", err)
	}
	app.Scopes, _ = rental.ParseScopes(scopes)
	if err := json.Unmarshal([]byte(uris), &app.RedirectURIs); err != nil {
		return nil, fmt.Errorf("store: application %s redirect URIs: %w", id, err)
	}
	app.CreatedAt = rental.UnixMilli(created)
	return &app, nil
}

// CreateLandlord adds a real landlord on a plan, with QR payments as the
// plan has them.
func (tx *Tx) CreateLandlord(ctx context.Context, name string, plan rental.LandlordPlan) (string, error) {
	if err := plan.Check(); err != nil {
		return "", err
	}
	return tx.createLandlord(ctx, name, plan, plan.QRPayments(), false)
}

func (tx *Tx) createLandlord(ctx context.Context, name string, plan rental.LandlordPlan, qr, sandbox bool) (string, error) {
	id := rental.NewID(rental.PrefixLandlord)
	_, err := tx.c.ExecContext(ctx, `INSERT INTO landlords (id, name, plan, qr_payments, sandbox, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, id, name, string(plan), qr, sandbox, ms(tx.Now))
	if err != nil {
		return "", fmt.Errorf("store: create landlord: %w", err)
	}
	return id, nil
}

// SetLandlordPlan changes a landlord's plan; QR payments follow it.
func (tx *Tx) SetLandlordPlan(ctx context.Context, landlordID string, plan rental.LandlordPlan) error {
	if err := plan.Check(); err != nil {
		return err
	}
	return tx.execOne(ctx, "landlord", landlordID, `UPDATE landlords SET plan = $2, qr_payments = $3, updated_at = $4 WHERE id = $1`,
		landlordID, string(plan), plan.QRPayments(), ms(tx.Now))
}

func (tx *Tx) insertAccount(ctx context.Context, id, appID, landlordID string, sandbox bool, scopes rental.Scopes) error {
	_, err := tx.c.ExecContext(ctx, `INSERT INTO accounts (id, application_id, landlord_id, sandbox, scopes, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, id, appID, landlordID, sandbox, scopes.String(), ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: create account: %w", err)
	}
	return nil
}

// LinkAccount records a landlord's approval of an application: the link
// is made, or its grant replaced, with the approved scopes the application
// still requests (rental.ReplaceGrant). A landlord who linked before (and
// was disconnected) gets the same account ID back, active again. Either
// way the application hears of it: an account.linked event with the
// account as it stands now.
func (tx *Tx) LinkAccount(ctx context.Context, appID, landlordID string, approved rental.Scopes) (*rental.Account, error) {
	app, err := tx.GetApplication(ctx, appID)
	if err != nil {
		return nil, err
	}
	var sandbox bool
	err = tx.c.QueryRowContext(ctx, `SELECT sandbox FROM landlords WHERE id = $1`, landlordID).Scan(&sandbox)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("landlord", landlordID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: link account: %w", err)
	}
	if err := rental.CheckLinkable(app, sandbox); err != nil {
		return nil, err
	}
	if err := tx.Claim(ctx, &rental.Account{LandlordID: landlordID}); err != nil {
		return nil, err
	}
	grant := rental.ReplaceGrant(app.Scopes, approved)
	var id string
	err = tx.c.QueryRowContext(ctx, `SELECT id FROM accounts WHERE application_id = $1 AND landlord_id = $2`, appID, landlordID).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		id = rental.NewID(rental.PrefixAccount)
		if err := tx.insertAccount(ctx, id, appID, landlordID, false, grant); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, fmt.Errorf("store: link account: %w", err)
	default:
		_, err = tx.c.ExecContext(ctx, `UPDATE accounts SET scopes = $2, revoked_at = NULL, updated_at = $3 WHERE id = $1`, id, grant.String(), ms(tx.Now))
		if err != nil {
			return nil, fmt.Errorf("store: relink account: %w", err)
		}
	}
	acct, err := tx.GetAccount(ctx, appID, id)
	if err != nil {
		return nil, err
	}
	return acct, tx.recordAccountEvent(ctx, acct, rental.EventAccountLinked, app.Scopes)
}

// RevokeAccount ends a link (see rental.Account.Unlink); the landlord's
// data stays, and the application hears of it (account.unlinked).
func (tx *Tx) RevokeAccount(ctx context.Context, appID, accountID string) error {
	acct, err := tx.GetAccount(ctx, appID, accountID)
	if err != nil {
		return err
	}
	if change, err := acct.Unlink(); !change {
		return err
	}
	app, err := tx.GetApplication(ctx, appID)
	if err != nil {
		return err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return err
	}
	res, err := tx.c.ExecContext(ctx, `UPDATE accounts SET revoked_at = $3, updated_at = $3
		WHERE application_id = $1 AND id = $2 AND revoked_at IS NULL`, appID, accountID, ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: revoke account: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil // ended meanwhile, by a transaction that held the landlord first
	}
	if acct, err = tx.GetAccount(ctx, appID, accountID); err != nil {
		return err
	}
	return tx.recordAccountEvent(ctx, acct, rental.EventAccountUnlinked, app.Scopes)
}

const accountColumns = `a.id, a.application_id, a.landlord_id, l.name, l.plan, l.qr_payments, a.sandbox,
	a.revoked_at, a.scopes, a.created_at, a.updated_at`

func scanAccount(sc *scanner, a *rental.Account) error {
	*a = rental.Account{}
	dest, finish := accountDest(a)
	err := sc.Scan(dest...)
	finish()
	return err
}

// accountDest returns the scan destinations of accountColumns for a, and
// what completes a once they are scanned.
func accountDest(a *rental.Account) ([]any, func()) {
	var scopes, plan string
	var revoked sql.NullInt64
	var created, updated int64
	return []any{&a.ID, &a.ApplicationID, &a.LandlordID, &a.Name, &plan, &a.QRPayments, &a.Sandbox, &revoked, &scopes, &created, &updated}, func() {
		a.Plan = rental.LandlordPlan(plan)
		a.Revoked = revoked.Valid
		a.Granted, _ = rental.ParseScopes(scopes)
		a.CreatedAt, a.UpdatedAt = rental.UnixMilli(created), rental.UnixMilli(updated)
	}
}

// GetAccount returns an account of the application, revoked or not; an
// account of another application is not found.
func (q *Queries) GetAccount(ctx context.Context, appID, accountID string) (*rental.Account, error) {
	return one(ctx, q, "account", accountID, `SELECT `+accountColumns+`
		FROM accounts a JOIN landlords l ON l.id = a.landlord_id
		WHERE a.application_id = $1 AND a.id = $2`, []any{appID, accountID}, scanAccount)
}

// HasLiveAccount reports whether any real landlord is linked to the
// application: live keys exist only after that.
func (q *Queries) HasLiveAccount(ctx context.Context, appID string) (bool, error) {
	var n int
	err := q.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM accounts WHERE application_id = $1 AND sandbox = FALSE AND revoked_at IS NULL`, appID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: live accounts: %w", err)
	}
	return n > 0, nil
}

// Usage counts an account's properties and rooms against its capacity.
func (q *Queries) Usage(ctx context.Context, acct *rental.Account) (rental.Capacity, error) {
	var u rental.Capacity
	err := q.c.QueryRowContext(ctx, `SELECT
			(SELECT COUNT(*) FROM properties WHERE landlord_id = $1),
			(SELECT COUNT(*) FROM rooms WHERE landlord_id = $1)`, acct.LandlordID).Scan(&u.Properties, &u.Rooms)
	if err != nil {
		return u, fmt.Errorf("store: usage: %w", err)
	}
	return u, nil
}

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

// execOne runs an update that must touch exactly one row, else not found.
func (tx *Tx) execOne(ctx context.Context, what, id, query string, args ...any) error {
	res, err := tx.c.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("store: update %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return rental.NotFound(what, id)
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func optTime(v sql.NullInt64) *rental.Time {
	if !v.Valid {
		return nil
	}
	t := rental.UnixMilli(v.Int64)
	return &t
}
