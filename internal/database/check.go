package database

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Check is a condition that a read's answer counts only under, which the
// read confirms in the same round trip as its first statement (see
// ReadChecked) rather than in one of its own: the store's kept key lookups
// are one (the access version must still be the one the lookup read).
// Its caller keeps its state, since the check may also run on its own
// (the caller runs Pending's statement) or in a Tx (carried with Later).
type Check interface {
	// Pending returns the statement that makes the check, while it has
	// not run. Its Scan is given the statement's row (or, when the
	// statement could not run, a row whose Scan fails with why) and
	// returns the check's error: nil if it held.
	Pending() (Stmt, bool)
	// Outcome is the check's error once it ran: nil if it held.
	Outcome() error
}

// ReadChecked returns the read pool as a Conn whose first statement carries
// c's statement (on PostgreSQL, in one pipelined batch on one connection)
// and fails if c did not hold, as does every statement after it.
func (db *DB) ReadChecked(c Check) Conn { return checkedConn{db, c} }

// checkedConn is the read pool carrying a Check.
type checkedConn struct {
	db *DB
	c  Check
}

// confirm runs the check on its own if it has not run, and returns its
// outcome.
func (c checkedConn) confirm(ctx context.Context) error {
	if s, ok := c.c.Pending(); ok {
		return s.Scan(c.db.Reader().QueryRowContext(ctx, s.SQL, s.Args...))
	}
	return c.c.Outcome()
}

func (c checkedConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := c.confirm(ctx); err != nil {
		return nil, err
	}
	return c.db.Reader().ExecContext(ctx, query, args...)
}

func (c checkedConn) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	if s, ok := c.c.Pending(); ok && c.db.engine == Postgres {
		return c.batch(ctx, s, query, args)
	}
	if err := c.confirm(ctx); err != nil {
		return nil, err
	}
	return c.db.Reader().QueryContext(ctx, query, args...)
}

func (c checkedConn) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	rows, err := c.QueryContext(ctx, query, args...)
	if err != nil {
		return failedRow{err}
	}
	return firstRow{rows}
}

// batch sends the check's statement s and query in one batch on a
// connection of the read pool, and returns query's rows, which hold the
// connection until they are closed.
func (c checkedConn) batch(ctx context.Context, s Stmt, query string, args []any) (Rows, error) {
	cn, err := c.db.acquire(ctx, c.db.read)
	if err != nil {
		s.Scan(failedRow{err}) // the check could not run either
		return nil, err
	}
	var br pgx.BatchResults
	var rows pgx.Rows
	err = cn.Raw(func(dc any) error {
		// The *pgx.Conn is still read after Raw returns, through rows; cn,
		// held until they are closed, keeps every other user off it.
		b := &pgx.Batch{}
		b.Queue(s.SQL, s.Args...)
		b.Queue(query, args...)
		br = dc.(*stdlib.Conn).Conn().SendBatch(ctx, b)
		if err := s.Scan(br.QueryRow()); err != nil {
			return err
		}
		var err error
		rows, err = br.Query()
		return err
	})
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		if br != nil {
			br.Close()
		}
		cn.Close()
		if _, pending := c.c.Pending(); pending { // nothing was sent: the check could not run
			s.Scan(failedRow{err})
		}
		return nil, err
	}
	return batchRows{rows, br, cn}, nil
}

// batchRows are pgx's rows as Rows, perhaps a batch's last rows: closing
// them ends the batch (br, if any) and gives the connection back (cn, if
// the rows hold it).
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
	cn *sql.Conn
}

func (r batchRows) Close() error {
	r.Rows.Close()
	err := r.Rows.Err()
	if r.br != nil {
		if cerr := r.br.Close(); err == nil {
			err = cerr
		}
	}
	if r.cn != nil {
		r.cn.Close()
	}
	return err
}

// firstRow is QueryRowContext's row over Rows.
type firstRow struct{ rows Rows }

func (r firstRow) Scan(dest ...any) error {
	if !r.rows.Next() {
		if err := r.rows.Close(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	err := r.rows.Scan(dest...)
	if cerr := r.rows.Close(); err == nil {
		err = cerr
	}
	return err
}
