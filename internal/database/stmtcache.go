package database

import (
	"context"
	"database/sql/driver"
	"reflect"
	"regexp"
	"strings"

	"modernc.org/sqlite"
)

// stmtCacheSize bounds the prepared statements one SQLite connection keeps:
// the store's and the job queue's statements are a few hundred distinct
// texts at most, and each costs SQLite a few kilobytes.
const stmtCacheSize = 256

// sqliteConnector opens SQLite connections that keep their prepared
// statements. database/sql prepares a statement again for every query made
// without an explicit Prepare, and SQLite then parses the SQL text each
// time: under load that parsing was much of a read's CPU. PostgreSQL
// needs no such thing: pgx caches its statements per connection itself.
type sqliteConnector struct{ dsn string }

// Connect opens one connection through the SQLite driver and wraps it.
func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	cn, err := (&sqlite.Driver{}).Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &cachingConn{inner: cn, stmts: map[string]*cachedStmt{}}, nil
}

// Driver is the SQLite driver.
func (sqliteConnector) Driver() driver.Driver { return &sqlite.Driver{} }

// sqliteInner is what the SQLite driver's connection offers and database/sql
// uses.
type sqliteInner interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a SQLite connection whose queries reuse a statement
// prepared earlier for the same SQL text. database/sql uses a connection
// from one goroutine at a time, so it needs no lock; a statement whose rows
// are still open (the same query nested in its own loop) is not shared: that
// query gets a statement of its own, closed with its rows.
type cachingConn struct {
	inner driver.Conn
	stmts map[string]*cachedStmt
	order []string // insertion order, for eviction
}

// cachedStmt is one prepared statement and whether rows still use it.
type cachedStmt struct {
	st   driver.Stmt
	busy bool
}

func (c *cachingConn) base() sqliteInner { return c.inner.(sqliteInner) }

// cacheable reports whether query is one statement worth keeping: a text
// with a semicolon may be a script, which SQLite prepares piece by piece.
func cacheable(query string) bool { return !strings.Contains(query, ";") }

// stmt returns the cached statement for query, preparing it the first time;
// nil when query is not cacheable or its statement is busy.
func (c *cachingConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if !cacheable(query) {
		return nil, nil
	}
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		return cs, nil
	}
	st, err := c.base().PrepareContext(ctx, keepPlan(query))
	if err != nil {
		return nil, err
	}
	if len(c.order) >= stmtCacheSize {
		c.evict()
	}
	cs := &cachedStmt{st: st}
	c.stmts[query] = cs
	c.order = append(c.order, query)
	return cs, nil
}

// boundLimit finds a LIMIT or OFFSET whose value is a bound parameter.
var boundLimit = regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)(\s+)([?$:@])`)

// keepPlan returns query with a unary plus before each bound LIMIT or
// OFFSET value. SQLite's planner reads a bound limit's value when it plans
// (to offer it to a virtual table such as json_each) and so marks the
// statement to be planned again each time that parameter is bound, that
// is at every execution: the job queue's fetch (LIMIT ?3, 40 polls a
// second) spent three quarters of its time in SQLite's parser. The planner
// does not read through the plus, and the value is the same. (The store
// writes its own page limits as numbers; see store.Page.)
func keepPlan(query string) string {
	return boundLimit.ReplaceAllString(query, "$1$2+$3")
}

// evict closes the oldest statement not in use.
func (c *cachingConn) evict() {
	for i, q := range c.order {
		if cs := c.stmts[q]; !cs.busy {
			cs.st.Close()
			delete(c.stmts, q)
			c.order = append(c.order[:i], c.order[i+1:]...)
			return
		}
	}
}

// ExecContext runs query on its cached statement.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.base().ExecContext(ctx, query, args)
	}
	return cs.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

// QueryContext runs query on its cached statement; the statement is busy
// until its rows are closed.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.base().QueryContext(ctx, query, args)
	}
	rows, err := cs.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, cs: cs}, nil
}

// Close closes the cached statements, then the connection.
func (c *cachingConn) Close() error {
	for _, cs := range c.stmts {
		cs.st.Close()
	}
	c.stmts, c.order = nil, nil
	return c.inner.Close()
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) { return c.inner.Prepare(query) }

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.base().PrepareContext(ctx, query)
}

func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.base().BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.base().BeginTx(ctx, opts)
}

func (c *cachingConn) Ping(ctx context.Context) error { return c.base().Ping(ctx) }

func (c *cachingConn) ResetSession(ctx context.Context) error { return c.base().ResetSession(ctx) }

func (c *cachingConn) IsValid() bool { return c.base().IsValid() }

// cachedRows are the rows of a cached statement: closing them resets the
// statement (the driver does) and frees it for the next query.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	return err
}

// The column type methods pass through, for database/sql's ColumnTypes.

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}
