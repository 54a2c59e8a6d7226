package database_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// The engine's conformance suite: every test runs on SQLite (a temporary
// file) and on PostgreSQL (a fresh schema, when RENTAPI_TEST_POSTGRES
// names a database; skipped otherwise), over a table of its own, so that
// what the store relies on is checked without the store's schema.

// postgresEnv names the variable holding the PostgreSQL DSN for tests.
const postgresEnv = "RENTAPI_TEST_POSTGRES"

// bundle is what a test works with (see setup).
type bundle struct {
	db     *database.DB
	engine database.Engine
	clock  *clock
	// dsn reaches the same database, for a second DB.
	dsn string
}

// clock is a clock tests move.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// each runs fn once per engine, the two in parallel.
func each(t *testing.T, opts database.Options, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for _, engine := range []database.Engine{database.SQLite, database.Postgres} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, engine, opts))
		})
	}
}

// setup opens a database of the engine with opts (its clock is the
// bundle's) and creates the suite's table, things.
func setup(t *testing.T, engine database.Engine, opts database.Options) *bundle {
	t.Helper()
	var dsn string
	switch engine {
	case database.SQLite:
		dsn = "sqlite:" + filepath.Join(t.TempDir(), "test.db")
	case database.Postgres:
		dsn = freshSchema(t)
	}
	b := &bundle{engine: engine, clock: &clock{t: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}, dsn: dsn}
	opts.Now = b.clock.Now
	db, err := database.Open(t.Context(), dsn, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b.db = db
	if _, err := db.WritePool().ExecContext(t.Context(), `CREATE TABLE things (id TEXT PRIMARY KEY, n BIGINT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return b
}

// freshSchema creates a schema of the configured PostgreSQL database,
// dropped when the test ends, and returns a DSN that works in it; it skips
// the test when no database is configured.
func freshSchema(t *testing.T) string {
	t.Helper()
	base := os.Getenv(postgresEnv)
	if base == "" {
		t.Skip(postgresEnv + " not set")
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	schema := "db_" + strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.Itoa(int(schemas.Add(1)))
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer a.Close()
		if _, err := a.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

var schemas atomic.Int64

// count reads how many things there are, outside any transaction.
func (b *bundle) count(t *testing.T) int {
	t.Helper()
	var n int
	if err := b.db.Reader().QueryRowContext(t.Context(), `SELECT count(*) FROM things`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func insert(id string, n int) database.Stmt {
	return database.Stmt{SQL: `INSERT INTO things (id, n) VALUES ($1, $2)`, Args: []any{id, n}, What: "test: insert " + id}
}

// TestCommitAndRollback: a committed write is seen by the read pool, a
// rolled-back one is not, and a rollback after the commit does nothing.
func TestCommitAndRollback(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('a', 1)`); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT n FROM things WHERE id = 'a'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the transaction reads its own write: %d, %v", n, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatalf("rollback after commit: %v", err)
		}
		if got := b.count(t); got != 1 {
			t.Fatalf("after commit: %d things, want 1", got)
		}
		tx, err = b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('b', 2)`); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if got := b.count(t); got != 1 {
			t.Fatalf("after rollback: %d things, want 1", got)
		}
		// The connection went back: the (single, on SQLite) writer is free.
		if _, err := b.db.Writer().ExecContext(ctx, `DELETE FROM things WHERE id = 'a'`); err != nil {
			t.Fatal(err)
		}
	})
}

// TestNow: a transaction's Now is the clock's when it began, in UTC, and
// stays so however the clock moves.
func TestNow(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		want := b.clock.Now()
		tx, err := b.db.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		b.clock.advance(time.Hour)
		if !tx.Now.Equal(want) || tx.Now.Location() != time.UTC {
			t.Fatalf("Now = %v, want %v in UTC", tx.Now, want)
		}
		if !b.db.Now().Equal(want.Add(time.Hour)) {
			t.Fatalf("the DB's clock: %v", b.db.Now())
		}
	})
}

// TestLater: a statement left for later is seen by what the transaction
// reads next, and committed with it; its failure is the transaction's, at
// once on SQLite, with the next round trip on PostgreSQL, and then every
// statement after it fails too.
func TestLater(t *testing.T) {
	t.Parallel()
	errGone := errors.New("the thing is gone")
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Later(ctx, insert("a", 1)); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM things`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("read after Later: %d, %v", n, err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}

		// A must-change-one statement that changes nothing.
		tx, err = b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		bump := database.Stmt{SQL: `UPDATE things SET n = n + 1 WHERE id = $1`, Args: []any{"missing"}, What: "test: bump", Lost: errGone}
		err = tx.Later(ctx, bump)
		if b.engine == database.SQLite {
			if !errors.Is(err, errGone) {
				t.Fatalf("SQLite: Later = %v, want the statement's Lost", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("PostgreSQL: Later sent its statement: %v", err)
		}
		if !tx.Pipelined() || tx.Err() != nil {
			t.Fatalf("before the round trip: Pipelined %v, Err %v", tx.Pipelined(), tx.Err())
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('b', 2)`); !errors.Is(err, errGone) {
			t.Fatalf("the next statement: %v, want the Lost of the one before", err)
		}
		if !errors.Is(tx.Err(), errGone) {
			t.Fatalf("Err = %v", tx.Err())
		}
		if _, err := tx.ExecContext(ctx, `SELECT 1`); !errors.Is(err, errGone) {
			t.Fatalf("a statement after the failure: %v", err)
		}
		if err := tx.Commit(); !errors.Is(err, errGone) {
			t.Fatalf("Commit = %v, want the failure", err)
		}
		if got := b.count(t); got != 1 {
			t.Fatalf("%d things, want 1", got)
		}
	})
}

// TestAtCommit: statements left for the commit run with it, and one whose
// check fails (a must-change-one that changes none) fails the commit with
// its Lost error, undoing the whole transaction.
func TestAtCommit(t *testing.T) {
	t.Parallel()
	errGone := errors.New("the thing is gone")
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tx.AtCommit(insert("a", 1))
		if err := tx.Commit(insert("b", 2)); err != nil {
			t.Fatal(err)
		}
		if got := b.count(t); got != 2 {
			t.Fatalf("%d things, want 2", got)
		}
		for _, checked := range []bool{false, true} {
			tx, err := b.db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM things`); err != nil {
				t.Fatal(err)
			}
			s := database.Stmt{SQL: `UPDATE things SET n = 0 WHERE id = 'a'`, What: "test: zero", Lost: errGone}
			if checked {
				if b.engine != database.Postgres {
					tx.Rollback()
					continue
				}
				s.SQL, s.Checked = database.MustChangeOne(s.SQL), true
			}
			tx.AtCommit(s)
			if err := tx.Commit(); !errors.Is(err, errGone) {
				t.Fatalf("checked %v: Commit = %v, want the statement's Lost", checked, err)
			}
			if got := b.count(t); got != 2 {
				t.Fatalf("checked %v: the failed commit left %d things, want 2", checked, got)
			}
		}
	})
}

