// Package store keeps the service's data in SQLite (the embedded default) or
// PostgreSQL (several processes over one database). There is one set of SQL
// with $N placeholders for both engines; where they differ, the difference
// lives in a small named function in this file. Every method that touches a
// landlord's data takes the account explicitly and filters by it. A method
// that changes something loads (with the row lock), asks rental's rule,
// saves, and records the event in the same transaction; the store itself
// decides no state, it only maps what the databases say (a missing row, a
// unique violation, a refused connection) to rental's errors.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"rentapi/internal/rental"
	"rentapi/internal/secret"
)

// Engine names the database behind a DB.
type Engine string

// The two engines.
const (
	SQLite   Engine = "sqlite"
	Postgres Engine = "postgres"
)

//go:embed migrations
var migrations embed.FS

// DB is the service's database. On SQLite every write goes through one
// connection (SQLite has one writer anyway; queuing in Go beats busy
// retries) and reads use a separate pool; on PostgreSQL both are one pool.
type DB struct {
	engine Engine
	write  *sql.DB
	read   *sql.DB
	now    func() time.Time
	// queue inserts jobs in the store's transactions on SQLite, pgQueue
	// on PostgreSQL (whose transactions speak pgx, see pgConn); the jobs
	// package's client works them.
	queue   *river.Client[*sql.Tx]
	pgQueue *river.Client[pgx.Tx]
	// movable is set when tests gave the clock.
	movable bool
	// log is River's logger, for the queue client and its migrations.
	log *slog.Logger
	// wait bounds how long a request waits for a connection.
	wait time.Duration
	// friendURL is Options.AddFriendURL.
	friendURL string
	// sec is Options.Secret.
	sec *secret.Secret
	// publicURL is Options.PublicURL, without a trailing slash.
	publicURL string
	// turns queues the process's writers of each landlord.
	turns turns
	// aheadLost counts claims ahead that lost (ClaimsAheadLost).
	aheadLost atomic.Int64
	// keys are the process's last key lookups (see LookupKey).
	keys keyCache
	// checkpoints copies SQLite's log into its database file (nil on
	// PostgreSQL).
	checkpoints *checkpointer
}

// Options tune Open. The zero value is the production setting.
type Options struct {
	// Now is the clock; tests move it. Defaults to time.Now.
	Now func() time.Time
	// Log is where the job queue's client and migrations write (River
	// would otherwise print text to standard output); default nowhere.
	Log *slog.Logger
	// MaxConns caps this process's PostgreSQL connections, the job queue's
	// included (it shares the pool): every process of a deployment holds up
	// to this many, and together they must stay under the server's
	// max_connections. Zero means DefaultMaxConns. SQLite ignores it (one
	// writer, a few readers).
	MaxConns int
	// Wait bounds how long a request waits for a connection before it is
	// answered 503 service_unavailable; zero means WriteWait. Tests shorten it.
	Wait time.Duration
	// AddFriendURL is the LINE add-friend link of the service's Official
	// Account, which every tenant object shows as chat_registration_url
	// (null when empty: no LINE account is configured).
	AddFriendURL string
	// Secret is the server secret, under which payment links' URLs are
	// sealed (their tokens are never stored in clear). A process that makes
	// or shows payment links needs it; Migrate with it seals the links
	// stored in clear before.
	Secret *secret.Secret
	// PublicURL is the service's address as tenants' phones reach it (the
	// API's and the pages'): a bill paid in this process gets its
	// receipt's URL under it, since the bill may be paid where no request
	// says where the service is (a provider's callback, a job). Empty, the
	// URL is the page's path alone.
	PublicURL string
}

// DefaultMaxConns is the PostgreSQL pool of one process unless told
// otherwise: enough for a busy process (a request holds a connection for
// milliseconds), small enough that several processes, the job queue and an
// operator's psql fit in PostgreSQL's default max_connections of 100.
const DefaultMaxConns = 10

// idleTimeout is how long an unused PostgreSQL connection stays open: a
// process that was busy a minute ago gives its connections back to the
// server for the others.
const idleTimeout = time.Minute

