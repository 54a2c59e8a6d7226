// Package store is the service's repository: it keeps its data in SQLite
// (the embedded default) or PostgreSQL (several processes over one
// database) through the engine in package database, and is the only
// package that knows the schema. There is one set of SQL with $N
// placeholders for both engines; where they differ, the difference lives
// in a small named function. Every method that touches a landlord's data
// takes the account explicitly and filters by it. A method that changes
// something loads (with the row lock), asks rental's rule, saves, and
// records the event in the same transaction; the store itself decides no
// state, it only maps what the databases say (a missing row, a unique
// violation, a refused connection) to rental's errors.
//
// Layout: store.go opens and migrates (migrations/sqlite and
// migrations/postgres, embedded) and holds what every resource shares;
// tx.go is the store's Tx over database.Tx (the landlord's claim, its
// events and jobs sent with the commit); turns.go queues a process's
// writers of one landlord; keycache.go and keycheck.go keep key lookups
// and confirm them in a request's first round trip; clock.go keeps a
// sandbox's clock (an offset Claim adds to real time); scan.go, filter.go
// and page.go read rows, build list conditions and page lists; jobargs.go
// holds every job's arguments, queue.go the queue's depth; seal.go seals
// the copies of objects kept in rows; then one file per resource
// (property.go, room.go, tenant.go, bill.go, payment.go, endpoint.go,
// delivery.go, event.go, ...). It returns data, not presentation: the
// service's LINE add-friend link is configuration it keeps (AddFriendURL)
// and fills in only in the tenant events it records.
package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"rentapi/internal/database"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
)

// Engine names the database behind a DB (see database.Engine).
type Engine = database.Engine

// The two engines, named here too so that the store's callers need not
// know the package underneath.
const (
	SQLite   = database.SQLite
	Postgres = database.Postgres
)

// DefaultMaxConns and WriteWait are the engine's defaults (see
// database.Options).
const (
	DefaultMaxConns = database.DefaultMaxConns
	WriteWait       = database.WriteWait
)

//go:embed migrations
var migrations embed.FS

// DB is the service's database: the engine (Engine, WritePool, Pools,
// RiverDriver, Ping, Close come from it; its Begin and Read are the
// store's own here) and what the store keeps beside it.
type DB struct {
	*database.DB
	now func() time.Time
	// queue inserts jobs in the store's transactions on SQLite, pgQueue
	// on PostgreSQL (whose transactions speak pgx, see database.Tx.PgxTx);
	// the jobs package's client works them.
	queue   *river.Client[*sql.Tx]
	pgQueue *river.Client[pgx.Tx]
	// movable is set when tests gave the clock.
	movable bool
	// log is River's logger, for the queue client and its migrations.
	log *slog.Logger
	// friendURL is Options.AddFriendURL (see AddFriendURL).
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
	// versions gathers the version reads of requests on kept lookups.
	versions versionReads
	// kept is what the last writes of readings knew of their rooms.
	kept keptRooms
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
	// (null when empty: no LINE account is configured). The store keeps it
	// as configuration, not in the tenants' rows: it fills it in only in
	// the bodies of the tenant events it records (see DB.AddFriendURL).
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

// Open connects to dsn: "sqlite:PATH" or a "postgres://" (or
// "postgresql://") URL (see database.Open). It does not migrate; call
// Migrate.
func Open(ctx context.Context, dsn string, opts Options) (*DB, error) {
	db := &DB{now: opts.Now, movable: opts.Now != nil, log: opts.Log, friendURL: opts.AddFriendURL, sec: opts.Secret,
		publicURL: strings.TrimRight(opts.PublicURL, "/")}
	if db.now == nil {
		db.now = time.Now
	}
	if db.log == nil {
		db.log = slog.New(slog.DiscardHandler)
	}
	var err error
	db.DB, err = database.Open(ctx, dsn, database.Options{Now: db.now, Log: db.log, MaxConns: opts.MaxConns, Wait: opts.Wait})
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	cfg := &river.Config{Logger: db.log}
	cfg.Test.Time = db.QueueTime()
	db.queue, err = river.NewClient(db.RiverDriver(), cfg)
	if err == nil && db.Engine() == Postgres {
		// Without a pool the driver only inserts, in a transaction given.
		db.pgQueue, err = river.NewClient(riverpgxv5.New(nil), cfg)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("store: job queue: %w", err)
	}
	return db, nil
}

// Now is the store's clock.
func (db *DB) Now() time.Time { return db.now() }

// AddFriendURL is the service's LINE add-friend link (Options.AddFriendURL),
// for whoever shows a tenant (rental.Tenant.ShowChatLink): the tenants the
// store returns leave chat_registration_url null, and the API fills it in
// from here, as the store does in the tenant events it records.
func (db *DB) AddFriendURL() string { return db.friendURL }

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

// migrationLock is the PostgreSQL advisory lock key held while migrating, so
// that processes starting together migrate one after another.
const migrationLock = 7_236_581_990

// Migrate brings the schema up to date: our migrations first, then the job
// queue's. Safe to run from several processes at once.
func (db *DB) Migrate(ctx context.Context) error {
	if db.Engine() == Postgres {
		conn, err := db.WritePool().Conn(ctx)
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
	if db.Engine() == Postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return fmt.Errorf("store: migrations: %w", err)
	}
	provider, err := goose.NewProvider(dialect, db.WritePool(), sub, goose.WithDisableGlobalRegistry(true))
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

// Queries are the read methods; they run on the read pool or inside a Tx.
type Queries struct {
	c database.Conn
	// sec opens payment links' sealed URLs.
	sec *secret.Secret
}

// Read returns the read methods on the read pool. Inside a write, use the
// Tx's own Queries so that the write sees itself.
func (db *DB) Read() *Queries {
	return &Queries{c: db.Reader(), sec: db.sec}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func nullMs(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}
