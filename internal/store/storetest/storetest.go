// Package storetest gives tests real databases: every test runs against
// SQLite, and also against PostgreSQL when RENTAPI_TEST_POSTGRES holds a DSN
// (each test gets a fresh database there, a copy of one migrated once per
// process, dropped afterwards). Both run with a
// clock the test can move.
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

// PostgresEnv names the variable holding the PostgreSQL DSN for tests.
const PostgresEnv = "RENTAPI_TEST_POSTGRES"

// Clock is a settable clock for tests; it starts at a fixed instant so
// times in assertions are predictable.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at 2026-11-22 03:00:00 UTC.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)} }

// Now returns the clock's time and moves it on by a microsecond, so that
// successive calls are distinct, as on a real clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Microsecond)
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Engine is one database under test.
type Engine struct {
	Name  string
	DB    *store.DB
	Clock *Clock
	// DSN reaches the same database, for a second process or client.
	DSN string
}

// Another is a second process's store on the same database, with the same
// clock, secret and add-friend link, closed when the test ends: what a
// test of several processes over one database serves its second harness
// from.
func (e Engine) Another(t testing.TB) Engine {
	t.Helper()
	db, err := store.Open(t.Context(), e.DSN, store.Options{Secret: Secret(t), Now: e.Clock.Now, AddFriendURL: AddFriendURL, PublicURL: PublicURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return Engine{Name: e.Name, DB: db, Clock: e.Clock, DSN: e.DSN}
}

// Each runs fn as a subtest once per engine: SQLite always, PostgreSQL when
// configured. Unconfigured, the postgres subtest is still there, skipped, so
// go test -v shows that half did not run rather than nothing.
//
// The two subtests run in parallel with each other and with the other
// parallel tests (each has a database of its own), once the calling test
// function has returned: so fn must not use anything the caller releases
// with defer (use t.Cleanup), and the caller must do nothing after Each
// that expects fn to have run.
func Each(t *testing.T, fn func(t *testing.T, e Engine)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, Postgres(t))
	})
}

// SQLite opens a migrated database in a temporary directory: a copy of
// sqliteTemplate's.
func SQLite(t testing.TB) Engine {
	t.Helper()
	tpl, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("sqlite: the migrated template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "test.db")
	if err := os.WriteFile(path, tpl, 0o600); err != nil {
		t.Fatal(err)
	}
	return openMigrated(t, "sqlite", "sqlite:"+path)
}

// sqliteTemplate is a migrated, empty SQLite database file, made once per
// test process: each test starts from a copy of it rather than running
// every migration again, which took a fifth of the API tests' CPU under the
// race detector. TestMigrations (internal/store) still migrates from
// nothing, and serve's tests migrate their own databases.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "rentapi-storetest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	sec, err := secret.New("test-secret-test-secret-test-secret-0123456789")
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "migrated.db"), store.Options{Now: NewClock().Now, Secret: sec, AddFriendURL: AddFriendURL, PublicURL: PublicURL})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	// VACUUM INTO writes the database whole into one file, with nothing
	// left in a write-ahead log.
	out := filepath.Join(dir, "template.db")
	if _, err := db.WritePool().ExecContext(ctx, `VACUUM INTO '`+out+`'`); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
})

// Postgres opens a fresh database of the configured PostgreSQL server, a
// copy of postgresTemplate's (CREATE DATABASE ... TEMPLATE, a copy of its
// files), dropped when the test ends; it skips the test when no server is
// configured.
func Postgres(t testing.TB) Engine {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " not set")
	}
	tpl, err := postgresTemplate()
	if err != nil {
		t.Fatalf("postgres: the migrated template: %v", err)
	}
	name := postgresName("rentapi_t")
	if err := adminExec(base, `CREATE DATABASE `+name+` TEMPLATE `+tpl); err != nil {
		t.Fatalf("postgres: create database: %v", err)
	}
	t.Cleanup(func() {
		if err := adminExec(base, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Logf("postgres: drop database %s: %v", name, err)
		}
	})
	dsn, err := postgresDSN(base, name)
	if err != nil {
		t.Fatalf("postgres DSN: %v", err)
	}
	return openMigrated(t, "postgres", dsn)
}

