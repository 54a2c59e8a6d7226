package main

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rentapi/internal/store"
)

// testFlags is one set of every kind of environment flag, as a command
// defines them.
type testFlags struct {
	fs     *envFlags
	name   string
	conns  int
	limits onOff
	prof   onOff
	open   bool
	token  secretFlag
}

func newTestFlags(env map[string]string, stdout *bytes.Buffer) *testFlags {
	e := environment{getenv: func(k string) string { return env[k] }, stdout: stdout, stderr: new(bytes.Buffer)}
	f := &testFlags{fs: e.flags("test")}
	f.fs.String(&f.name, "name", "T_NAME", "rentapi", "who signs", "")
	f.fs.Int(&f.conns, "conns", "T_CONNS", 10, "connections", "SQLite ignores it")
	f.fs.OnOff(&f.limits, "limits", "T_LIMITS", true, "on or off: limits", "")
	f.fs.OnOff(&f.prof, "prof", "T_PROF", false, "on or off: profiler", "")
	f.fs.Bool(&f.open, "open", "T_OPEN", "allow loopback", "")
	f.fs.Secret(&f.token, "token-file", "T_TOKEN_FILE", "T_TOKEN", "token", "file holding the token", "without one, sends are refused")
	return f
}

// Each flag takes its default from its variable, the command line wins,
// and a variable its flag cannot take is refused at parse, whatever the
// command line says, but not when help is asked for.
func TestEnvFlags(t *testing.T) {
	t.Parallel()
	type want struct {
		name   string
		conns  int
		limits bool
		prof   bool
		open   bool
		file   string
	}
	for _, c := range []struct {
		env    map[string]string
		args   []string
		want   want
		errHas string
	}{
		{nil, nil, want{"rentapi", 10, true, false, false, ""}, ""},
		{map[string]string{"T_NAME": "Khun Somchai", "T_CONNS": "3", "T_LIMITS": "off", "T_PROF": "on", "T_OPEN": "on", "T_TOKEN_FILE": "/run/token"}, nil,
			want{"Khun Somchai", 3, false, true, true, "/run/token"}, ""},
		{map[string]string{"T_NAME": "env", "T_CONNS": "3", "T_LIMITS": "off", "T_TOKEN_FILE": "/env"},
			[]string{"--name", "flag", "--conns", "5", "--limits", "on", "--open", "--token-file", "/flag"},
			want{"flag", 5, true, false, true, "/flag"}, ""},
		{map[string]string{"T_LIMITS": "FALSE", "T_PROF": "True"}, nil, want{"rentapi", 10, false, true, false, ""}, ""},
		// Only "on" opens the bool switch, as before the helper.
		{map[string]string{"T_OPEN": "true"}, nil, want{"rentapi", 10, true, false, false, ""}, ""},
		{map[string]string{"T_CONNS": "ten"}, nil, want{}, `T_CONNS="ten": want a whole number for --conns`},
		{map[string]string{"T_CONNS": "ten"}, []string{"--conns", "4"}, want{}, "T_CONNS"},
		{map[string]string{"T_LIMITS": "maybe"}, []string{"--limits", "on"}, want{}, `limits from the environment: "maybe" is neither on nor off`},
		{map[string]string{"T_CONNS": "ten", "T_PROF": "maybe"}, nil, want{}, "T_CONNS"}, // the first bad variable
		{nil, []string{"--conns", "many"}, want{}, "invalid value"},
	} {
		f := newTestFlags(c.env, new(bytes.Buffer))
		err := f.fs.parse(c.args, "a test")
		if c.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("env %v args %v: error %v, want one with %q", c.env, c.args, err, c.errHas)
			}
			continue
		}
		got := want{f.name, f.conns, bool(f.limits), bool(f.prof), f.open, f.token.file}
		if err != nil || got != c.want {
			t.Errorf("env %v args %v: %+v %v, want %+v", c.env, c.args, got, err, c.want)
		}
	}
}

// The help names every variable beside its flag, once each, with the
// value of a switch's variable that changes its default and the notes
// after it; a bad variable does not stop the help.
func TestEnvFlagsHelp(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	f := newTestFlags(map[string]string{"T_CONNS": "ten", "T_NAME": "Khun Somchai"}, &stdout)
	if err := f.fs.parse([]string{"--help"}, "a test"); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, line := range []string{
		`who signs (env T_NAME) (default "Khun Somchai")`,
		"connections (env T_CONNS; SQLite ignores it) (default 10)",
		"on or off: limits (env T_LIMITS=off) (default on)",
		"on or off: profiler (env T_PROF=on)\n",
		"allow loopback (env T_OPEN=on)\n",
		"file holding the token (env T_TOKEN_FILE; T_TOKEN gives the token itself; without one, sends are refused)\n",
	} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("help does not say %q:\n%s", line, stdout.String())
		}
	}
}

