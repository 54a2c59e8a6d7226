// Package database is the engine under the store, independent of the
// store's schema: it opens SQLite (the embedded default) or PostgreSQL
// (several processes over one database), bounds the wait for a connection
// (a wait that runs out, or a database that refuses, is the service
// unavailable: 503, not a failure), names the engines' error codes the
// store translates (a unique violation, a refusal), and offers a small Tx
// whose Now is fixed when it begins and which leaves statements for its
// commit. What it saves is round trips and parsing, kept apart from what
// the data means so that each can be read, and tested, on its own:
//
//   - database.go: Open (the DSN, SQLite's pragmas and private file,
//     pgx's stdlib pool), the pools, River's driver over the write pool;
//   - conn.go: Conn, the statements' one interface over a pool or a Tx,
//     and the bounded wait (acquire → Unavailable);
//   - errors.go: the engines' error codes, as predicates;
//   - tx.go: Tx and Stmt (statements left for later, or for the commit,
//     and their checks), commit hooks;
//   - group.go: SQLite's writers sharing one transaction and its commit,
//     each after the first in a savepoint of its own;
//   - pipeline.go: PostgreSQL's Tx spoken through pgx, whose statements
//     travel together in pipelined batches;
//   - check.go: a Check, a condition a read confirms in the round trip of
//     its first statement (the store's kept key lookups are one);
//   - stmtcache.go and checkpoint.go: SQLite's statement cache and
//     checkpointer.
//
// The only tables it knows are River's (the job queue's driver is picked
// here); its suite (database_test.go) runs on both engines over a table of
// its own.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
)

// Engine names the database behind a DB.
type Engine string

// The two engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

// DB is the two pools of one database. On SQLite every write goes through
// one connection (SQLite has one writer anyway; queuing in Go beats busy
// retries, and lets the writers queued share a commit) and reads use a
// separate pool; on PostgreSQL both are one pool.
type DB struct {
	engine Engine
	write  *sql.DB
	read   *sql.DB
	now    func() time.Time
	// wait bounds how long a statement waits for a connection.
	wait time.Duration
	// checkpoints copies SQLite's log into its database file (nil on
	// PostgreSQL).
	checkpoints *checkpointer
	// group lets SQLite's writers share commits (nil on PostgreSQL).
	group *group
	// wal maps SQLite's WAL-index, for Mark; nil when it is not mapped.
	wal atomic.Pointer[walIndex]
}

// Options tune Open. The zero value is the production setting.
type Options struct {
	// Now is the clock a Tx's Now is read from; tests move it. Defaults
	// to time.Now.
	Now func() time.Time
	// Log is where the checkpointer warns; default nowhere.
	Log *slog.Logger
	// MaxConns caps this process's PostgreSQL connections: every process
	// of a deployment holds up to this many, and together they must stay
	// under the server's max_connections. Zero means DefaultMaxConns.
	// SQLite ignores it (one writer, a few readers).
	MaxConns int
	// Wait bounds how long a statement waits for a connection before it
	// fails with Unavailable; zero means WriteWait. Tests shorten it.
	Wait time.Duration
}

// DefaultMaxConns is the PostgreSQL pool of one process unless told
// otherwise: enough for a busy process (a request holds a connection for
// milliseconds), small enough that several processes, the job queue and an
// operator's psql fit in PostgreSQL's default max_connections of 100.
const DefaultMaxConns = 10

// WriteWait is how long a statement waits for a database connection (a
// write's, or a read's) before it fails with Unavailable: the spec's wait
// when overloaded.
const WriteWait = 10 * time.Second

// idleTimeout is how long an unused PostgreSQL connection stays open: a
// process that was busy a minute ago gives its connections back to the
// server for the others.
const idleTimeout = time.Minute

