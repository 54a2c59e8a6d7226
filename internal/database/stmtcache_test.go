package database

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"strconv"
	"testing"
)

// TestStatementCache: a SQLite connection prepares a statement once for
// many queries of the same text, gives a query nested in its own rows a
// statement of its own, does not keep scripts, and keeps at most
// stmtCacheSize statements.
func TestStatementCache(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "cache.db")
	var conns []*cachingConn
	db := sql.OpenDB(connectorFunc(func(ctx context.Context) (driver.Conn, error) {
		cn, err := sqliteConnector{"file:" + path}.Connect(ctx)
		if err == nil {
			conns = append(conns, cn.(*cachingConn))
		}
		return cn, err
	}))
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE things (id INTEGER PRIMARY KEY); INSERT INTO things VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	cn := conns[0]
	if len(cn.stmts) != 0 {
		t.Fatalf("a script was kept: %d statements", len(cn.stmts))
	}
	const q = `SELECT id FROM things ORDER BY id`
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var outer []int
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		outer = append(outer, id)
	}
	if err := rows.Close(); err != nil || len(outer) != 2 {
		t.Fatalf("rows: %v %v", outer, err)
	}
	for range 3 {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM things WHERE id > $1`, 0).Scan(&n); err != nil || n != 2 {
			t.Fatalf("count: %d %v", n, err)
		}
	}
	if len(cn.stmts) != 2 {
		t.Fatalf("%d statements kept, want 2: %v", len(cn.stmts), cn.order)
	}
	// Nested on the connection itself: the busy statement is not shared.
	r1, err := cn.QueryContext(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := cn.QueryContext(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r2.(*cachedRows); ok {
		t.Fatal("the busy statement was shared")
	}
	r2.Close()
	r1.Close()
	if cn.stmts[q].busy {
		t.Fatal("the statement stays busy after its rows closed")
	}
	for i := range stmtCacheSize + 10 {
		if _, err := cn.ExecContext(ctx, `SELECT `+strconv.Itoa(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(cn.stmts) != stmtCacheSize || len(cn.order) != stmtCacheSize {
		t.Fatalf("%d statements kept, want at most %d", len(cn.stmts), stmtCacheSize)
	}
}

type connectorFunc func(context.Context) (driver.Conn, error)

func (f connectorFunc) Connect(ctx context.Context) (driver.Conn, error) { return f(ctx) }
func (connectorFunc) Driver() driver.Driver                              { return sqliteConnector{}.Driver() }
