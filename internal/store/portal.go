package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

// ApplicationSummary is one application in its developer's list, with what
// the list counts: keys that still work and real landlords linked now.
type ApplicationSummary struct {
	App      rental.Application
	Keys     int
	Accounts int
}

// ApplicationsOf lists a developer's applications, the newest first, with
// their counts at now. Scopes and redirect URIs are not read (the list does
// not show them).
func (q *Queries) ApplicationsOf(ctx context.Context, developerID string, now time.Time) ([]ApplicationSummary, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT a.id, a.developer_id, a.name, a.company, a.description, a.disabled, a.sandbox_account_id, a.created_at,
			(SELECT COUNT(*) FROM api_keys k WHERE k.application_id = a.id AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2)),
			(SELECT COUNT(*) FROM accounts c WHERE c.application_id = a.id AND c.sandbox = FALSE AND c.revoked_at IS NULL)
		FROM applications a WHERE a.developer_id = $1 ORDER BY a.created_at DESC, a.id`, developerID, ms(now))
	if err != nil {
		return nil, fmt.Errorf("store: applications: %w", err)
	}
	defer rows.Close()
	var out []ApplicationSummary
	for rows.Next() {
		var s ApplicationSummary
		var created int64
		if err := rows.Scan(&s.App.ID, &s.App.DeveloperID, &s.App.Name, &s.App.Company, &s.App.Description, &s.App.Disabled,
			&s.App.SandboxAccountID, &created, &s.Keys, &s.Accounts); err != nil {
			return nil, fmt.Errorf("store: applications: %w", err)
		}
		s.App.CreatedAt = rental.UnixMilli(created)
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: applications: %w", err)
	}
	return out, nil
}

// UpdateApplication replaces what the developer decides about an
// application. A scope added is used once a landlord approves it; a scope
// removed is refused from the next request on, and taken out of every
// grant, so adding it back later needs the landlords' approval again.
func (tx *Tx) UpdateApplication(ctx context.Context, appID string, set rental.ApplicationSettings) error {
	if err := set.Check(); err != nil {
		return err
	}
	uris, err := json.Marshal(append([]string{}, set.RedirectURIs...))
	if err != nil {
		return fmt.Errorf("store: update application: %w", err)
	}
	if err := tx.execOne(ctx, "application", appID, `UPDATE applications SET name = $2, company = $3, description = $4, scopes = $5, redirect_uris = $6
		WHERE id = $1`, appID, set.Name, set.Company, set.Description, set.Scopes.String(), string(uris)); err != nil {
		return err
	}
	return tx.narrowGrants(ctx, appID, set.Scopes)
}

// narrowGrants takes scopes the application no longer asks for out of the
// landlords' grants of its real accounts (the sandbox grants everything).
func (tx *Tx) narrowGrants(ctx context.Context, appID string, requested rental.Scopes) error {
	rows, err := tx.c.QueryContext(ctx, `SELECT id, scopes FROM accounts WHERE application_id = $1 AND sandbox = FALSE`, appID)
	if err != nil {
		return fmt.Errorf("store: grants: %w", err)
	}
	narrowed := map[string]string{}
	for rows.Next() {
		var id, scopes string
		if err := rows.Scan(&id, &scopes); err != nil {
			rows.Close()
			return fmt.Errorf("store: grants: %w", err)
		}
		granted, _ := rental.ParseScopes(scopes)
		if kept := granted.Intersect(requested); kept.String() != granted.String() {
			narrowed[id] = kept.String()
		}
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("store: grants: %w", err)
	}
	for id, scopes := range narrowed {
		if _, err := tx.c.ExecContext(ctx, `UPDATE accounts SET scopes = $2 WHERE id = $1`, id, scopes); err != nil {
			return fmt.Errorf("store: narrow grant: %w", err)
		}
	}
	return nil
}

// GetAPIKey returns a key of the application; a key of another application
// is not found.
func (q *Queries) GetAPIKey(ctx context.Context, appID, keyID string) (*rental.APIKey, error) {
	var k rental.APIKey
	err := scanKey(q.c.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys k WHERE k.application_id = $1 AND k.id = $2`, appID, keyID), &k)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("key", keyID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get key: %w", err)
	}
	return &k, nil
}

// LiveAccounts lists the real landlords ever linked to the application,
// those whose link has ended included (Revoked), in the order they first
// linked.
func (q *Queries) LiveAccounts(ctx context.Context, appID string) ([]rental.Account, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT `+accountColumns+`
		FROM accounts a JOIN landlords l ON l.id = a.landlord_id
		WHERE a.application_id = $1 AND a.sandbox = FALSE ORDER BY a.created_at, a.id`, appID)
	if err != nil {
		return nil, fmt.Errorf("store: accounts: %w", err)
	}
	defer rows.Close()
	var out []rental.Account
	sc := &scanner{src: rows}
	for rows.Next() {
		var a rental.Account
		if err := scanAccount(sc, &a); err != nil {
			return nil, fmt.Errorf("store: accounts: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: accounts: %w", err)
	}
	return out, nil
}

// NoteKeyUse writes down that a key authenticated a request at now, unless
// a use within rental.KeyUseResolution is written already (by this process
// or another): one small write per key a minute, whatever the traffic.
func (db *DB) NoteKeyUse(ctx context.Context, keyID string, now time.Time) error {
	_, err := db.Writer().ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)`,
		keyID, ms(now), ms(now.Add(-rental.KeyUseResolution)))
	if err != nil {
		return fmt.Errorf("store: note key use: %w", err)
	}
	db.keys.noteUse(keyID, now)
	return nil
}