// A credential comes from its own variable first, then from the file the
// flag names, each trimmed; neither is empty, and a file that cannot be
// read is an error.
func TestSecretFlagValue(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("  from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env, file, want string
		fails           bool
	}{
		{"", "", "", false},
		{"", file, "from-file", false},
		{" from-env\n", file, "from-env", false},
		{"from-env", filepath.Join(dir, "missing"), "from-env", false},
		{"", filepath.Join(dir, "missing"), "", true},
	} {
		s := secretFlag{file: c.file, env: "T_TOKEN"}
		got, err := s.value(func(k string) string { return map[string]string{"T_TOKEN": c.env}[k] })
		if (err != nil) != c.fails || got != c.want {
			t.Errorf("env %q file %q: %q %v, want %q (error: %v)", c.env, c.file, got, err, c.want, c.fails)
		}
	}
}

// serve's flags and environment are read and checked before anything is
// bound, opened or written: each mistake is refused with nothing in the
// database's directory, and a good configuration comes out as given.
func TestParseServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("line-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{"RENTAPI_DB": "sqlite:" + filepath.Join(dir, "data", "x.db")}
	for _, c := range []struct {
		env    map[string]string
		args   []string
		errHas string
	}{
		{nil, []string{"--log-level", "loud"}, `--log-level "loud"`},
		{nil, []string{"--trusted-proxies", "10.0.0.0/99"}, "trusted proxy"},
		{map[string]string{"RENTAPI_TRUSTED_PROXIES": "not-an-address"}, nil, "trusted proxy"},
		{nil, []string{"--pprof", "on"}, "--metrics-addr"},
		{map[string]string{"RENTAPI_PPROF": "on"}, nil, "--metrics-addr"},
		{nil, []string{"--payment-providers", filepath.Join(dir, "missing")}, "payment providers"},
		{nil, []string{"--line-channel-token-file", filepath.Join(dir, "missing")}, "read "},
		{nil, []string{"--public-url", "http://rent.example.com"}, "plain http"},
		{map[string]string{"RENTAPI_ADDR": "0.0.0.0:8080"}, nil, "--public-url is not set"},
		{nil, []string{"--db-max-conns", "0"}, "--db-max-conns 0"},
		{map[string]string{"RENTAPI_DB_MAX_CONNS": "x"}, []string{"--db-max-conns", "4"}, "RENTAPI_DB_MAX_CONNS"},
		{map[string]string{"RENTAPI_RATE_LIMITS": "maybe"}, nil, "rate-limits from the environment"},
	} {
		env := maps.Clone(base)
		maps.Copy(env, c.env)
		e := environment{getenv: func(k string) string { return env[k] }, stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)}
		_, err := e.parseServe(c.args)
		if err == nil || !strings.Contains(err.Error(), c.errHas) {
			t.Errorf("env %v args %v: %v, want an error with %q", c.env, c.args, err, c.errHas)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		t.Errorf("the refused configurations wrote %v (%v)", entries, err)
	}

	env := maps.Clone(base)
	maps.Copy(env, map[string]string{"RENTAPI_ADDR": "127.0.0.1:0", "RENTAPI_RATE_LIMITS": "off", "RENTAPI_LOG_LEVEL": "debug",
		"RENTAPI_LINE_CHANNEL_TOKEN_FILE": token, "RENTAPI_LINE_CHANNEL_SECRET": " line-secret ", "RENTAPI_INVOICE_SELLER_NAME": "Baan Suk",
		"RENTAPI_TRUSTED_PROXIES": "10.0.0.0/8", "RENTAPI_LINE_ADD_FRIEND_URL": "https://line.me/R/ti/p/@rentapi"})
	e := environment{getenv: func(k string) string { return env[k] }, stdout: new(bytes.Buffer), stderr: new(bytes.Buffer)}
	c, err := e.parseServe([]string{"--public-url", "https://rent.example.com", "--webhook-allow-loopback"})
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:0" || bool(c.rateLimits) || !c.allowLoopback || c.publicURL != "https://rent.example.com" || c.level != slog.LevelDebug ||
		c.line == nil || c.lineSecret != "line-secret" || c.seller.Name != "Baan Suk" || len(c.proxies) != 1 ||
		c.db.addFriendURL != "https://line.me/R/ti/p/@rentapi" || c.db.maxConns != store.DefaultMaxConns || c.rescueAfter != time.Minute {
		t.Errorf("parsed %+v, db %+v", c, c.db)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		t.Errorf("parsing wrote %v (%v)", entries, err)
	}
}