// TestQueuedReads: statements that read (Scan, Rows) run in order with the
// others, sent ahead on PostgreSQL (Ahead) or at once (ExecAll).
func TestQueuedReads(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var one int
		var ids []string
		err = tx.ExecAll(ctx, []database.Stmt{insert("a", 1), insert("b", 2),
			{SQL: `SELECT n FROM things WHERE id = 'a'`, What: "test: one", Scan: func(r database.Row) error { return r.Scan(&one) }},
			{SQL: `SELECT id FROM things ORDER BY id`, What: "test: all", Rows: func(rows database.Rows) error {
				for rows.Next() {
					var id string
					if err := rows.Scan(&id); err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return rows.Err()
			}}})
		if err != nil || one != 1 || len(ids) != 2 {
			t.Fatalf("ExecAll: %v, one %d, ids %v", err, one, ids)
		}
		var ahead int
		sent := tx.Ahead(database.Stmt{SQL: `SELECT n FROM things WHERE id = 'b'`, What: "test: ahead", Scan: func(r database.Row) error { return r.Scan(&ahead) }})
		if sent != (b.engine == database.Postgres) {
			t.Fatalf("Ahead = %v on %s", sent, b.engine)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE things SET n = 3 WHERE id = 'b'`); err != nil {
			t.Fatal(err)
		}
		if sent && ahead != 2 {
			t.Fatalf("the read sent ahead, before the update: %d", ahead)
		}
	})
}

// TestOnCommit: hooks run once the transaction committed, and not when it
// rolled back or its commit failed; so does OnKept's, whose work a later
// writer then Sees.
func TestOnCommit(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		var calls []string
		var kept []database.Work
		for _, end := range []string{"commit", "rollback", "failed commit"} {
			tx, err := b.db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tx.OnCommit(func() { calls = append(calls, end) })
			tx.OnKept(func(w database.Work) { kept = append(kept, w) })
			switch end {
			case "commit":
				err = tx.Commit(insert("a", 1))
			case "rollback":
				err = tx.Rollback()
			case "failed commit":
				if err = tx.Commit(insert("a", 1)); err == nil {
					t.Fatal("a duplicate committed")
				}
				err = nil
			}
			if err != nil {
				t.Fatalf("%s: %v", end, err)
			}
		}
		if len(calls) != 1 || calls[0] != "commit" {
			t.Fatalf("hooks called for %v, want only the commit", calls)
		}
		if len(kept) != 1 {
			t.Fatalf("%d works kept; want the commit's alone", len(kept))
		}
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if !tx.Sees(kept[0]) {
			t.Fatal("a later writer does not see committed work")
		}
	})
}

// TestOnKept: on SQLite a writer's work is kept as it leaves its group,
// and a later writer Sees it while it waits in the group the later writer
// is part of, once committed, and no longer once that group's commit is
// lost (TestOnCommit: kept only when committed, on both engines).
func TestOnKept(t *testing.T) {
	t.Parallel()
	b := setup(t, database.SQLite, database.Options{})
	ctx := t.Context()
	// first begins a writer whose work is id, to be kept in a group with
	// a second writer, and returns both, the first's work as its hook was
	// given it, and the first's Commit's result.
	first := func(id string) (tx2 *database.Tx, w database.Work, committed <-chan error) {
		t.Helper()
		tx1, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var kept []database.Work
		tx1.OnKept(func(w database.Work) { kept = append(kept, w) })
		if err := tx1.ExecAll(ctx, []database.Stmt{insert(id, 1)}); err != nil {
			t.Fatal(err)
		}
		tx2, committed = joinGroup(t, b, ctx, tx1)
		if len(kept) != 1 {
			t.Fatalf("the first writer's work was kept %d times as it left its group", len(kept))
		}
		return tx2, kept[0], committed
	}

	tx2, w, committed := first("g1")
	if !tx2.Sees(w) {
		t.Fatal("a writer of the group does not see the work of one before it")
	}
	if err := tx2.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	tx, err := b.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !tx.Sees(w) {
		t.Fatal("a writer of the next group does not see a committed group's work")
	}
	tx.Rollback()

	tx2, w, committed = first("g2")
	// A full disk: SQLite may roll the whole transaction back (as in
	// TestGroupCommit).
	var pages int64
	if err := tx2.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := tx2.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.FormatInt(pages, 10)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx2.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100000)
		INSERT INTO things (id, n) SELECT 'big' || i, i FROM s`); err == nil {
		t.Fatal("the disk was not full")
	}
	tx2.Rollback()
	if err := <-committed; err == nil {
		t.Fatal("the lost group's commit succeeded")
	}
	tx, err = b.db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if tx.Sees(w) {
		t.Fatal("a writer sees work whose group's commit was lost")
	}
}

// TestUniqueViolation: both engines' unique failures are recognized, on
// a plain statement and as a statement's Taken error; nothing else is.
func TestUniqueViolation(t *testing.T) {
	t.Parallel()
	errTaken := errors.New("taken")
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		if _, err := b.db.Writer().ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('a', 1)`); err != nil {
			t.Fatal(err)
		}
		_, err := b.db.Writer().ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('a', 2)`)
		if err == nil || !database.IsUniqueViolation(err) {
			t.Fatalf("duplicate: %v, IsUniqueViolation false", err)
		}
		_, err = b.db.Writer().ExecContext(ctx, `INSERT INTO things (id) VALUES ('b')`)
		if err == nil || database.IsUniqueViolation(err) || database.Refused(err) {
			t.Fatalf("a NOT NULL failure: %v, taken for a unique violation or a refusal", err)
		}
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		s := insert("a", 3)
		s.Taken = errTaken
		err = tx.Later(ctx, s)
		if err == nil {
			err = tx.Commit()
		}
		if !errors.Is(err, errTaken) {
			t.Fatalf("Later's duplicate: %v, want its Taken", err)
		}
	})
}