// Open connects to dsn: "sqlite:PATH" or a "postgres://" (or
// "postgresql://") URL. It does not migrate; call Migrate.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	db := &DB{now: opts.Now, movable: opts.Now != nil, wait: opts.Wait, log: opts.Log, friendURL: opts.AddFriendURL, sec: opts.Secret,
		publicURL: strings.TrimRight(opts.PublicURL, "/")}
	if db.now == nil {
		db.now = time.Now
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	if db.wait <= 0 {
		db.wait = WriteWait
	}
	if opts.MaxConns < 0 {
		return nil, fmt.Errorf("store: MaxConns %d: want a positive number of connections", opts.MaxConns)
	}
	if opts.MaxConns == 0 {
		opts.MaxConns = DefaultMaxConns
	}
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "//")
		if path == "" || strings.Contains(path, ":memory:") {
			return nil, errors.New("store: sqlite needs a file path (sqlite:PATH); an in-memory database cannot be shared by the read and write pools")
		}
		if err := createPrivate(path); err != nil {
			return nil, err
		}
		base := "file:" + (&url.URL{Path: path}).EscapedPath() + "?_busy_timeout=10000&_journal_mode=WAL&_foreign_keys=1&_synchronous=NORMAL"
		// The writer never checkpoints the log itself: db.checkpoints does.
		w := sql.OpenDB(sqliteConnector{base + "&_txlock=immediate&_pragma=wal_autocheckpoint(0)"})
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxLifetime(0)
		r := sql.OpenDB(sqliteConnector{base + "&_query_only=1"})
		r.SetMaxOpenConns(8)
		r.SetMaxIdleConns(8)
		db.engine, db.write, db.read = SQLite, w, r
		db.checkpoints = startCheckpointer(base, db.log)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("store: open postgres: %w", err)
		}
		// Each connection keeps one plan per prepared statement. Left to
		// choose, PostgreSQL plans most of ours anew at every execution
		// (a landlord's id makes the custom plan look a little cheaper),
		// and that planning was much of its work on a page of bills.
		// Every query here is narrowed by an indexed id, so the generic
		// plan is the plan. A DSN that names plan_cache_mode keeps its own.
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
		return nil, fmt.Errorf("store: unknown database %q: use sqlite:PATH or a postgres:// URL", redactDSN(dsn))
	}
	var err error
	cfg := &river.Config{Logger: db.log}
	cfg.Test.Time = db.QueueTime()
	db.queue, err = river.NewClient(db.RiverDriver(), cfg)
	if err == nil && db.engine == Postgres {
		// Without a pool the driver only inserts, in a transaction given.
		db.pgQueue, err = river.NewClient(riverpgxv5.New(nil), cfg)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: job queue: %w", err)
	}
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
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
		return fmt.Errorf("store: create sqlite database: %w", err)
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

// WritePool is the pool every write goes through, the job queue's included
// (see RiverDriver), for the few statements that are not the store's own: an
// ANALYZE after a bulk load, a test that holds a connection.
func (db *DB) WritePool() *sql.DB { return db.write }

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

// Now is the store's clock.
func (db *DB) Now() time.Time { return db.now() }

// QueueTime is the job queue's clock: nil, for the database's own, unless
// tests gave the store a clock to move; then jobs follow that clock, so a
// retry an hour away runs when the test moves the clock an hour on.
func (db *DB) QueueTime() rivertype.TimeGenerator {
	if !db.movable {
		return nil
	}
	return queueTime(db.now)
}

type queueTime func() time.Time

func (f queueTime) NowUTC() time.Time { return f().UTC() }

func (f queueTime) NowUTCOrNil() *time.Time {
	t := f().UTC()
	return &t
}

// Ping checks that the database answers, for /readyz.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	if db.read != db.write {
		if err := db.read.PingContext(ctx); err != nil {
			return fmt.Errorf("store: ping read pool: %w", err)
		}
	}
	return nil
}

