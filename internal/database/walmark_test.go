package database_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"rentapi/internal/database"
)

// childEnv names the database the child process of TestMark writes to.
const childEnv = "RENTAPI_TEST_MARK_CHILD"

// TestMark: SQLite's mark moves with every commit, of this DB, of another
// DB of the same process and of another process, also across a restart of
// the log, and never without one; a DB closed beside another leaves the
// other's mark and SQLite's locks as they were. PostgreSQL has no mark.
func TestMark(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the wal index is mapped on Linux and macOS only")
	}
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "mark.db")
	open := func() *database.DB {
		t.Helper()
		db, err := database.Open(ctx, "sqlite:"+path, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	defer db.Close()
	run := func(d *database.DB, sql string) {
		t.Helper()
		if _, err := d.WritePool().ExecContext(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[database.Mark]string{}
	// moved checks that d's mark is one not seen before.
	moved := func(d *database.DB, step string) {
		t.Helper()
		m, ok := d.Mark()
		if !ok {
			t.Fatalf("%s: no mark", step)
		}
		if before, ok := seen[m]; ok {
			t.Fatalf("%s: the mark of %q", step, before)
		}
		seen[m] = step
	}
	run(db, `CREATE TABLE t (n INTEGER)`)
	moved(db, "table made")
	var n int64
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Mark(); seen[m] != "table made" {
		t.Fatalf("a read moved the mark to that of %q", seen[m])
	}
	run(db, `INSERT INTO t VALUES (1)`)
	moved(db, "row added")
	run(db, `UPDATE t SET n = 2 WHERE n = 5`) // commits nothing
	if m, _ := db.Mark(); seen[m] != "row added" {
		t.Fatal("a write that changed nothing moved the mark")
	}

	second := open()
	if m, _ := second.Mark(); seen[m] != "row added" {
		t.Fatal("two DBs of one file see different marks")
	}
	run(second, `INSERT INTO t VALUES (3)`)
	moved(db, "row added by a second DB")
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Mark(); seen[m] != "row added by a second DB" {
		t.Fatal("closing the second DB moved the mark")
	}

	// Another process writes, after the second DB closed: had its close
	// dropped this process's locks, the child would take the index for
	// unused and start it over.
	child := exec.Command(os.Args[0], "-test.run=^TestMarkChild$")
	child.Env = append(os.Environ(), childEnv+"="+path)
	if out, err := child.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	moved(db, "row added by another process")
	if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM t`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, err)
	}

	if err := database.RestartLog(db); err != nil {
		t.Fatal(err)
	}
	run(db, `INSERT INTO t VALUES (4)`)
	moved(db, "row added after the log restarted")

	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := db.Mark(); ok {
		t.Fatal("a closed DB has a mark")
	}

	each(t, database.Options{}, func(t *testing.T, b *bundle) {
		if _, ok := b.db.Mark(); ok != (b.engine == database.SQLite) {
			t.Fatalf("%s: mark %v", b.engine, ok)
		}
	})
}

// TestMarkChild is TestMark's other process: it adds a row to the
// database named by childEnv.
func TestMarkChild(t *testing.T) {
	path := os.Getenv(childEnv)
	if path == "" {
		t.Skip("run by TestMark")
	}
	// SQLite's connections of the parent hold a read lock on the index's
	// "dead man switch" byte (offset 128) while they use it, which keeps
	// this process from starting the index over.
	f, err := os.Open(path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	lock := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 128, Len: 1}
	err = syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lock)
	f.Close()
	if err != nil || lock.Type != syscall.F_RDLCK || int(lock.Pid) != os.Getppid() {
		t.Fatalf("the parent's SQLite locks are gone: %+v, %v", lock, err)
	}
	db, err := database.Open(context.Background(), "sqlite:"+path, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.WritePool().ExecContext(context.Background(), `INSERT INTO t VALUES (2)`); err != nil {
		t.Fatal(err)
	}
}

// TestMarkFault: a mapping whose file was cut short under it tells
// nothing, and the process goes on.
func TestMarkFault(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the wal index is mapped on Linux and macOS only")
	}
	path := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(path, database.ValidWALIndexHeader(), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := database.MapWALIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if _, ok := m.Mark(); !ok {
		t.Fatal("no mark from a valid header")
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Mark(); ok {
		t.Fatal("a mark from a file cut short")
	}
}