// TestBoundedWait: a statement that waits for a connection longer than
// Options.Wait fails with Unavailable (503 service_unavailable), and so
// does Begin; a caller that gives up first gets its own context's error.
func TestBoundedWait(t *testing.T) {
	t.Parallel()
	each(t, database.Options{MaxConns: 1, Wait: 100 * time.Millisecond}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		held, err := b.db.Begin(ctx) // the one write connection
		if err != nil {
			t.Fatal(err)
		}
		if _, err := held.ExecContext(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		unavailable := func(what string, err error, start time.Time) {
			t.Helper()
			e, ok := rental.AsError(err)
			if !ok || e.Kind != rental.KindUnavailable || e.RetryAfter <= 0 {
				t.Fatalf("%s: %v, want unavailable with Retry-After", what, err)
			}
			if waited := time.Since(start); waited < 100*time.Millisecond || waited > 5*time.Second {
				t.Fatalf("%s: waited %v", what, waited)
			}
		}
		start := time.Now()
		_, err = b.db.Begin(ctx)
		unavailable("Begin", err, start)
		start = time.Now()
		_, err = b.db.Writer().ExecContext(ctx, `DELETE FROM things`)
		unavailable("a statement", err, start)
		gone, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := b.db.Writer().ExecContext(gone, `DELETE FROM things`); !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled wait: %v", err)
		}
		if err := held.Rollback(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.db.Writer().ExecContext(ctx, `DELETE FROM things`); err != nil {
			t.Fatalf("once the connection is back: %v", err)
		}
	})
}

