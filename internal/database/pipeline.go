package database

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgConn is a PostgreSQL write transaction's connection, spoken to through
// pgx itself rather than database/sql's transaction. Round trips are what a
// write costs on PostgreSQL (each wakes the server and the process once
// more, and every other writer of the landlord waits through all of them),
// so the transaction sends nothing on its own: BEGIN waits to travel in one
// pipelined batch with the transaction's first statement, statements
// queued for later (see Tx.Later) travel with the next one, and COMMIT
// travels with the statements left for the end (see Tx.Commit).
type pgConn struct {
	cn *sql.Conn
	pc *pgx.Conn
	// queued go to the database ahead of the next statement, in its batch.
	queued []Stmt
	// begun is set once the first batch, with BEGIN, was answered.
	begun bool
	// ended is set once the transaction committed or rolled back: the
	// connection may already serve another request.
	ended bool
	// err is the first failure: PostgreSQL refuses every later statement
	// of the transaction anyway, and a failed batch may have dropped BEGIN.
	err error
	// onFail, if set, is told the first failure.
	onFail func(error)
}

// fail keeps err as the transaction's first failure, and returns it.
func (c *pgConn) fail(err error) error {
	if err != nil && c.err == nil {
		c.err = err
		if c.onFail != nil {
			c.onFail(err)
		}
	}
	return err
}

// beginPostgres starts a transaction on a connection of the write pool:
// nothing is sent until its first statement.
func beginPostgres(cn *sql.Conn) (*pgConn, error) {
	c := &pgConn{cn: cn}
	err := cn.Raw(func(dc any) error {
		// The *pgx.Conn is used after Raw returns, through c; cn, held
		// until the transaction ends, keeps every other user off it.
		c.pc = dc.(*stdlib.Conn).Conn()
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.queued = append(c.queued, Stmt{SQL: "BEGIN", What: "database: begin"})
	return c, nil
}

// send sends the queued statements and then query in one batch, and reads
// the queued ones' answers; query's is the caller's to read from the
// batch, which the caller closes.
func (c *pgConn) send(ctx context.Context, query string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	for _, s := range c.queued {
		b.Queue(s.SQL, s.Args...)
	}
	b.Queue(query, args...)
	queued := c.queued
	c.queued = nil
	br := c.pc.SendBatch(ctx, b)
	for _, s := range queued {
		if err := s.answer(br); err != nil {
			br.Close()
			return nil, c.fail(err)
		}
	}
	c.begun = true
	return br, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.queued) == 0 {
		tag, err := c.pc.Exec(ctx, query, args...)
		if err != nil {
			return nil, c.fail(err)
		}
		return changed(tag.RowsAffected()), nil
	}
	br, err := c.send(ctx, query, args)
	if err != nil {
		return nil, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, c.fail(err)
	}
	return changed(tag.RowsAffected()), nil
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.queued) == 0 {
		rows, err := c.pc.Query(ctx, query, args...)
		if err != nil {
			return nil, c.fail(err)
		}
		return batchRows{Rows: rows}, nil
	}
	br, err := c.send(ctx, query, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		if rows != nil {
			rows.Close()
		}
		br.Close()
		return nil, c.fail(err)
	}
	return batchRows{Rows: rows, br: br}, nil
}

func (c *pgConn) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	rows, err := c.QueryContext(ctx, query, args...)
	if err != nil {
		return failedRow{err}
	}
	return firstRow{rows}
}

// flush sends the queued statements, if any, in one round trip.
func (c *pgConn) flush(ctx context.Context) error {
	if c.err != nil {
		return c.err
	}
	if len(c.queued) == 0 {
		return nil
	}
	last := c.queued[len(c.queued)-1]
	c.queued = c.queued[:len(c.queued)-1]
	br, err := c.send(ctx, last.SQL, last.Args)
	if err != nil {
		return err
	}
	err = last.answer(br)
	if cerr := br.Close(); err == nil && cerr != nil {
		err = last.failed(cerr)
	}
	return c.fail(err)
}

// commit sends the queued statements, stmts and COMMIT in one round trip.
// A statement with a check, queued before or given here, cannot be judged
// before COMMIT runs, so it is sent as one that fails in the database
// itself (see mustChangeOne); and a COMMIT that PostgreSQL answers with
// ROLLBACK (the transaction had failed) is a failure.
func (c *pgConn) commit(ctx context.Context, stmts []Stmt) error {
	all := append(c.queued, stmts...)
	c.queued = nil
	for _, s := range all {
		if s.Lost != nil && s.Scan == nil && s.Rows == nil && !s.Checked {
			s.SQL = MustChangeOne(s.SQL)
		}
		c.queued = append(c.queued, s)
	}
	c.queued = append(c.queued, Stmt{SQL: commitSQL, What: "database: commit"})
	err := c.flush(ctx)
	if c.pc.PgConn().TxStatus() == 'I' {
		c.ended = true
	}
	return err
}

