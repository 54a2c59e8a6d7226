package store

import (
	"context"
	"fmt"
	"sort"

	"rentapi/internal/rental"
)

// UsagePeriod is what a limit counts: a developer's requests of one mode
// from one Thailand date to another, both included (a month's for the
// monthly quota, a single day's for the sandbox's daily limit).
type UsagePeriod struct {
	Developer string
	Mode      rental.Mode
	From, To  string // YYYY-MM-DD
}

// UsageCell is one row of counts: an application's requests on one day.
type UsageCell struct {
	Application string
	Day         string // YYYY-MM-DD, Thailand time
}

// AddUsage adds counts to the period's rows, all in one transaction, and
// returns the period's new total, which includes what every other process
// has added. Every cell's day must fall within the period.
func (db *DB) AddUsage(ctx context.Context, p UsagePeriod, counts map[UsageCell]int64) (int64, error) {
	var total int64
	err := db.InTx(ctx, func(tx *Tx) error {
		cells := make([]UsageCell, 0, len(counts))
		for c := range counts {
			cells = append(cells, c)
		}
		// The same order in every process: no two flushes wait on each other's rows.
		sort.Slice(cells, func(i, j int) bool {
			if cells[i].Day != cells[j].Day {
				return cells[i].Day < cells[j].Day
			}
			return cells[i].Application < cells[j].Application
		})
		for _, c := range cells {
			if c.Day < p.From || c.Day > p.To {
				return fmt.Errorf("store: add usage: day %s outside %s..%s", c.Day, p.From, p.To)
			}
			_, err := tx.c.ExecContext(ctx, `INSERT INTO usage_days (developer_id, mode, day, application_id, count) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (developer_id, mode, day, application_id) DO UPDATE SET count = usage_days.count + excluded.count`,
				p.Developer, string(p.Mode), c.Day, c.Application, counts[c])
			if err != nil {
				return fmt.Errorf("store: add usage: %w", err)
			}
		}
		var err error
		total, err = tx.UsageTotal(ctx, p)
		return err
	})
	return total, err
}

// UsageTotal returns a developer's request count over a period.
func (q *Queries) UsageTotal(ctx context.Context, p UsagePeriod) (int64, error) {
	var n int64
	err := q.c.QueryRowContext(ctx, `SELECT COALESCE(SUM(count), 0) FROM usage_days
		WHERE developer_id = $1 AND mode = $2 AND day >= $3 AND day <= $4`, p.Developer, string(p.Mode), p.From, p.To).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: usage: %w", err)
	}
	return n, nil
}

// UsageRow is an application's count on one day, with the application's
// name ("" for counts made before applications were told apart, or of an
// application deleted since).
type UsageRow struct {
	Day         string
	Application string
	Name        string
	Count       int64
}

// UsageDays lists a period's counts by day and application, in date order.
func (q *Queries) UsageDays(ctx context.Context, p UsagePeriod) ([]UsageRow, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT u.day, u.application_id, COALESCE(a.name, ''), u.count
		FROM usage_days u LEFT JOIN applications a ON a.id = u.application_id
		WHERE u.developer_id = $1 AND u.mode = $2 AND u.day >= $3 AND u.day <= $4
		ORDER BY u.day, u.application_id`, p.Developer, string(p.Mode), p.From, p.To)
	if err != nil {
		return nil, fmt.Errorf("store: usage days: %w", err)
	}
	defer rows.Close()
	var out []UsageRow
	for rows.Next() {
		var r UsageRow
		if err := rows.Scan(&r.Day, &r.Application, &r.Name, &r.Count); err != nil {
			return nil, fmt.Errorf("store: usage days: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: usage days: %w", err)
	}
	return out, nil
}
