package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

// dbFlags are the flags every command that opens the database shares.
type dbFlags struct {
	dsn string
	// secret is the server secret's file, or its variable.
	secret secretFlag
	// log takes serve's notices as JSON lines; nil for the operator tools,
	// whose notices are text for the person at the terminal.
	log *slog.Logger
	// riverLog is where the database's job queue client writes: JSON lines
	// on stderr at warning and above, unless serve says otherwise.
	riverLog *slog.Logger
	maxConns int
	// addFriendURL is serve's LINE add-friend link, which tenant objects
	// show; the operator tools leave it empty.
	addFriendURL string
	// publicURL is serve's public URL, under which receipts' pages are;
	// the operator tools leave it empty.
	publicURL string
}

// dbFlags defines the database's flags on fs.
func (e environment) dbFlags(fs *envFlags) *dbFlags {
	f := &dbFlags{riverLog: slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	fs.String(&f.dsn, "db", "RENTAPI_DB", "sqlite:rentapi.db", "database: sqlite:PATH or a postgres:// URL", "")
	fs.Secret(&f.secret, "secret-file", "RENTAPI_SECRET_FILE", "RENTAPI_SECRET", "secret", "file holding the server secret, created when absent",
		"default: rentapi.secret beside a SQLite database, else in the working directory")
	fs.Int(&f.maxConns, "db-max-conns", "RENTAPI_DB_MAX_CONNS", store.DefaultMaxConns,
		"PostgreSQL connections this process may hold, the background jobs' included; every process's, together, must stay under the server's max_connections",
		"SQLite ignores it")
	return f
}

// check refuses flag values that cannot open a database, before anything
// is touched.
func (f *dbFlags) check() error {
	if f.maxConns < 1 {
		return fmt.Errorf("--db-max-conns %d: want at least 1", f.maxConns)
	}
	return nil
}

// open connects to the database and migrates it. With the server secret
// (nil for migrate, which loads none), the process makes and shows payment
// links, and the migration seals links stored in clear before.
func (f *dbFlags) open(ctx context.Context, sec *secret.Secret) (*store.DB, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, f.dsn, store.Options{MaxConns: f.maxConns, Log: f.riverLog, AddFriendURL: f.addFriendURL, Secret: sec, PublicURL: f.publicURL})
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// openData loads the server secret and opens the database, migrated: what
// serve and the admin tools both need before they work on the data, in one
// place so that they find the secret and the database the same way. The
// secret comes first, so a process that cannot have it touches no database.
// The caller closes the database.
func (e environment) openData(ctx context.Context, f *dbFlags) (*secret.Secret, *store.DB, error) {
	sec, err := e.loadSecret(f)
	if err != nil {
		return nil, nil, err
	}
	db, err := f.open(ctx, sec)
	if err != nil {
		return nil, nil, err
	}
	return sec, db, nil
}

// loadSecret returns the server secret from its variable (taken as it is,
// untrimmed), the secret file, or a new file beside the data.
func (e environment) loadSecret(f *dbFlags) (*secret.Secret, error) {
	if v := e.getenv(f.secret.env); v != "" {
		return secret.New(v)
	}
	path := f.secret.file
	if path == "" {
		dir := "."
		if p, ok := strings.CutPrefix(f.dsn, "sqlite:"); ok {
			dir = filepath.Dir(strings.TrimPrefix(p, "//"))
		}
		path = filepath.Join(dir, "rentapi.secret")
	}
	s, created, err := secret.Load(path)
	if err != nil {
		return nil, err
	}
	switch {
	case created && f.log != nil:
		f.log.Warn("created a new server secret; every process of this database needs the same secret", "path", path)
	case created:
		fmt.Fprintf(e.stderr, "rentapi: created a new server secret in %s; every process of this database needs the same secret\n", path)
	}
	return s, nil
}

func (e environment) migrate(ctx context.Context, args []string) error {
	fs := e.flags("migrate")
	db := e.dbFlags(fs)
	if err := fs.parse(args, "bring a database's schema up to date and exit (serve migrates on start too)"); err != nil {
		return err
	}
	conn, err := db.open(ctx, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Fprintln(e.stderr, "rentapi: database is up to date")
	return nil
}

// loadProviders reads the payment providers' file: one "name=secret" per
// line, blank lines and lines starting with # ignored. Names are what
// providers put in their callback URL; secrets sign their confirmations and
// must be at least 16 characters. No file means no providers.
func loadProviders(path string) (map[string]string, error) {
	providers := map[string]string{}
	if path == "" {
		return providers, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("payment providers: %w", err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, sec, ok := strings.Cut(line, "=")
		name, sec = strings.TrimSpace(name), strings.TrimSpace(sec)
		switch {
		case !ok || !providerName.MatchString(name):
			return nil, fmt.Errorf("payment providers: %s line %d: want name=secret with a name of [a-z0-9_-], 1-40 characters", path, i+1)
		case name == rental.SandboxProvider:
			return nil, fmt.Errorf("payment providers: %s line %d: %q is test mode's own provider", path, i+1, name)
		case len(sec) < 16:
			return nil, fmt.Errorf("payment providers: %s line %d: the secret of %s is shorter than 16 characters", path, i+1, name)
		}
		providers[name] = sec
	}
	return providers, nil
}

var providerName = regexp.MustCompile(`^[a-z0-9_-]{1,40}$`)

// checkPublicURL refuses a public URL over which the pages' session cookies
// could not be Secure: the pages' cookies are Secure and __Host- prefixed
// over https only, so plain http is for development on this machine, a
// loopback host, and nothing else. An empty public URL is http:// and the
// listen address, which must then be a loopback one.
func checkPublicURL(publicURL, addr string) error {
	if publicURL == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil || !loopbackHost(host) {
			return fmt.Errorf("--public-url is not set, so it would be http://%s, plain http on an address that is not loopback, "+
				"and the pages' session cookies would lose Secure: give --public-url https://<the host browsers reach> "+
				"(env RENTAPI_PUBLIC_URL; a TLS proxy in front of the service), or listen on 127.0.0.1 for development", addr)
		}
		return nil
	}
	u, err := url.Parse(publicURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--public-url %q: want https://host[:port] (plain http:// only on localhost or a loopback address, for development)", publicURL)
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		return fmt.Errorf("--public-url %s is plain http on %s, which is not loopback: the pages' session cookies would lose Secure. "+
			"Give the https:// address browsers reach the service at (a TLS proxy in front of it), or use http://127.0.0.1 for development", publicURL, u.Hostname())
	}
	return nil
}

// loopbackHost reports whether host is this machine by name or address:
// localhost (and names under .localhost) or a loopback IP.
func loopbackHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
