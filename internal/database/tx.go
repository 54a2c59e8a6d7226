package database

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Tx is one write transaction on the write pool. Its Now is fixed when it
// begins, so every row it writes carries the same time. Statements whose
// answer it needs only if they fail are left for later (Later, AtCommit):
// on PostgreSQL they travel with the next statement, or with COMMIT, in
// one pipelined batch, a round trip saved each (see pgConn).
type Tx struct {
	Now time.Time
	// c runs the statements: a txConn on SQLite, pg on PostgreSQL, whose
	// connection is conn (a group's is the group's, see batch).
	c    Conn
	pg   *pgConn
	conn *sql.Conn
	// atCommit are the statements left for Commit (see AtCommit).
	atCommit []Stmt
	// onCommit are called once the transaction committed, onKept once
	// its work is kept (see OnKept).
	onCommit []func()
	onKept   []func(Work)
	ended    bool
	// On SQLite, the group whose transaction tx shares, and its batch
	// (see group); left is whether tx's part in it is over, others
	// whether it began after other members' work.
	g      *group
	b      *batch
	left   bool
	others bool
}

// Stmt is a statement whose answer a transaction reads later than it
// sends it (see Tx.Later): the count of rows it changed, and a check of
// it, or its rows, read by a function.
type Stmt struct {
	SQL  string
	Args []any
	// What names it in an error.
	What string
	// Lost, if set, is the transaction's error unless the statement
	// changed exactly one row.
	Lost error
	// Checked says the statement makes its check itself, in the database
	// (see MustChangeOne, IsCheckFailure): it fails, and stops its batch,
	// when its condition is false; Lost is then its error.
	Checked bool
	// Taken, if set, is the error when the statement fails on a unique
	// constraint.
	Taken error
	// Scan, if set, reads the statement's one row (a queued read).
	Scan func(Row) error
	// Rows, if set, reads the statement's rows (a queued read of many).
	Rows func(Rows) error
}

// Begin starts a write transaction. On SQLite it is a member of a group
// that shares one transaction and its commit (see group), which took the
// write lock at once (BEGIN IMMEDIATE), so a transaction never fails half
// way on a busy lock; on PostgreSQL BEGIN travels with the first statement
// (see pgConn). Waiting for the write connection is bounded (see
// Options.Wait).
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	if db.group != nil {
		return db.group.begin(ctx)
	}
	conn, err := db.acquire(ctx, db.write)
	if err != nil {
		return nil, fmt.Errorf("database: begin: %w", err)
	}
	pg, err := beginPostgres(conn)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("database: begin: %w", err)
	}
	return &Tx{c: pg, pg: pg, conn: conn, Now: db.now().UTC()}, nil
}

// ExecContext runs a statement in the transaction.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.c.ExecContext(ctx, query, args...)
}

// QueryContext runs a query in the transaction.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (Rows, error) {
	return tx.c.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query in the transaction and returns its first
// row.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) Row {
	return tx.c.QueryRowContext(ctx, query, args...)
}

// Pipelined reports whether statements left for later really wait (on
// PostgreSQL); on SQLite, where a statement costs no round trip, Later
// runs them at once.
func (tx *Tx) Pipelined() bool { return tx.pg != nil }

// PlanForValues has PostgreSQL plan the transaction's later statements
// for the values they are given, each time, instead of keeping the one
// generic plan per statement that Open sets the connections to: for the
// few transactions (a readings batch, a bill run) whose statements read
// hundreds of rows by long lists of IDs. A generic plan is made at the
// statement's first run, with the statistics of that moment and without
// the values; one made while the tables were small (a new deployment, a
// dorm just onboarded) read every reading of the month for each room of
// a batch, or every bill for each reading of a bill run, taking a bill
// run from milliseconds to seconds as the tables grew. Planning anew
// costs these statements little beside their work. It travels with the
// next round trip; SQLite plans each statement once (see keepPlan) and
// needs nothing.
func (tx *Tx) PlanForValues() {
	if tx.pg != nil {
		tx.pg.queued = append(tx.pg.queued, Stmt{SQL: `SET LOCAL plan_cache_mode = force_custom_plan`, What: "database: plan for values"})
	}
}