// versionCheck is a Check of the test's own: things' row 'v' must still
// hold n.
type versionCheck struct {
	n    int
	ran  bool
	held bool
	runs int
}

var errMoved = errors.New("the version moved")

func (c *versionCheck) Pending() (database.Stmt, bool) {
	if c.ran {
		return database.Stmt{}, false
	}
	return database.Stmt{SQL: `SELECT n FROM things WHERE id = 'v'`, What: "test: version", Scan: func(r database.Row) error {
		var n int
		err := r.Scan(&n)
		c.ran, c.held, c.runs = true, err == nil && n == c.n, c.runs+1
		if err != nil {
			return err
		}
		return c.Outcome()
	}}, true
}

func (c *versionCheck) Outcome() error {
	if c.held {
		return nil
	}
	return errMoved
}

// TestReadChecked: a read carrying a Check runs it once, with its first
// statement, and answers only while it held.
func TestReadChecked(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		if _, err := b.db.Writer().ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('v', 7), ('a', 1)`); err != nil {
			t.Fatal(err)
		}
		held := &versionCheck{n: 7}
		c := b.db.ReadChecked(held)
		for range 2 {
			var n int
			if err := c.QueryRowContext(ctx, `SELECT n FROM things WHERE id = 'a'`).Scan(&n); err != nil || n != 1 {
				t.Fatalf("a read under a check that holds: %d, %v", n, err)
			}
		}
		if _, err := c.ExecContext(ctx, `SELECT 1`); err != nil {
			t.Fatal(err)
		}
		if held.runs != 1 {
			t.Fatalf("the check ran %d times, want once", held.runs)
		}
		moved := &versionCheck{n: 6}
		c = b.db.ReadChecked(moved)
		for range 2 {
			if _, err := c.QueryContext(ctx, `SELECT n FROM things`); !errors.Is(err, errMoved) {
				t.Fatalf("a read under a check that failed: %v", err)
			}
		}
		if _, err := b.db.ReadChecked(&versionCheck{n: 6}).ExecContext(ctx, `SELECT 1`); !errors.Is(err, errMoved) {
			t.Fatalf("a statement under a check that failed: %v", err)
		}
		if moved.runs != 1 {
			t.Fatalf("the check ran %d times, want once", moved.runs)
		}
	})
}

// TestOpen: a DSN the engine cannot serve is refused with a clear error
// that does not show the password.
func TestOpen(t *testing.T) {
	t.Parallel()
	for _, dsn := range []string{"sqlite:", "sqlite::memory:", "mysql://u:hunter2@localhost/db"} {
		_, err := database.Open(t.Context(), dsn, database.Options{})
		if err == nil {
			t.Fatalf("%s: opened", dsn)
		}
		if s := err.Error(); len(s) == 0 || strings.Contains(s, "hunter2") {
			t.Fatalf("%s: %q", dsn, s)
		}
	}
	if _, err := database.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "x.db"), database.Options{MaxConns: -1}); err == nil {
		t.Fatal("a negative MaxConns was taken")
	}
}

// TestPrivateFile: a new SQLite database file is its owner's only.
func TestPrivateFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "private.db")
	db, err := database.Open(t.Context(), "sqlite:"+path, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Fatalf("mode %o, want 600", mode)
	}
}

// Append writes every row in one go (COPY on PostgreSQL, several INSERTs
// on SQLite), or none of them.
func TestAppend(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		rows := thingRows(1000)
		if err := b.db.Append(t.Context(), "things", []string{"id", "n"}, rows); err != nil {
			t.Fatal(err)
		}
		if err := b.db.Append(t.Context(), "things", []string{"id", "n"}, nil); err != nil {
			t.Fatalf("nothing to append: %v", err)
		}
		var n, sum int64
		if err := b.db.Reader().QueryRowContext(t.Context(), `SELECT count(*), sum(n) FROM things`).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if n != 1000 || sum != 999*1000/2 {
			t.Fatalf("count %d, sum %d; want 1000, %d", n, sum, 999*1000/2)
		}
		// A row that breaks a constraint refuses the whole batch, also the
		// statements before its own (64 rows each on SQLite).
		batch := make([][]any, 0, 101)
		for i := range 100 {
			batch = append(batch, []any{"new" + strconv.Itoa(i), int64(i)})
		}
		err := b.db.Append(t.Context(), "things", []string{"id", "n"}, append(batch, []any{"t5", int64(5)}))
		if !database.IsUniqueViolation(err) {
			t.Fatalf("duplicate id: %v, want a unique violation", err)
		}
		if got := b.count(t); got != 1000 {
			t.Fatalf("after a refused batch: %d things, want 1000", got)
		}
		// So does a row of the wrong width, with an error, not a panic.
		if err := b.db.Append(t.Context(), "things", []string{"id", "n"}, [][]any{{"w1", int64(1)}, {"w2"}}); err == nil {
			t.Fatal("a row of one value for two columns was taken")
		}
		if got := b.count(t); got != 1000 {
			t.Fatalf("after a refused batch: %d things, want 1000", got)
		}
		// The connection is usable after them, and values that are not
		// the driver's own types (an int) are converted.
		if err := b.db.Append(t.Context(), "things", []string{"id", "n"}, [][]any{{"after", 7}}); err != nil {
			t.Fatalf("after refused batches: %v", err)
		}
		if got := b.count(t); got != 1001 {
			t.Fatalf("%d things, want 1001", got)
		}
	})
}

// InsertRows makes statements of 64, 32, ... rows that insert every row
// with its own values, on either engine's placeholders.
func TestInsertRows(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		rows := thingRows(130)
		stmts := tx.InsertRows(`INSERT INTO things (id, n) VALUES `, "test: insert things", rows)
		if len(stmts) != 3 || len(stmts[0].Args) != 128 || len(stmts[2].Args) != 4 {
			t.Fatalf("%d statements; want 64, 64 and 2 rows", len(stmts))
		}
		if err := tx.ExecAll(ctx, stmts); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		var n, sum int64
		if err := b.db.Reader().QueryRowContext(ctx, `SELECT count(*), sum(n) FROM things WHERE n = CAST(substr(id, 2) AS INTEGER)`).Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if n != 130 || sum != 129*130/2 {
			t.Fatalf("%d rows with their own values (sum %d); want 130", n, sum)
		}
	})
}

// thingRows are n rows of things: ("t<i>", i).
func thingRows(n int) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{"t" + strconv.Itoa(i), int64(i)}
	}
	return rows
}

// grouped begins a writer with first's work and a second writer that
// waits for the turn behind it, then commits the first: with the second
// waiting, the first hands it the open transaction (see database.Begin),
// and its Commit, whose result comes on the channel, waits for the
// group's. The second writer's context is ctx.
func grouped(t *testing.T, b *bundle, ctx context.Context, first ...database.Stmt) (tx1, tx2 *database.Tx, committed <-chan error) {
	t.Helper()
	tx1, err := b.db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tx1.ExecAll(t.Context(), first); err != nil {
		t.Fatal(err)
	}
	tx2, committed = joinGroup(t, b, ctx, tx1)
	return tx1, tx2, committed
}

// joinGroup is grouped for a first writer the caller began: a second
// writer (of context ctx) waits behind tx1, which then commits.
func joinGroup(t *testing.T, b *bundle, ctx context.Context, tx1 *database.Tx) (tx2 *database.Tx, committed <-chan error) {
	t.Helper()
	second := make(chan *database.Tx, 1)
	go func() {
		tx2, err := b.db.Begin(ctx)
		if err != nil {
			t.Error(err)
		}
		second <- tx2
	}()
	for database.Waiting(b.db) == 0 {
		time.Sleep(time.Millisecond)
	}
	result := make(chan error, 1)
	go func() { result <- tx1.Commit() }()
	if tx2 = <-second; tx2 == nil {
		t.FailNow()
	}
	return tx2, result
}

// TestGroupCommit: on SQLite a writer that finds another waiting leaves it
// the open transaction, and its Commit returns when the group's has: the
// second sees the first's work, nobody else does until then, a member's
// failure or rollback undoes its own work and no other's, a member's
// cancelled context does not reach the shared transaction, and a group
// whose transaction is lost fails every member's Commit.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	b := setup(t, database.SQLite, database.Options{})
	ctx := t.Context()
	pending := func(committed <-chan error) {
		t.Helper()
		select {
		case err := <-committed:
			t.Fatalf("the first writer's Commit returned (%v) before its group's commit", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	has := func(id string) bool {
		t.Helper()
		var n int
		if err := b.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM things WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	t.Run("shared", func(t *testing.T) {
		_, tx2, committed := grouped(t, b, ctx, insert("a", 1))
		var n int
		if err := tx2.QueryRowContext(ctx, `SELECT n FROM things WHERE id = 'a'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the second writer reads the first's row: %d, %v", n, err)
		}
		pending(committed)
		if has("a") {
			t.Fatal("a reader sees the group's work before its commit")
		}
		if err := tx2.Commit(insert("b", 2)); err != nil {
			t.Fatal(err)
		}
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		if !has("a") || !has("b") {
			t.Fatal("the group's commit lost a member's row")
		}
	})

	t.Run("member fails", func(t *testing.T) {
		_, tx2, committed := grouped(t, b, ctx, insert("c", 3))
		if err := tx2.ExecAll(ctx, []database.Stmt{insert("d", 4), insert("c", 5)}); !database.IsUniqueViolation(errors.Unwrap(err)) {
			t.Fatalf("a second c: %v", err)
		}
		if err := tx2.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		if !has("c") || has("d") {
			t.Fatalf("c %v (want it), d %v (rolled back)", has("c"), has("d"))
		}
	})

	t.Run("first writer rolls back", func(t *testing.T) {
		// The first writer runs in no savepoint: a failed statement
		// undoes itself alone, and its rollback undoes the whole
		// transaction, while the writer after it begins another.
		tx1, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx1.ExecAll(ctx, []database.Stmt{insert("p", 8), insert("p", 9)}); !database.IsUniqueViolation(errors.Unwrap(err)) {
			t.Fatalf("a second p: %v", err)
		}
		var n int
		if err := tx1.QueryRowContext(ctx, `SELECT n FROM things WHERE id = 'p'`).Scan(&n); err != nil || n != 8 {
			t.Fatalf("p after the failed statement: %d, %v; want 8", n, err)
		}
		second := make(chan error, 1)
		go func() {
			tx2, err := b.db.Begin(ctx)
			if err == nil {
				err = tx2.Commit(insert("q", 10))
			}
			second <- err
		}()
		for database.Waiting(b.db) == 0 {
			time.Sleep(time.Millisecond)
		}
		if err := tx1.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		if has("p") || !has("q") {
			t.Fatalf("p %v (rolled back), q %v (want it)", has("p"), has("q"))
		}
	})

	t.Run("member cancelled", func(t *testing.T) {
		gone, cancel := context.WithCancel(ctx)
		_, tx2, committed := grouped(t, b, gone, insert("e", 6))
		cancel()
		if _, err := tx2.ExecContext(gone, `UPDATE things SET n = 7 WHERE id = 'e'`); err != nil {
			t.Fatalf("a statement of the cancelled writer: %v", err)
		}
		if err := tx2.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		var n int
		if err := b.db.Reader().QueryRowContext(ctx, `SELECT n FROM things WHERE id = 'e'`).Scan(&n); err != nil || n != 6 {
			t.Fatalf("e: %d, %v; want the first writer's 6", n, err)
		}
	})

	t.Run("open rows and a finished member", func(t *testing.T) {
		_, tx2, committed := grouped(t, b, ctx, insert("j", 11))
		rows, err := tx2.QueryContext(ctx, `INSERT INTO things (id, n) VALUES ('k', 12), ('l', 13) RETURNING id`)
		if err != nil || !rows.Next() {
			t.Fatalf("insert returning: %v", err)
		}
		// rows left open: SQLite releases no savepoint under them.
		if err := tx2.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		if !has("j") || !has("k") || !has("l") {
			t.Fatalf("j %v, k %v, l %v", has("j"), has("k"), has("l"))
		}
		// A member that has left runs nothing in the next one's work.
		tx1, tx2, committed := grouped(t, b, ctx, insert("m", 14))
		if _, err := tx1.ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('n', 15)`); !errors.Is(err, sql.ErrTxDone) {
			t.Fatalf("a statement of a member that has left: %v", err)
		}
		if tx1.SQLTx() != nil {
			t.Fatal("SQLTx of a member that has left")
		}
		if err := tx2.Rollback(); err != nil {
			t.Fatal(err)
		}
		if err := <-committed; err != nil || !has("m") || has("n") {
			t.Fatalf("commit %v, m %v, n %v", err, has("m"), has("n"))
		}
	})

	t.Run("rollbacks only", func(t *testing.T) {
		// Writers that all roll back, one always waiting: the write
		// connection still goes to a statement that waits for it.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					tx, err := b.db.Begin(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					tx.ExecContext(ctx, `SELECT 1`)
					tx.Rollback()
				}
			})
		}
		defer wg.Wait()
		defer close(stop)
		time.Sleep(10 * time.Millisecond)
		wait, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := b.db.WritePool().ExecContext(wait, `UPDATE things SET n = n WHERE id = 'a'`); err != nil {
			t.Fatalf("the write pool, beside writers that roll back: %v", err)
		}
	})

	t.Run("log restart", func(t *testing.T) {
		// A restart of the log waits for the writers' turn, and commits
		// the group it finds open before it runs.
		tx1, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		restarted := make(chan error, 1)
		go func() { restarted <- database.RestartLog(b.db) }()
		for database.Waiting(b.db) == 0 {
			time.Sleep(time.Millisecond)
		}
		if err := tx1.Commit(insert("r", 16)); err != nil {
			t.Fatal(err)
		}
		if err := <-restarted; err != nil {
			t.Fatal(err)
		}
		if !has("r") {
			t.Fatal("r is not there")
		}
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(insert("s", 17)); err != nil || !has("s") {
			t.Fatalf("after the restart: %v", err)
		}
	})

	t.Run("group lost", func(t *testing.T) {
		_, tx2, committed := grouped(t, b, ctx, insert("g", 8))
		// A full disk: SQLite may roll the whole transaction back.
		var pages int64
		if err := tx2.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if _, err := tx2.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.FormatInt(pages, 10)); err != nil {
			t.Fatal(err)
		}
		_, err := tx2.ExecContext(ctx, `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 100000)
			INSERT INTO things (id, n) SELECT 'big' || i, i FROM s`)
		if err == nil {
			t.Fatal("the disk was not full")
		}
		if _, err := tx2.ExecContext(ctx, `INSERT INTO things (id, n) VALUES ('h', 9)`); err == nil {
			t.Fatal("a statement after the group was lost ran")
		}
		// The second writer read the first's work (g): its Rollback says
		// that work is lost, so that nothing is answered from it.
		if err := tx2.Rollback(); err == nil {
			t.Fatal("the second writer's Rollback did not say the group was lost")
		}
		if err := <-committed; err == nil {
			t.Fatal("the first writer's Commit succeeded, its work lost")
		}
		if has("g") || has("h") {
			t.Fatalf("g %v, h %v: a lost group's work is there", has("g"), has("h"))
		}
		// The next writer starts a new group.
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `PRAGMA max_page_count = 1073741823`); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(insert("i", 10)); err != nil || !has("i") {
			t.Fatalf("after a lost group: %v", err)
		}
	})
}

// TestPlanForValues: on PostgreSQL the transaction's statements after
// PlanForValues are planned for their values (plan_cache_mode), and the
// setting ends with the transaction, committed or rolled back; on SQLite
// it changes nothing, and the transaction works as before on both.
func TestPlanForValues(t *testing.T) {
	t.Parallel()
	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		ctx := t.Context()
		mode := func(tx *database.Tx) string {
			t.Helper()
			if b.engine == database.SQLite {
				return ""
			}
			var m string
			if err := tx.QueryRowContext(ctx, `SELECT current_setting('plan_cache_mode')`).Scan(&m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		// The connections' own mode (Open's force_generic_plan), then the
		// transaction's.
		want := map[database.Engine][2]string{database.SQLite: {"", ""}, database.Postgres: {"force_generic_plan", "force_custom_plan"}}[b.engine]
		for _, commit := range []bool{true, false} {
			tx, err := b.db.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := mode(tx); got != want[0] {
				t.Fatalf("before: %q, want %q", got, want[0])
			}
			tx.PlanForValues()
			if err := tx.Later(ctx, insert(map[bool]string{true: "kept", false: "undone"}[commit], 1)); err != nil {
				t.Fatal(err)
			}
			if got := mode(tx); got != want[1] {
				t.Fatalf("after PlanForValues: %q, want %q", got, want[1])
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := b.count(t); got != 1 {
			t.Fatalf("%d things, want the committed one", got)
		}
		tx, err := b.db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if got := mode(tx); got != want[0] {
			t.Fatalf("the next transaction: %q, want %q", got, want[0])
		}
	})
}