// Open connects to dsn: "sqlite:PATH" or a "postgres://" (or
// "postgresql://") URL, and pings it.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	db := &DB{now: opts.Now, wait: opts.Wait}
	if db.now == nil {
		db.now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if db.wait <= 0 {
		db.wait = WriteWait
	}
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("database: MaxConns %d: want a positive number of connections", opts.MaxConns)
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	var path, readOnly string // SQLite's
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path = strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" || strings.Contains(path, ":memory:") {
			return nil, errors.New("database: sqlite needs a file path (sqlite:PATH); an in-memory database cannot be shared by the read and write pools")
		}
		if err := createPrivate(path); err != nil {
			return nil, err
		}
		base := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL"
		// The writer never checkpoints the log itself: db.checkpoints does.
		// Its statement journals stay in memory, and its page cache holds
		// 8 MiB (SQLite's default, 2 MiB, is less than a bill run of a
		// few hundred rooms changes: the rest was spilled to the log
		// before the commit, and the journals went through a file; 16 MiB
		// wrote no faster, and took the process past 100 MB resident
		// under a steady write load).
		w := sql.OpenDB(sqliteConnector{base + "&_txlock=immediate&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(memory)&_pragma=cache_size(-8192)"})
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxLifetime(0)
		readOnly = base + "&_query_only=1"
		r := sql.OpenDB(sqliteConnector{readOnly})
		r.SetMaxOpenConns(8)
		r.SetMaxIdleConns(8)
		db.engine, db.write, db.read = SQLite, w, r
		db.group = &group{db: db}
		db.checkpoints = startCheckpointer(base, db.group, opts.Log)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("database: open postgres: %w", err)
		}
		// Each connection keeps one plan per prepared statement. Left to
		// choose, PostgreSQL plans most of the store's anew at every
		// execution (a landlord's id makes the custom plan look a little
		// cheaper), and that planning was much of its work on a page of
		// bills. Every query of the store is narrowed by an indexed id, so
		// the generic plan is the plan. A DSN that names plan_cache_mode
		// keeps its own.
		if _, set := cfg.RuntimeParams["plan_cache_mode"]; !set {
			cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
		}
		p := stdlib.OpenDB(*cfg)
		p.SetMaxOpenConns(opts.MaxConns)
		// Every connection may stay idle (until idleTimeout): a pool that
		// kept fewer than it opens would close and reopen connections as
		// the load wavers, and each new one costs PostgreSQL a backend
		// process and the driver its prepared statements.
		p.SetMaxIdleConns(opts.MaxConns)
		p.SetConnMaxIdleTime(idleTimeout)
		db.engine, db.write, db.read = Postgres, p, p
	default:
		return nil, fmt.Errorf("database: unknown database %q: use sqlite:PATH or a postgres:// URL", redactDSN(dsn))
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if db.engine == SQLite {
		w, err := openWALIndex(ctx, readOnly, path)
		if err != nil {
			opts.Log.Warn("sqlite: the write-ahead log's index is not mapped: every key check reads its versions", "error", err.Error())
		}
		db.wal.Store(w)
	}
	return db, nil
}

// createPrivate creates a new SQLite database file readable and writable by
// its owner only, before the driver would create it with the umask's mode
// (0644 as a rule): it holds tenants' names and phone numbers. SQLite gives
// the -wal and -shm files the main file's mode, so they follow. An existing
// file keeps its mode: the operator may have chosen it.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("database: create sqlite database: %w", err)
	}
	return f.Close()
}

// redactDSN drops a password from a DSN before it is shown in an error.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return dsn
}

// Engine reports which database this is.
func (db *DB) Engine() Engine { return db.engine }

// Now is the clock every Tx reads its Now from.
func (db *DB) Now() time.Time { return db.now() }

// WritePool is the pool every write goes through, the job queue's included
// (see RiverDriver), for the few statements that take no Tx: an ANALYZE
// after a bulk load, a maintenance delete, a test that holds a connection.
func (db *DB) WritePool() *sql.DB { return db.write }

// Pools are the connection pools by name, for operators' metrics: "write"
// and "read" on SQLite, one "main" pool on PostgreSQL.
func (db *DB) Pools() map[string]*sql.DB {
	if db.read == db.write {
		return map[string]*sql.DB{"main": db.write}
	}
	return map[string]*sql.DB{"write": db.write, "read": db.read}
}

// RiverDriver is the job queue's driver for this database's engine, over the
// write pool: the one place that picks River's driver, so that the store's
// queue, its migrations and the jobs package's client all work the same
// tables through the same pool, and a job inserted with InsertTx commits
// with the write that caused it.
func (db *DB) RiverDriver() riverdriver.Driver[*sql.Tx] {
	if db.engine == Postgres {
		return riverdatabasesql.New(db.write)
	}
	return riversqlite.New(db.write)
}

// Ping checks that the database answers, for /readyz.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("database: ping: %w", err)
	}
	if db.read != db.write {
		if err := db.read.PingContext(ctx); err != nil {
			return fmt.Errorf("database: ping read pool: %w", err)
		}
	}
	return nil
}

// Close stops the checkpoints and closes the pools.
func (db *DB) Close() error {
	var err error
	if db.checkpoints != nil {
		err = db.checkpoints.Close()
	}
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return errors.Join(err, db.wal.Swap(nil).close())
}
