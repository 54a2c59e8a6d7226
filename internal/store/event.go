package store

import (
	"context"
	"encoding/json"
	"fmt"

	"rentapi/internal/rental"
)

// RecordEvent stores an event of the account's landlord in the transaction
// of the change it reports, so an event exists exactly when its change does.
// obj is serialised here once, exactly as the API returns it, and that text
// is what every later reader and delivery sends.
//
// Events of one transaction get strictly increasing times (a millisecond
// apart at most), so they list in the order they happened.
func (tx *Tx) RecordEvent(ctx context.Context, acct *rental.Account, typ string, obj any) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("store: event %s: %w", typ, err)
	}
	at := max(ms(tx.Now), tx.lastEvent+1)
	tx.lastEvent = at
	_, err = tx.c.ExecContext(ctx, `INSERT INTO events (id, landlord_id, mode, type, data, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		rental.NewID(rental.PrefixEvent), acct.LandlordID, string(acct.Mode()), typ, string(data), at)
	if err != nil {
		return fmt.Errorf("store: record event %s: %w", typ, err)
	}
	return nil
}

// CountEvents counts the landlord's events of a type, for tests and checks
// of exactly-once.
func (q *Queries) CountEvents(ctx context.Context, acct *rental.Account, typ string) (int, error) {
	var n int
	err := q.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE landlord_id = $1 AND type = $2`, acct.LandlordID, typ).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count events: %w", err)
	}
	return n, nil
}