// Later runs a statement whose answer the transaction needs only if it
// fails: on PostgreSQL it travels with the transaction's next statement
// (or COMMIT), a round trip saved, and its error is that statement's.
// Whatever the transaction reads after it sees its change.
func (tx *Tx) Later(ctx context.Context, s Stmt) error {
	if tx.pg != nil {
		tx.pg.queued = append(tx.pg.queued, s)
		return nil
	}
	return tx.ExecAll(ctx, []Stmt{s})
}

// ExecAll runs the statements in order, the first error ending them. On
// PostgreSQL they go in one pipelined batch, one round trip for all.
func (tx *Tx) ExecAll(ctx context.Context, stmts []Stmt) error {
	if tx.pg != nil {
		tx.pg.queued = append(tx.pg.queued, stmts...)
		return tx.pg.flush(ctx)
	}
	for _, s := range stmts {
		if s.Scan != nil {
			if err := s.Scan(tx.c.QueryRowContext(ctx, s.SQL, s.Args...)); err != nil {
				return s.failed(err)
			}
			continue
		}
		if s.Rows != nil {
			rows, err := tx.c.QueryContext(ctx, s.SQL, s.Args...)
			if err == nil {
				err = s.Rows(rows)
				if cerr := rows.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return s.failed(err)
			}
			continue
		}
		res, err := tx.c.ExecContext(ctx, s.SQL, s.Args...)
		if err != nil {
			return s.failed(err)
		}
		n, _ := res.RowsAffected()
		if err := s.judge(n); err != nil {
			return err
		}
	}
	return nil
}

// AtCommit leaves statements for Commit, which sends them with COMMIT:
// their checks (Lost) then fail the commit.
func (tx *Tx) AtCommit(s ...Stmt) { tx.atCommit = append(tx.atCommit, s...) }

// OnCommit calls fn once the transaction has committed, not if it fails or
// is rolled back.
func (tx *Tx) OnCommit(fn func()) { tx.onCommit = append(tx.onCommit, fn) }

// Work is a writer's work once kept (see Tx.OnKept), for a later writer
// to ask whether it reads it (Tx.Sees) before relying on what it knew.
type Work struct {
	// b is the SQLite group whose transaction holds the work; nil on
	// PostgreSQL, where work is kept only once committed.
	b *batch
}

// OnKept calls fn with tx's work once it is kept: on PostgreSQL when the
// transaction has committed; on SQLite as tx leaves its group with its
// work in it, before the process's next writer begins, while the group's
// commit is still to come and may fail (Sees then says so). It is how a
// writer leaves the next one what it knew, without the next one's waiting
// for a commit.
func (tx *Tx) OnKept(fn func(Work)) { tx.onKept = append(tx.onKept, fn) }

// Sees reports whether tx reads all of w: w is committed, or on SQLite is
// in the group whose transaction tx is part of. Work whose group's commit
// failed, or is still to come in a group tx is not part of, it does not.
func (tx *Tx) Sees(w Work) bool {
	if w.b == nil || w.b == tx.b {
		return true
	}
	select {
	case <-w.b.done:
		return w.b.err == nil
	default:
		return false
	}
}

// OnFail tells fn the transaction's first failure on PostgreSQL, where a
// statement left for later fails with a statement sent after it (SQLite
// runs each at once, and its caller sees the failure).
func (tx *Tx) OnFail(fn func(error)) {
	if tx.pg != nil {
		tx.pg.onFail = fn
	}
}

