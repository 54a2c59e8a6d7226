package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

// issueRegistrationCodes gives every current tenant who is not registered
// with the chat channel and has no code one: tenants who moved in before
// codes existed, and tenants whose LINE user unfollowed. It runs after the
// migrations, so it touches only the few rows that need it.
func (db *DB) issueRegistrationCodes(ctx context.Context) error {
	rows, err := db.WritePool().QueryContext(ctx, `SELECT id FROM tenants
		WHERE chat_registration_code IS NULL AND NOT chat_registered AND moved_out_at IS NULL`)
	if err != nil {
		return fmt.Errorf("store: tenants without codes: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("store: tenants without codes: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: tenants without codes: %w", err)
	}
	for _, id := range ids {
		if err := db.issueRegistrationCode(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// issueRegistrationCode gives the tenant a code, if it still has none, and
// moves its landlord's data version on (see DataVersion) in the same
// transaction: the tenant's answer changes.
func (db *DB) issueRegistrationCode(ctx context.Context, tenantID string) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.c.ExecContext(ctx, `UPDATE landlords SET data_version = data_version + 1
		WHERE id = (SELECT landlord_id FROM tenants WHERE id = $1)`, tenantID); err != nil {
		return fmt.Errorf("store: issue registration code: %w", err)
	}
	if _, err := tx.c.ExecContext(ctx, `UPDATE tenants SET chat_registration_code = $2
		WHERE id = $1 AND chat_registration_code IS NULL`, tenantID, rental.NewRegistrationCode()); err != nil {
		return fmt.Errorf("store: issue registration code: %w", err)
	}
	return tx.Commit()
}

// MarkLineEvent records a LINE webhook event by its webhookEventId in the
// transaction that handles it; seen is true when it was handled before (a
// redelivery), and then the caller changes nothing.
func (tx *Tx) MarkLineEvent(ctx context.Context, id string) (seen bool, err error) {
	res, err := tx.c.ExecContext(ctx, `INSERT INTO line_events (id, received_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, id, ms(tx.Now))
	if err != nil {
		return false, fmt.Errorf("store: line event: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: line event: %w", err)
	}
	return n == 0, nil
}

// RegisterLineCode links the LINE user who sent code to the tenant the
// code names, once: the code is cleared as it is used. A code that names
// no current tenant is not found. A code names one tenant of one landlord,
// so the events go to that landlord only.
func (tx *Tx) RegisterLineCode(ctx context.Context, code, lineUserID string) (*rental.Tenant, error) {
	var id, landlordID string
	err := tx.c.QueryRowContext(ctx, `SELECT id, landlord_id FROM tenants WHERE chat_registration_code = $1 AND moved_out_at IS NULL`,
		code).Scan(&id, &landlordID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("chat registration code", code)
	}
	if err != nil {
		return nil, fmt.Errorf("store: registration code: %w", err)
	}
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	// Claimed first, as every write of the landlord's is (the landlord,
	// then its rows: no deadlock with the API's writes), then locked, the
	// code is read again: a second message with the same code waits here
	// for the first and then finds it used.
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "tenants", "tenant", landlordID, id); err != nil {
		return nil, err
	}
	var still int
	if err := tx.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants WHERE id = $1 AND chat_registration_code = $2`, id, code).Scan(&still); err != nil {
		return nil, fmt.Errorf("store: registration code: %w", err)
	}
	if still == 0 {
		return nil, rental.NotFound("chat registration code", code)
	}
	return tx.RegisterLine(ctx, acct, id, lineUserID)
}

// RegisterLine links a LINE user (none when empty: the sandbox's test
// helper, as test mode never calls LINE) to the account's tenant: the
// tenant is chat_registered and its code is void. Records
// tenant.line_registered and tenant.updated; a tenant already registered is
// returned as it is.
func (tx *Tx) RegisterLine(ctx context.Context, acct *rental.Account, tenantID, lineUserID string) (*rental.Tenant, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "tenants", "tenant", acct.LandlordID, tenantID); err != nil {
		return nil, err
	}
	t, err := tx.GetTenant(ctx, acct, tenantID)
	if err != nil {
		return nil, err
	}
	done, err := rental.CheckLineRegistration(t)
	if err != nil || done {
		return t, err
	}
	var user any
	if lineUserID != "" {
		user = lineUserID
	}
	if _, err := tx.c.ExecContext(ctx, `UPDATE tenants SET chat_registered = TRUE, chat_registration_code = NULL, line_user_id = $3,
			updated_at = $4 WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, tenantID, user, ms(tx.Now)); err != nil {
		return nil, fmt.Errorf("store: register line: %w", err)
	}
	t.ChatRegistered, t.ChatRegistrationCode, t.UpdatedAt = true, nil, rental.Time{Time: tx.Now}
	if err := tx.recordTenantEvent(ctx, acct, "tenant.line_registered", t); err != nil {
		return nil, err
	}
	return t, tx.recordTenantEvent(ctx, acct, "tenant.updated", t)
}

// UnfollowLine ends one registration of a LINE user who unfollowed or
// blocked the service's account: a tenant linked to that user is no longer
// chat_registered and gets a new code to register again (tenant.updated).
// It returns nil when no tenant is left registered to the user; the caller
// calls it again until then, one landlord a transaction, so each landlord's
// events keep that landlord's clock.
func (tx *Tx) UnfollowLine(ctx context.Context, lineUserID string) (*rental.Tenant, error) {
	var id, landlordID string
	err := tx.c.QueryRowContext(ctx, `SELECT id, landlord_id FROM tenants WHERE line_user_id = $1 AND chat_registered
		ORDER BY id LIMIT 1`, lineUserID).Scan(&id, &landlordID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: unfollow: %w", err)
	}
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "tenants", "tenant", landlordID, id); err != nil {
		return nil, err
	}
	code := rental.NewRegistrationCode()
	if _, err := tx.c.ExecContext(ctx, `UPDATE tenants SET chat_registered = FALSE, chat_registration_code = $3, updated_at = $4
		WHERE landlord_id = $1 AND id = $2`, landlordID, id, code, ms(tx.Now)); err != nil {
		return nil, fmt.Errorf("store: unfollow: %w", err)
	}
	t, err := tx.GetTenant(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	return t, tx.recordTenantEvent(ctx, acct, "tenant.updated", t)
}

// LineCodeTries locks and returns the LINE user's count of wrong
// registration codes (the zero count for a user who sent none), so that
// two processes taking codes of one user count every one: the second waits
// for the first's transaction.
func (tx *Tx) LineCodeTries(ctx context.Context, lineUserID string) (rental.CodeTries, error) {
	var c rental.CodeTries
	if _, err := tx.c.ExecContext(ctx, `INSERT INTO line_code_tries (line_user_id, window_start, wrong) VALUES ($1, 0, 0)
		ON CONFLICT (line_user_id) DO NOTHING`, lineUserID); err != nil {
		return c, fmt.Errorf("store: code tries: %w", err)
	}
	var start int64
	err := tx.c.QueryRowContext(ctx, `UPDATE line_code_tries SET wrong = wrong WHERE line_user_id = $1 RETURNING window_start, wrong`,
		lineUserID).Scan(&start, &c.Wrong)
	if err != nil {
		return c, fmt.Errorf("store: code tries: %w", err)
	}
	if c.Wrong > 0 {
		c.WindowStart = time.UnixMilli(start)
	}
	return c, nil
}

// SetLineCodeTries stores the LINE user's count of wrong codes, locked by
// LineCodeTries in the same transaction.
func (tx *Tx) SetLineCodeTries(ctx context.Context, lineUserID string, c rental.CodeTries) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE line_code_tries SET window_start = $2, wrong = $3 WHERE line_user_id = $1`,
		lineUserID, ms(c.WindowStart), c.Wrong)
	if err != nil {
		return fmt.Errorf("store: code tries: %w", err)
	}
	return nil
}
