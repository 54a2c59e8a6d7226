package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Conn is what both a pool and a Tx offer: database/sql's methods, with
// rows behind small interfaces so that a pool can give each statement its
// connection back when its rows are done, and a PostgreSQL Tx can answer
// from a pipelined batch.
type Conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) Row
}

// Row is the result of QueryRowContext.
type Row interface {
	Scan(dest ...any) error
}

// Rows is the result of QueryContext.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Reader runs single statements on the read pool, each with a bounded wait
// for its connection.
func (db *DB) Reader() Conn { return pool{db, db.read} }

// Writer runs single statements on the write pool, each with a bounded
// wait for its connection.
func (db *DB) Writer() Conn { return pool{db, db.write} }

// acquire takes a connection of pool p, waiting at most db.wait. On its
// own, database/sql waits for a free connection as long as the request's
// context lives; a wait that runs out, or a database that refuses the
// connection, is the service being unavailable, not failing.
func (db *DB) acquire(ctx context.Context, p *sql.DB) (*sql.Conn, error) {
	wait, cancel := context.WithTimeout(ctx, db.wait)
	defer cancel()
	c, err := p.Conn(wait)
	switch {
	case err == nil:
		return c, nil
	case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || Refused(err)):
		return nil, Unavailable(err)
	}
	return nil, fmt.Errorf("database: connection: %w", err)
}

// Wait is the bound on a wait for a connection, for a caller that waits
// for something else first and must keep to the same bound (the store's
// queue of a landlord's writers).
func (db *DB) Wait() time.Duration { return db.wait }

// txConn is a member's part of its group's SQLite transaction (see
// group) as a Conn: its statements share the transaction's connection,
// and run without their context's cancellation. A statement that fails in
// a way after which SQLite may have rolled the whole transaction back
// breaks the group, and every statement after it fails the same way: run
// outside the transaction, it would commit on its own. Once the member
// has left the group its statements fail with sql.ErrTxDone, and the rows
// it left open are closed.
type txConn struct {
	tx   *Tx
	rows []*sql.Rows
}

// usable is nil while the member's statements may run.
func (c *txConn) usable() error {
	if c.tx.left {
		return sql.ErrTxDone
	}
	return c.tx.b.broken
}

func (c *txConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	res, err := c.tx.b.tx.ExecContext(context.WithoutCancel(ctx), query, args...)
	return res, c.tx.b.check(err)
}

func (c *txConn) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	rows, err := c.tx.b.tx.QueryContext(context.WithoutCancel(ctx), query, args...)
	if err != nil {
		return nil, c.tx.b.check(err)
	}
	c.rows = append(c.rows, rows)
	return checkedRows{rows, c.tx.b}, nil
}

func (c *txConn) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	if err := c.usable(); err != nil {
		return errRow{err}
	}
	return checkedRow{c.tx.b.tx.QueryRowContext(context.WithoutCancel(ctx), query, args...), c.tx.b}
}

// closeRows closes the rows the member left open.
func (c *txConn) closeRows() {
	for _, r := range c.rows {
		r.Close()
	}
	c.rows = nil
}

// checkedRow and checkedRows are a row and rows of a group's transaction,
// whose failures are checked like a statement's (see txConn).
type checkedRow struct {
	row *sql.Row
	b   *batch
}

func (r checkedRow) Scan(dest ...any) error { return r.b.check(r.row.Scan(dest...)) }

type checkedRows struct {
	*sql.Rows
	b *batch
}

func (r checkedRows) Err() error { return r.b.check(r.Rows.Err()) }

// errRow is a row that fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// pool is a pool as a Conn: each statement takes a connection through
// acquire (so its wait is bounded) and gives it back when done.
type pool struct {
	db *DB
	p  *sql.DB
}

func (c pool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	cn, err := c.db.acquire(ctx, c.p)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	return cn.ExecContext(c.db.statementContext(ctx), query, args...)
}

func (c pool) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	cn, err := c.db.acquire(ctx, c.p)
	if err != nil {
		return nil, err
	}
	rows, err := cn.QueryContext(c.db.statementContext(ctx), query, args...)
	if err != nil {
		cn.Close()
		return nil, err
	}
	return connRows{rows, cn}, nil
}

func (c pool) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	cn, err := c.db.acquire(ctx, c.p)
	if err != nil {
		return FailedRow(err)
	}
	return connRow{cn.QueryRowContext(c.db.statementContext(ctx), query, args...), cn}
}

// statementContext is the context a single statement on a pool runs
// with, once it has its connection. On SQLite the request's cancellation
// is left behind: with it, database/sql and the SQLite driver each start a
// goroutine per statement to watch for it, four for a read of a page,
// which cost reads CPU and, under load, tail latency. A statement on
// SQLite is a local computation that ends on its own (the store's lists
// are keyset pages, every other read one row), so a client that hangs up
// now lets it finish rather than interrupting it; the wait for the
// connection still ends with the request (see acquire). PostgreSQL keeps
// the cancellation: there a query runs in another process, which is told
// to stop.
func (db *DB) statementContext(ctx context.Context) context.Context {
	if db.engine == SQLite {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// connRows are rows that give their connection back when closed.
type connRows struct {
	*sql.Rows
	cn *sql.Conn
}

func (r connRows) Close() error {
	err := r.Rows.Close()
	r.cn.Close()
	return err
}

// connRow is a row that gives its connection back once scanned.
type connRow struct {
	*sql.Row
	cn *sql.Conn
}

func (r connRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	r.cn.Close()
	return err
}

// FailedRow is the row of a statement that could not run: its Scan
// returns err.
func FailedRow(err error) Row { return failedRow{err} }

type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }
