package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

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

// Usage is an account's properties and rooms, held against its capacity:
// the counts kept on the landlord's row (migration 00034), so that
// checking a new room costs the same at 20 rooms and at 20,000.
func (q *Queries) Usage(ctx context.Context, acct *rental.Account) (rental.Capacity, error) {
	var u rental.Capacity
	err := q.c.QueryRowContext(ctx, `SELECT properties_count, rooms_count FROM landlords WHERE id = $1`, acct.LandlordID).Scan(&u.Properties, &u.Rooms)
	if err != nil {
		return u, fmt.Errorf("store: usage: %w", err)
	}
	return u, nil
}
