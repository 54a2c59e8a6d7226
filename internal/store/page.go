package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

// Position is where a page ends: the creation time (ms) and ID of its last
// item. The next page starts strictly after it, so items added meanwhile
// never shift what is left to read.
type Position struct {
	CreatedAt int64
	ID        string
}

// Page asks for one page of a list in creation order, ID breaking ties.
type Page struct {
	Limit int
	Asc   bool
	After *Position
}

// keyset returns the condition (with a leading AND, or empty) and the ORDER
// BY/LIMIT clause for the page, numbering placeholders from n. The list is
// read by an index on (scope, created_at, id), never with OFFSET. The limit
// is written into the SQL as a number, not bound: SQLite's planner reads a
// bound LIMIT and then prepares the statement again every time it is bound,
// which would undo the statement cache.
func (p Page) keyset(n int) (cond, tail string, args []any) {
	dir, cmp := "DESC", "<"
	if p.Asc {
		dir, cmp = "ASC", ">"
	}
	if p.After != nil {
		cond = fmt.Sprintf(" AND (created_at, id) %s ($%d, $%d)", cmp, n, n+1)
		args = []any{p.After.CreatedAt, p.After.ID}
		n += 2
	}
	tail = fmt.Sprintf(" ORDER BY created_at %s, id %s LIMIT %d", dir, dir, p.Limit+1)
	return cond, tail, args
}

// one runs a query for a single object of kind what: absent is
// rental.NotFound, anything else wrapped with the kind.
func one[T any](ctx context.Context, q *Queries, what, id, query string, args []any, scan func(*scanner, *T) error) (*T, error) {
	v := new(T)
	err := scan(&scanner{src: q.c.QueryRowContext(ctx, query, args...)}, v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound(what, id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", what, err)
	}
	return v, nil
}

// list runs a page query built from base (which ends in its WHERE clause),
// scans each row, and reports whether more items follow.
func list[T any](ctx context.Context, q *Queries, base string, args []any, p Page, scan func(*scanner, *T) error) ([]T, bool, error) {
	cond, tail, more := p.keyset(len(args) + 1)
	rows, err := q.c.QueryContext(ctx, base+cond+tail, append(args, more...)...)
	if err != nil {
		return nil, false, fmt.Errorf("store: list: %w", err)
	}
	defer rows.Close()
	items := make([]T, 0, p.Limit+1)
	sc := &scanner{src: rows}
	for rows.Next() {
		// Scanned in place: otherwise a page of bills allocated and
		// copied each one twice.
		items = append(items, *new(T))
		if err := scan(sc, &items[len(items)-1]); err != nil {
			return nil, false, fmt.Errorf("store: list: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: list: %w", err)
	}
	if len(items) > p.Limit {
		return items[:p.Limit], true, nil
	}
	return items, false, nil
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