// rollback ends the transaction if the database still has it open; with
// BEGIN still queued there is nothing to end. A connection whose ROLLBACK
// fails is left in its transaction, and the pool discards it (pgx's
// ResetSession refuses a connection that is not idle).
func (c *pgConn) rollback() error {
	if c.ended {
		return nil
	}
	c.ended = true
	c.queued = nil
	if c.pc.PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := c.pc.Exec(context.Background(), "ROLLBACK")
	return err
}

// MustChangeOne makes a PostgreSQL UPDATE or DELETE fail (division by
// zero, SQLSTATE 22012) unless it changed exactly one row: the check of a
// statement that travels with COMMIT, which the database must make, since
// the answer arrives only after COMMIT ran.
func MustChangeOne(q string) string {
	return `WITH changed AS (` + q + ` RETURNING 1) SELECT 1 / (CASE WHEN count(*) = 1 THEN 1 ELSE 0 END) FROM changed`
}

// answer reads the statement's answer, its row or its count, from the
// batch, and judges it.
func (s Stmt) answer(br pgx.BatchResults) error {
	if s.Rows != nil {
		rows, err := br.Query()
		if err == nil {
			err = s.Rows(batchRows{Rows: rows})
		}
		if rows != nil {
			rows.Close()
			if err == nil {
				err = rows.Err()
			}
		}
		if err != nil {
			return s.failed(err)
		}
		return nil
	}
	if s.Scan != nil {
		if err := s.Scan(br.QueryRow()); err != nil {
			return s.failed(err)
		}
		return nil
	}
	tag, err := br.Exec()
	if err != nil {
		return s.failed(err)
	}
	if s.SQL == commitSQL && tag.String() != commitSQL {
		return errors.New("database: commit: the database rolled the transaction back")
	}
	return s.judge(tag.RowsAffected())
}

// commitSQL ends a transaction; PostgreSQL answers it with its own name
// when the transaction committed.
const commitSQL = "COMMIT"

// changed is an Exec's sql.Result: the count of rows changed.
type changed int64

func (n changed) RowsAffected() (int64, error) { return int64(n), nil }

func (changed) LastInsertId() (int64, error) {
	return 0, errors.New("database: PostgreSQL has no last insert ID; use RETURNING")
}

// pgxTx is the transaction as the job queue's pgx driver takes it, so that
// jobs are inserted in it (see Tx.PgxTx). Only what inserting jobs uses
// is offered; the transaction ends only through Tx.
type pgxTx struct{ c *pgConn }

var errTxOwned = errors.New("database: the transaction ends through database.Tx")

func (t pgxTx) Begin(context.Context) (pgx.Tx, error) { return nil, errTxOwned }
func (t pgxTx) Commit(context.Context) error          { return errTxOwned }
func (t pgxTx) Rollback(context.Context) error        { return errTxOwned }
func (t pgxTx) LargeObjects() pgx.LargeObjects        { return pgx.LargeObjects{} }
func (t pgxTx) Conn() *pgx.Conn                       { return t.c.pc }

func (t pgxTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := t.c.flush(ctx); err != nil {
		return 0, err
	}
	return t.c.pc.CopyFrom(ctx, table, columns, src)
}

func (t pgxTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if err := t.c.flush(ctx); err != nil {
		return failedBatch{err}
	}
	return t.c.pc.SendBatch(ctx, b)
}

func (t pgxTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if err := t.c.flush(ctx); err != nil {
		return nil, err
	}
	return t.c.pc.Prepare(ctx, name, sql)
}

func (t pgxTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := t.c.flush(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return t.c.pc.Exec(ctx, sql, args...)
}

func (t pgxTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := t.c.flush(ctx); err != nil {
		return nil, err
	}
	return t.c.pc.Query(ctx, sql, args...)
}

func (t pgxTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := t.c.flush(ctx); err != nil {
		return failedRow{err}
	}
	return t.c.pc.QueryRow(ctx, sql, args...)
}

// failedBatch is the batch of a transaction whose queued statements failed.
type failedBatch struct{ err error }

func (b failedBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, b.err }
func (b failedBatch) Query() (pgx.Rows, error)         { return nil, b.err }
func (b failedBatch) QueryRow() pgx.Row                { return failedRow{b.err} }
func (b failedBatch) Close() error                     { return b.err }
func (b failedBatch) Tx() pgx.Tx                       { return nil }