// postgresTemplate is a migrated, empty PostgreSQL database, made once per
// test process: each test's database is a copy of it rather than a schema
// running every migration again (parsing them took 6 % of the API tests'
// CPU under the race detector, and the server ran each one's statements).
// A template left by a process that did not end cleanly is dropped by the
// next one after postgresStale.
var postgresTemplate = sync.OnceValues(func() (string, error) {
	base := os.Getenv(PostgresEnv)
	if err := dropStale(base); err != nil {
		return "", err
	}
	name := postgresName("rentapi_tpl")
	if err := adminExec(base, `CREATE DATABASE `+name); err != nil {
		return "", err
	}
	dsn, err := postgresDSN(base, name)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	sec, err := secret.New("test-secret-test-secret-test-secret-0123456789")
	if err != nil {
		return "", err
	}
	db, err := store.Open(ctx, dsn, store.Options{Now: NewClock().Now, Secret: sec, AddFriendURL: AddFriendURL, PublicURL: PublicURL})
	if err != nil {
		return "", err
	}
	err = db.Migrate(ctx)
	// A template is copied only once nobody is connected to it.
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return name, err
})

// postgresStale is the age after which a test's or a template's database
// is taken for one left behind (its process was killed before its
// cleanup): no test run lasts that long.
const postgresStale = time.Hour

// postgresName is a new database name with the prefix: the time it was
// made (for dropStale) and a random part.
func postgresName(prefix string) string {
	return fmt.Sprintf("%s_%d_%s", prefix, time.Now().Unix(), strings.TrimPrefix(rental.NewID("x"), "x_"))
}

// dropStale drops the databases tests made more than postgresStale ago.
func dropStale(base string) error {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	rows, err := admin.Query(`SELECT datname FROM pg_database WHERE datname LIKE 'rentapi\_t\_%' OR datname LIKE 'rentapi\_tpl\_%'`)
	if err != nil {
		return err
	}
	var stale []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return err
		}
		parts := strings.Split(name, "_")
		if len(parts) < 4 {
			continue
		}
		var made int64
		if _, err := fmt.Sscan(parts[len(parts)-2], &made); err == nil && time.Since(time.Unix(made, 0)) > postgresStale {
			stale = append(stale, name)
		}
	}
	rows.Close()
	for _, name := range stale {
		// Another process may drop it first.
		admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
	}
	return rows.Err()
}

// adminExec runs one statement on the configured server's own database.
func adminExec(base, stmt string) error {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.Exec(stmt)
	return err
}

// postgresDSN is base with the database name.
func postgresDSN(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// AddFriendURL is the test stores' LINE add-friend link, which every tenant
// object shows as chat_registration_url.
const AddFriendURL = "https://line.me/R/ti/p/@rentapi-test"

// PublicURL is the test stores' public URL, under which receipts' pages
// are: a test's server has its own address, so a test opens a receipt by
// its URL's path.
const PublicURL = "https://rentapi.test"

func open(t testing.TB, name, dsn string) Engine {
	t.Helper()
	e := openMigrated(t, name, dsn)
	if err := e.DB.Migrate(context.Background()); err != nil {
		t.Fatalf("%s: migrate: %v", name, err)
	}
	return e
}

// openMigrated opens a database whose schema is in place already.
func openMigrated(t testing.TB, name, dsn string) Engine {
	t.Helper()
	clock := NewClock()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{Now: clock.Now, AddFriendURL: AddFriendURL, Secret: Secret(t), PublicURL: PublicURL})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { db.Close() })
	return Engine{Name: name, DB: db, Clock: clock, DSN: dsn}
}

// Fixture is a developer with one application, ready for keys.
type Fixture struct {
	Developer *rental.Developer
	App       *rental.Application
}

// NewFixture creates a developer on the plan with an application asking
// for every scope (and so a sandbox account).
func NewFixture(t testing.TB, db *store.DB, plan rental.DeveloperPlan) Fixture {
	t.Helper()
	var f Fixture
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) (err error) {
		if f.Developer, err = tx.CreateDeveloper(ctx, "Developer", plan); err != nil {
			return err
		}
		f.App, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: f.Developer.ID, Name: "App", Company: "Co", Scopes: rental.AllScopes})
		return err
	})
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return f
}

// LinkLandlord creates a real landlord on the plan and links it to the
// application with the granted scopes.
func (f Fixture) LinkLandlord(t testing.TB, db *store.DB, plan rental.LandlordPlan, granted rental.Scopes) *rental.Account {
	t.Helper()
	ctx := context.Background()
	var acct *rental.Account
	err := db.InTx(ctx, func(tx *store.Tx) error {
		ll, err := tx.CreateLandlord(ctx, fmt.Sprintf("Landlord %s", plan), plan)
		if err != nil {
			return err
		}
		acct, err = tx.LinkAccount(ctx, f.App.ID, ll, granted)
		return err
	})
	if err != nil {
		t.Fatalf("link landlord: %v", err)
	}
	return acct
}

