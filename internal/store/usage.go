package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// AddUsage adds n requests to a developer's count for a period and returns
// the new total, which includes what every other process has added.
func (db *DB) AddUsage(ctx context.Context, developerID, period string, n int64) (int64, error) {
	var total int64
	err := db.writer().QueryRowContext(ctx, `INSERT INTO usage_counters (developer_id, period, count) VALUES ($1, $2, $3)
		ON CONFLICT (developer_id, period) DO UPDATE SET count = usage_counters.count + excluded.count
		RETURNING count`, developerID, period, n).Scan(&total)
	if err != nil {
		return 0, fmt.Errorf("store: add usage: %w", err)
	}
	return total, nil
}

// UsageCount returns a developer's request count for a period.
func (q *Queries) UsageCount(ctx context.Context, developerID, period string) (int64, error) {
	var n int64
	err := q.c.QueryRowContext(ctx, `SELECT count FROM usage_counters WHERE developer_id = $1 AND period = $2`, developerID, period).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: usage: %w", err)
	}
	return n, nil
}