// Close closes the pools.
func (db *DB) Close() error {
	var err error
	if db.checkpoints != nil {
		err = db.checkpoints.Close()
	}
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// migrationLock is the PostgreSQL advisory lock key held while migrating, so
// that processes starting together migrate one after another.
const migrationLock = 7_236_581_990

// Migrate brings the schema up to date: our migrations first, then the job
// queue's. Safe to run from several processes at once.
func (db *DB) Migrate(ctx context.Context) error {
	if db.engine == Postgres {
		conn, err := db.write.Conn(ctx)
		if err != nil {
			return fmt.Errorf("store: migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("store: migrate lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock)
	}
	dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
	if db.engine == Postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	provider, err := goose.NewProvider(dialect, db.write, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	if _, err := provider.Up(ctx); err != nil {
		return fmt.Errorf("store: migrate: %w", err)
	}
	if err := db.issueRegistrationCodes(ctx); err != nil {
		return err
	}
	if err := db.sealClearLinks(ctx); err != nil {
		return err
	}
	if err := db.sealClearCopies(ctx); err != nil {
		return err
	}
	m, err := rivermigrate.New(db.RiverDriver(), &rivermigrate.Config{Logger: db.log})
	if err != nil {
		return fmt.Errorf("store: job queue migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("store: job queue migrate: %w", err)
	}
	return nil
}

// lock takes the row lock of one of the landlord's objects before a
// read-modify-write: on PostgreSQL two concurrent updates would otherwise
// both read the old row and one change would be lost (SQLite's single
// writer needs no lock, and the statement costs it nothing). It is also the
// existence check: a missing row is not found.
func (tx *Tx) lock(ctx context.Context, table, what string, landlordID, id string) error {
	res, err := tx.c.ExecContext(ctx, `UPDATE `+table+` SET updated_at = updated_at WHERE landlord_id = $1 AND id = $2`, landlordID, id)
	if err != nil {
		return fmt.Errorf("store: lock %s: %w", what, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return rental.NotFound(what, id)
	}
	return nil
}

// isUniqueViolation reports whether err is a unique-constraint failure: the
// one place that knows both engines' error codes.
func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || lite.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// refused reports whether err is the database declining to serve now rather
// than failing: PostgreSQL out of connections or other resources (SQLSTATE
// class 53, 53300 too_many_connections among them), starting up or shutting
// down (57P03 cannot_connect_now), or not reachable at all (a connection that
// could not be made); SQLite's write lock still held by another process when
// busy_timeout ran out. Like isUniqueViolation, the one place that knows the
// engines' codes. A connection refused for a wrong password or database name
// is not in it: that is the operator's to fix, a 500.
func refused(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return strings.HasPrefix(pg.Code, "53") || pg.Code == "57P03"
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) {
		return true
	}
	var dial *net.OpError
	if errors.As(err, &dial) && dial.Op == "dial" {
		return true
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code()&0xff == sqlite3.SQLITE_BUSY
	}
	return false
}

// unavailable is the answer when the database cannot take a request now
// (503 service_unavailable with Retry-After). It wraps cause, so that the
// API's log says why while the client reads only the rental error.
func unavailable(cause error) error {
	e := rental.Errorf(rental.KindUnavailable, "service_unavailable", "The service is overloaded; retry after the time in Retry-After.")
	e.RetryAfter = 1
	if refused(cause) {
		e.Message = "The database is not taking connections now; retry after the time in Retry-After."
		e.RetryAfter = 5
	}
	return fmt.Errorf("%w: %w", e, cause)
}

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
	case ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || refused(err)):
		return nil, unavailable(err)
	}
	return nil, fmt.Errorf("store: connection: %w", err)
}

// conn is what both a pool and a transaction offer: database/sql's methods,
// with rows behind small interfaces so that a pool can give each statement
// its connection back when its rows are done.
type conn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (rowSet, error)
	QueryRowContext(ctx context.Context, query string, args ...any) row
}

// row is the result of QueryRowContext.
type row interface {
	Scan(dest ...any) error
}

// rowSet is the result of QueryContext.
type rowSet interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// txConn is a transaction as a conn: its statements share its connection.
type txConn struct{ tx *sql.Tx }

func (c txConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return c.tx.ExecContext(ctx, query, args...)
}

func (c txConn) QueryContext(ctx context.Context, query string, args ...any) (rowSet, error) {
	rows, err := c.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func (c txConn) QueryRowContext(ctx context.Context, query string, args ...any) row {
	return c.tx.QueryRowContext(ctx, query, args...)
}

// pool is a pool as a conn: each statement takes a connection through
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

func (c pool) QueryContext(ctx context.Context, query string, args ...any) (rowSet, error) {
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

func (c pool) QueryRowContext(ctx context.Context, query string, args ...any) row {
	cn, err := c.db.acquire(ctx, c.p)
	if err != nil {
		return failedRow{err}
	}
	return connRow{cn.QueryRowContext(c.db.statementContext(ctx), query, args...), cn}
}

// statementContext is the context a single statement on a pool runs
// with, once it has its connection. On SQLite the request's cancellation
// is left behind: with it, database/sql and the SQLite driver each start a
// goroutine per statement to watch for it, four for a read of a page,
// which cost reads CPU and, under load, tail latency. A statement on SQLite is a
// local computation that ends on its own (lists are keyset pages, every
// other read one row), so a client that hangs up now lets it finish rather
// than interrupting it; the wait for the connection still ends with the
// request (see acquire). PostgreSQL keeps the cancellation: there a query
// runs in another process, which is told to stop.
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

// failedRow is the row of a statement that got no connection.
type failedRow struct{ err error }

func (r failedRow) Scan(...any) error { return r.err }

// Queries are the read methods; they run on the read pool or inside a Tx.
type Queries struct {
	c conn
	// friendURL is the add-friend link tenants show.
	friendURL string
	// sec opens payment links' sealed URLs.
	sec *secret.Secret
}

// Read returns the read methods on the read pool. Inside a write, use the
// Tx's own Queries so that the write sees itself.
func (db *DB) Read() *Queries {
	return &Queries{c: pool{db, db.read}, friendURL: db.friendURL, sec: db.sec}
}

// writer runs single statements on the write pool, each with a bounded wait
// for its connection.
func (db *DB) writer() conn { return pool{db, db.write} }

// Tx is one write transaction. Its Now is fixed when it begins, so every row
// it writes carries the same time.
type Tx struct {
	Queries
	// tx is the transaction on SQLite, pg on PostgreSQL (see pgConn).
	tx        *sql.Tx
	pg        *pgConn
	conn      *sql.Conn
	db        *DB
	Now       time.Time
	lastEvent int64
	// quiet suppresses events, while the sandbox's sample data is made.
	quiet bool
	// claimed is the landlord whose clock this transaction holds.
	claimed string
	// release gives the landlord's turn to the next writer (BeginClaimed).
	release func()
	// events and deliveries are the rows of the events this transaction
	// recorded and of their deliveries, and jobs the jobs it queued (see
	// enqueue): all inserted together at Commit (see flush), where one
	// statement each made a transaction recording many events (a burst, a
	// month's bills) wait for a round trip per row.
	events, deliveries [][]any
	jobs               []river.InsertManyParams
	// atCommit are statements left for Commit to run (see execAll).
	atCommit []stmt
	// endpoints are the landlord's webhook endpoints as a read queued
	// early found them (see readEndpointsAhead), while read is false.
	endpoints linkedEndpoints
}

// stmt is a statement whose only answer is the count of rows it changed,
// for execAll.
type stmt struct {
	sql  string
	args []any
	// what names it in an error.
	what string
	// lost, if set, is the transaction's error unless the statement
	// changed exactly one row.
	lost error
	// checked says the statement makes its check itself, in the database
	// (see mustChangeOne): it fails, and stops its batch, if it did not
	// change exactly one row.
	checked bool
	// taken, if set, is the error when the statement fails on a unique
	// constraint.
	taken error
	// scan, if set, reads the statement's one row (a queued read).
	scan func(row) error
	// rows, if set, reads the statement's rows (a queued read of many).
	rows func(rowSet) error
}

// later runs a statement whose answer the transaction needs only if it
// fails: on PostgreSQL it travels with the transaction's next statement
// (or COMMIT), a round trip saved, and its error is that statement's.
// Whatever the transaction reads after it sees its change.
func (tx *Tx) later(ctx context.Context, s stmt) error {
	if tx.pg != nil {
		tx.pg.queued = append(tx.pg.queued, s)
		return nil
	}
	return tx.execAll(ctx, []stmt{s})
}

// execAll runs the statements in order, the first error ending them. On
// PostgreSQL they go in one pipelined batch, one round trip for all.
func (tx *Tx) execAll(ctx context.Context, stmts []stmt) error {
	if tx.pg != nil {
		tx.pg.queued = append(tx.pg.queued, stmts...)
		return tx.pg.flush(ctx)
	}
	for _, s := range stmts {
		res, err := tx.c.ExecContext(ctx, s.sql, s.args...)
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

// WriteWait is how long a request waits for a database connection (a
// write's, or a read's) before it is answered 503: the spec's wait when
// overloaded.
const WriteWait = 10 * time.Second

// Begin starts a write transaction. On SQLite it takes the write lock at once
// (BEGIN IMMEDIATE), so a transaction never fails half way on a busy lock;
// on PostgreSQL BEGIN travels with the first statement (see pgConn).
// Waiting for the write connection is bounded by WriteWait.
func (db *DB) Begin(ctx context.Context) (*Tx, error) {
	conn, err := db.acquire(ctx, db.write)
	if err != nil {
		return nil, fmt.Errorf("store: begin: %w", err)
	}
	if db.engine == Postgres {
		pg, err := beginPostgres(conn)
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("store: begin: %w", err)
		}
		tx := &Tx{Queries: Queries{c: pg, friendURL: db.friendURL, sec: db.sec}, pg: pg, conn: conn, db: db, Now: db.now().UTC()}
		pg.onFail = tx.failed
		return tx, nil
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		conn.Close()
		if ctx.Err() == nil && refused(err) {
			return nil, unavailable(err)
		}
		return nil, fmt.Errorf("store: begin: %w", err)
	}
	return &Tx{Queries: Queries{c: txConn{tx}, friendURL: db.friendURL, sec: db.sec}, tx: tx, conn: conn, db: db, Now: db.now().UTC()}, nil
}

// Commit commits the transaction. Its jobs are inserted first; then the
// statements left for the end (events and deliveries, the stored response,
// the landlord's clock) and, on PostgreSQL, COMMIT itself go in one round
// trip: the landlord's lock is held until the end, and each round trip
// saved is time every other writer of the landlord waits less.
func (tx *Tx) Commit() error {
	defer tx.done()
	ctx := context.Background()
	if err := tx.insertJobs(ctx); err != nil {
		tx.Rollback()
		return fmt.Errorf("store: commit: queue jobs: %w", err)
	}
	last := append(tx.inserts(), tx.atCommit...)
	if tx.claimed != "" && tx.lastEvent > ms(tx.Now) {
		// Events of this transaction ticked the clock on; the next writer starts after them.
		last = append(last, stmt{sql: setClock, args: []any{tx.claimed, tx.lastEvent}, what: "store: clock"})
	}
	var err error
	if tx.pg != nil {
		err = tx.pg.commit(ctx, last)
	} else if err = tx.execAll(ctx, last); err == nil {
		err = tx.tx.Commit()
	}
	if err != nil {
		tx.Rollback()
		if e, ok := rental.AsError(err); ok {
			return e
		}
		return fmt.Errorf("store: commit: %w", err)
	}
	if tx.claimed != "" {
		tx.db.turns.committed(tx.claimed, max(ms(tx.Now), tx.lastEvent))
	}
	return nil
}

// insertJobs inserts the jobs the transaction queued, in it.
func (tx *Tx) insertJobs(ctx context.Context) error {
	if len(tx.jobs) == 0 {
		return nil
	}
	if tx.pg != nil {
		_, err := tx.db.pgQueue.InsertManyTx(ctx, pgxTx{tx.pg}, tx.jobs)
		return err
	}
	_, err := tx.db.queue.InsertManyTx(ctx, tx.tx, tx.jobs)
	return err
}

// Rollback abandons the transaction; after Commit it does nothing.
func (tx *Tx) Rollback() error {
	var err error
	if tx.pg != nil {
		err = tx.pg.rollback()
	} else if err = tx.tx.Rollback(); errors.Is(err, sql.ErrTxDone) {
		err = nil
	}
	tx.done()
	return err
}

// done gives the connection back to the pool and the landlord's turn to
// the next writer; a second call does nothing.
func (tx *Tx) done() {
	tx.conn.Close()
	if tx.release != nil {
		tx.release()
	}
}

// Claim makes the transaction the landlord's only writer until it ends: it
// takes the landlord's row lock and the next tick of the landlord's clock
// as the transaction's Now. Every write to a landlord's data claims first,
// so creation times follow commit order (a page never skips a row committed
// late) and every write takes its locks in the same order (no deadlocks).
// Claiming again in the same transaction does nothing.
func (tx *Tx) Claim(ctx context.Context, acct *rental.Account) error {
	if tx.claimed != "" {
		return nil
	}
	var clock int64
	err := tx.c.QueryRowContext(ctx, `UPDATE landlords SET clock = CASE WHEN clock >= $2 THEN clock + 1 ELSE $2 END
		WHERE id = $1 RETURNING clock`, acct.LandlordID, ms(tx.Now)).Scan(&clock)
	if err != nil {
		return fmt.Errorf("store: claim landlord: %w", err)
	}
	tx.claimed, tx.Now, tx.lastEvent = acct.LandlordID, time.UnixMilli(clock).UTC(), clock-1
	return nil
}

// claimAhead is Claim queued for the transaction's next round trip (on
// PostgreSQL), with the tick it predicts: the one after last, the clock
// as this process's last writer of the landlord committed it, or now if
// that is later. The claim takes the tick only if the clock is still
// below it, and then the tick is the very one Claim would have taken
// (the clock is where last left it, or below now). If another process
// ticked the clock past it, the claim fails in the database, so nothing
// after it in its batch runs without the landlord's lock, and the
// transaction fails with ErrNotClaimed (errClockMoved): whatever it did
// with Now is undone, and the landlord's writes here claim as usual for a
// while (see aheadPause).
func (tx *Tx) claimAhead(landlordID string, last int64) {
	clock := max(last+1, ms(tx.Now))
	tx.pg.queued = append(tx.pg.queued, stmt{sql: mustChangeOne(setClock), args: []any{landlordID, clock}, what: "store: claim landlord",
		lost: errClockMoved, checked: true})
	tx.claimed, tx.Now, tx.lastEvent = landlordID, time.UnixMilli(clock).UTC(), clock-1
}

// failed is told the transaction's first failure on PostgreSQL: a claim
// ahead that lost is counted, and the landlord's writes claim as usual for
// a while.
func (tx *Tx) failed(err error) {
	if errors.Is(err, errClockMoved) {
		tx.db.aheadLost.Add(1)
		tx.db.turns.lost(tx.claimed, ms(tx.db.now()))
	}
}

// errClockMoved is the failure of a claim ahead whose tick another
// process took.
var errClockMoved = fmt.Errorf("%w: another writer moved the landlord's clock on", ErrNotClaimed)

// ClaimsAheadLost counts this process's claims ahead that lost (see
// claimAhead).
func (db *DB) ClaimsAheadLost() int64 { return db.aheadLost.Load() }

// setClock moves a landlord's clock on to $2, if it is below.
const setClock = `UPDATE landlords SET clock = $2 WHERE id = $1 AND clock < $2`

// Err is the transaction's first failure on PostgreSQL, which every later
// statement, and Commit, return too; nil while there is none, and on
// SQLite.
func (tx *Tx) Err() error {
	if tx.pg != nil {
		return tx.pg.err
	}
	return nil
}

// Exec runs a statement of the caller's own in the transaction: the bench
// seeder's bulk inserts, a test's change that no store method makes.
func (tx *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return tx.c.ExecContext(ctx, query, args...)
}

// QueryRow runs a query of the caller's own in the transaction and returns
// its first row.
func (tx *Tx) QueryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	return tx.c.QueryRowContext(ctx, query, args...)
}

// InTx runs fn in a write transaction and commits if fn returns nil.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullMs(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}