// Sandbox returns the application's sandbox account.
func (f Fixture) Sandbox(t testing.TB, db *store.DB) *rental.Account {
	t.Helper()
	a, err := db.Read().GetAccount(context.Background(), f.App.ID, f.App.SandboxAccountID)
	if err != nil {
		t.Fatalf("sandbox: %v", err)
	}
	return a
}

// Key creates a key of the application and returns its text.
func (f Fixture) Key(t testing.TB, db *store.DB, sec *secret.Secret, k store.NewKey) string {
	t.Helper()
	m := rental.MintKey(k.Mode, sec.Fingerprint)
	text := m.Text
	k = k.Minted(m)
	k.ApplicationID = f.App.ID
	if k.Scopes == nil {
		k.Scopes = f.App.Scopes
	}
	ctx := context.Background()
	if err := db.InTx(ctx, func(tx *store.Tx) error { _, err := tx.CreateAPIKey(ctx, k); return err }); err != nil {
		t.Fatalf("create key: %v", err)
	}
	return text
}

// Secret is a fixed server secret for tests.
func Secret(t testing.TB) *secret.Secret {
	s, err := secret.New("test-secret-test-secret-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// EveryRow yields every row of every table of the database, its columns
// written out as text, keyed by the table's name: tests look through it
// for a secret stored in clear.
func EveryRow(t testing.TB, db *store.DB) func(func(string, string) bool) {
	t.Helper()
	list := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if db.Engine() == store.Postgres {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	pool := db.WritePool()
	rows, err := pool.QueryContext(t.Context(), list)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil || len(tables) < 10 {
		t.Fatalf("tables %v: %v", tables, err)
	}
	return func(yield func(string, string) bool) {
		for _, table := range tables {
			for _, row := range dumpTable(t, pool, table) {
				if !yield(table, row) {
					return
				}
			}
		}
	}
}

func dumpTable(t testing.TB, pool *sql.DB, table string) []string {
	rows, err := pool.QueryContext(t.Context(), `SELECT * FROM `+table)
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		var b strings.Builder
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v ", cols[i], v)
		}
		out = append(out, b.String())
	}
	return out
}

// IssuedBills makes a property from ch (a name is given when ch has none)
// with n rooms, each with its reading of month (100 kWh and 5 m³) and its
// issued bill, for the landlord, whose PromptPay receiver it sets so the
// bills are payable: the bills a test of payments, receipts or late fees
// starts from.
func IssuedBills(t testing.TB, db *store.DB, acct *rental.Account, ch rental.PropertyChange, month string, n int) []rental.Bill {
	t.Helper()
	ctx := t.Context()
	if !ch.Name.Set {
		ch.Name = rental.Of("Bills " + rental.NewID("p"))
	}
	p, err := rental.NewProperty(ch)
	if err != nil {
		t.Fatal(err)
	}
	var bills []rental.Bill
	err = db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.SetPromptPay(ctx, acct.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}, ""); err != nil {
			return err
		}
		prop, err := tx.CreateProperty(ctx, acct, p)
		if err != nil {
			return err
		}
		for i := range n {
			r, err := rental.NewRoom(prop.ID, rental.RoomChange{Number: rental.Of(fmt.Sprintf("B%03d", i)), MonthlyRent: rental.Of[int64](300_000)})
			if err != nil {
				return err
			}
			room, err := tx.CreateRoom(ctx, acct, r)
			if err != nil {
				return err
			}
			_, err = tx.CreateReading(ctx, acct, store.ReadingInput{RoomID: room.ID, Month: month,
				Electricity: rental.PartInput{Set: true, Previous: rental.Of[rental.Quantity](1_000_000), Current: rental.Of[rental.Quantity](1_100_000)},
				Water:       rental.PartInput{Set: true, Previous: rental.Of[rental.Quantity](50_000), Current: rental.Of[rental.Quantity](55_000)}})
			if err != nil {
				return err
			}
			b, err := tx.CreateBill(ctx, acct, room.ID, month, true)
			if err != nil {
				return err
			}
			bills = append(bills, *b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bills
}