// Err is the transaction's first failure on PostgreSQL, which every later
// statement, and Commit, return too; on SQLite the failure that broke its
// group (see txConn); nil while there is none.
func (tx *Tx) Err() error {
	if tx.pg != nil {
		return tx.pg.err
	}
	return tx.b.broken
}

// Commit runs first and the statements left for the commit (AtCommit), and
// commits: on PostgreSQL all of them and COMMIT go in one round trip. A
// statement's check that fails is the error, unwrapped if it is the
// statement's Lost or Taken; the transaction is then rolled back.
func (tx *Tx) Commit(first ...Stmt) error {
	if tx.ended {
		return sql.ErrTxDone
	}
	ctx := context.Background()
	last := append(first, tx.atCommit...)
	var err error
	if tx.pg != nil {
		err = tx.pg.commit(ctx, last)
	} else {
		err = tx.commitMember(ctx, last)
	}
	if err != nil {
		tx.Rollback()
		return fmt.Errorf("database: commit: %w", err)
	}
	tx.end()
	if tx.pg != nil { // on SQLite, kept as it left its group
		for _, fn := range tx.onKept {
			fn(Work{})
		}
	}
	for _, fn := range tx.onCommit {
		fn()
	}
	return nil
}

// Begun reports whether the transaction's first round trip (on
// PostgreSQL: BEGIN and what was queued with it, a claim made ahead among
// them) has been answered; on SQLite, which begins at once, always.
func (tx *Tx) Begun() bool { return tx.pg == nil || tx.pg.begun }

// Rollback abandons the transaction; after Commit it does nothing. On
// SQLite, a transaction that began after other writers' work in its group
// returns that work's failure, if its commit failed (see rollbackMember).
func (tx *Tx) Rollback() error {
	if tx.ended {
		return nil
	}
	var err error
	if tx.pg != nil {
		err = tx.pg.rollback()
	} else {
		err = tx.rollbackMember()
	}
	tx.end()
	return err
}

// end gives the connection back to the pool (a group's stays with the
// group).
func (tx *Tx) end() {
	tx.ended = true
	if tx.conn != nil {
		tx.conn.Close()
	}
}

// SQLTx is the transaction on SQLite, for a library that takes a *sql.Tx
// (River's InsertTx), while tx's part of it lasts and no failure broke it
// (see txConn); nil otherwise, and on PostgreSQL, where it is PgxTx.
func (tx *Tx) SQLTx() *sql.Tx {
	if tx.pg != nil || tx.left || tx.ended || tx.b.broken != nil {
		return nil
	}
	return tx.b.tx
}

// PgxTx is the transaction on PostgreSQL as pgx's drivers take it (River's
// pgx driver inserts jobs in it); nil on SQLite. The statements left for
// later are sent before any of its own.
func (tx *Tx) PgxTx() pgx.Tx {
	if tx.pg == nil {
		return nil
	}
	return pgxTx{tx.pg}
}

// judge applies the statement's check to the count of rows it changed.
func (s Stmt) judge(n int64) error {
	if s.Lost != nil && n != 1 {
		return s.Lost
	}
	return nil
}

// failed names the statement in its error; or it is the statement's Lost
// error when it failed as its check makes it fail, its Taken error when
// it failed on a unique constraint.
func (s Stmt) failed(err error) error {
	switch {
	case s.Lost != nil && IsCheckFailure(err):
		return s.Lost
	case s.Taken != nil && IsUniqueViolation(err):
		return s.Taken
	}
	return fmt.Errorf("%s: %w", s.What, err)
}

// Ahead queues s for the transaction's next round trip on PostgreSQL,
// where it travels with the next statement, and reports true; on SQLite it
// does nothing and reports false, and the caller does the work as usual:
// for statements worth sending only when they cost no round trip of
// their own (a read made ahead, a check carried along).
func (tx *Tx) Ahead(s Stmt) bool {
	if tx.pg == nil {
		return false
	}
	tx.pg.queued = append(tx.pg.queued, s)
	return true
}
