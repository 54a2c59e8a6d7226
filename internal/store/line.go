package store

import (
	"context"
	"fmt"

	"rentapi/internal/rental"
)

// issueRegistrationCodes gives every current tenant who is not registered
// with the chat channel and has no code one: tenants who moved in before
// codes existed, and tenants whose LINE user unfollowed. It runs after the
// migrations, so it touches only the few rows that need it.
func (db *DB) issueRegistrationCodes(ctx context.Context) error {
	rows, err := db.write.QueryContext(ctx, `SELECT id FROM tenants
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
		if _, err := db.write.ExecContext(ctx, `UPDATE tenants SET chat_registration_code = $2
			WHERE id = $1 AND chat_registration_code IS NULL`, id, rental.NewRegistrationCode()); err != nil {
			return fmt.Errorf("store: issue registration code: %w", err)
		}
	}
	return nil
}
