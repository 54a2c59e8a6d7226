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

// TestKeepPlan: bound LIMIT and OFFSET values get a unary plus, in any
// case and spacing and whatever the placeholder's style, other text is
// left alone, and the statements answer as written.
func TestKeepPlan(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`SELECT 1 LIMIT ?`:                         `SELECT 1 LIMIT +?`,
		"SELECT 1 limit\n\t?3 offset $4":           "SELECT 1 limit\n\t+?3 offset +$4",
		`SELECT 1 LIMIT :n OFFSET @m`:              `SELECT 1 LIMIT +:n OFFSET +@m`,
		`SELECT 1 LIMIT 10`:                        `SELECT 1 LIMIT 10`,
		`SELECT 1 LIMIT ?2 - 1`:                    `SELECT 1 LIMIT +?2 - 1`,
		`SELECT unlimited FROM t WHERE a = ?`:      `SELECT unlimited FROM t WHERE a = ?`,
		`SELECT 1 FROM t WHERE x_limit ?`:          `SELECT 1 FROM t WHERE x_limit ?`,
		`SELECT 1 LIMIT (SELECT n FROM t LIMIT ?)`: `SELECT 1 LIMIT (SELECT n FROM t LIMIT +?)`,
	} {
		if got := keepPlan(in); got != want {
			t.Errorf("keepPlan(%q) = %q, want %q", in, got, want)
		}
	}
	ctx := t.Context()
	db := sql.OpenDB(sqliteConnector{"file:" + filepath.Join(t.TempDir(), "limit.db")})
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, c := range []struct {
		limit, offset any
		want          string
	}{{2, 1, "[2,3]"}, {1, 0, "[1]"}, {"2", 3, "[4,5]"}, {-1, 3, "[4,5]"}, {0, 0, ""}} {
		var got sql.NullString
		err := db.QueryRowContext(ctx, `SELECT json_group_array(value) FROM (SELECT value FROM json_each('[1,2,3,4,5]') ORDER BY key LIMIT ? OFFSET ?)
			HAVING count(*) > 0`, c.limit, c.offset).Scan(&got)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		if got.String != c.want {
			t.Errorf("LIMIT %v OFFSET %v: %q, want %q", c.limit, c.offset, got.String, c.want)
		}
	}
}

// BenchmarkBoundLimit measures a job-queue-like fetch (a bound LIMIT over
// a table, with a json_each subquery) on a cached statement as written,
// which SQLite prepares again at every execution, and as keepPlan keeps it.
func BenchmarkBoundLimit(b *testing.B) {
	ctx := b.Context()
	cn, err := sqliteConnector{"file:" + filepath.Join(b.TempDir(), "limit.db")}.Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer cn.Close()
	c := cn.(*cachingConn)
	if _, err := c.ExecContext(ctx, `CREATE TABLE jobs (id INTEGER PRIMARY KEY, queue TEXT, state TEXT, by TEXT);
		CREATE INDEX jobs_fetch ON jobs (state, queue, id)`, nil); err != nil {
		b.Fatal(err)
	}
	const q = `UPDATE jobs SET state = 'running', by = json_insert((SELECT json_group_array(value) FROM
		(SELECT value FROM json_each(by) ORDER BY key DESC LIMIT ?3 - 1)), '$[#]', ?4)
		WHERE id IN (SELECT id FROM jobs WHERE state = 'available' AND queue = ?1 ORDER BY id LIMIT ?2) RETURNING id`
	args := []driver.NamedValue{{Ordinal: 1, Value: "default"}, {Ordinal: 2, Value: int64(10)}, {Ordinal: 3, Value: int64(100)}, {Ordinal: 4, Value: "me"}}
	for _, way := range []struct {
		name string
		text string
	}{{"as written", q}, {"kept", keepPlan(q)}} {
		b.Run(way.name, func(b *testing.B) {
			st, err := c.base().PrepareContext(ctx, way.text)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			for b.Loop() {
				rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
				if err != nil {
					b.Fatal(err)
				}
				rows.Close()
			}
		})
	}
}
