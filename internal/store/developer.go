package store

import (
	"context"
	"fmt"

	"rentapi/internal/rental"
)

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

// CountDevelopers tells whether the database is new.
func (q *Queries) CountDevelopers(ctx context.Context) (int, error) {
	var n int
	if err := q.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM developers`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count developers: %w", err)
	}
	return n, nil
}
