package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// TestMain removes the binary buildBinary made once the tests are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the binary compiled for this test run, shared by the tests
// that run it (in parallel: each runs its own process of it).
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildBinary compiles rentapi once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "rentapi-test-")
		if built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "rentapi")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// server is a running rentapi process.
type server struct {
	cmd  *exec.Cmd
	base string
	key  string // the sandbox key printed on first start, if any
	// metrics is the metrics listener's URL, when it was asked for.
	metrics string
	// try is the curl line printed beside the key, for a person to paste.
	try string
	// stderr is what the server wrote on stderr, read while it runs.
	stderr *syncBuffer
}

var (
	metricsOn = regexp.MustCompile(`metrics on (http://\S+)`)
	listening = regexp.MustCompile(`listening on (http://\S+)`)
	printed   = regexp.MustCompile(`sandbox test key \(shown once; keep it\): (svc_test_[A-Za-z0-9]{40})`)
	tryLine   = regexp.MustCompile(`^rentapi: try: (curl .*)$`)
)

func startServer(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	s := &server{cmd: cmd, stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	deadline := time.After(30 * time.Second)
	found := make(chan struct{})
	go func() {
		for lines.Scan() {
			if m := printed.FindStringSubmatch(lines.Text()); m != nil {
				s.key = m[1]
			}
			if m := tryLine.FindStringSubmatch(lines.Text()); m != nil {
				s.try = m[1]
			}
			if m := metricsOn.FindStringSubmatch(lines.Text()); m != nil {
				s.metrics = m[1]
			}
			if m := listening.FindStringSubmatch(lines.Text()); m != nil {
				s.base = m[1]
				close(found)
				io.Copy(io.Discard, stdout)
				return
			}
		}
	}()
	select {
	case <-found:
	case <-deadline:
		t.Fatalf("server did not start: %s", s.stderr)
	}
	return s
}

func (s *server) call(t *testing.T, key, method, path, body string) (int, map[string]any) {
	t.Helper()
	r, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func admin(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"admin"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("admin %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// freshDSN is the DSN of a new database of the engine for the binary; the
// postgres subtest skips (visibly) when no PostgreSQL is configured.
func freshDSN(t *testing.T, engine string) string {
	if engine == "postgres" {
		return storetest.Postgres(t).DSN
	}
	return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
}

// The README's first steps, on the real binary: serve a new database, use
// the printed key, make keys and applications with the admin tools, and
// stop cleanly on SIGTERM.
func TestBinaryEndToEnd(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			dsn := freshDSN(t, engine)
			env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret")}
			srv := startServer(t, bin, env)
			if srv.key == "" {
				t.Fatal("no sandbox key printed on a new database")
			}
			status, acct := srv.call(t, srv.key, "GET", "/v1/account", "")
			if status != 200 || acct["data"].(map[string]any)["livemode"] != false {
				t.Fatalf("account: %d %v", status, acct)
			}

			// admin create-key prints only the key; create-app only the ID.
			key := strings.TrimSpace(admin(t, bin, env, "create-key", "--mode", "test", "--scopes", "properties:read,properties:write", "--name", "ci"))
			if !regexp.MustCompile(`^svc_test_[A-Za-z0-9]{40}$`).MatchString(key) {
				t.Fatalf("create-key printed %q", key)
			}
			app := strings.TrimSpace(admin(t, bin, env, "create-app", "--name", "Second"))
			if !regexp.MustCompile(`^app_[a-z0-9]{24}$`).MatchString(app) {
				t.Fatalf("create-app printed %q", app)
			}
			other := strings.TrimSpace(admin(t, bin, env, "create-key", "--mode", "test", "--app", app))

			status, p := srv.call(t, key, "POST", "/v1/properties", `{"name":"Baan Suk","electricity_rate":800,"water_rate":1800}`)
			if status != 201 {
				t.Fatalf("create property: %d %v", status, p)
			}
			id := p["data"].(map[string]any)["id"].(string)
			if status, _ := srv.call(t, other, "GET", "/v1/properties/"+id, ""); status != 404 {
				t.Fatalf("another application's key reads the property: %d", status)
			}
			status, list := srv.call(t, key, "GET", "/v1/properties", "")
			if status != 200 || len(list["data"].([]any)) != 3 { // with the sandbox's two sample properties
				t.Fatalf("list: %d %v", status, list)
			}

			// A live key needs a linked landlord first.
			cmd := exec.Command(bin, "admin", "create-key", "--mode", "live")
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Fatalf("live key before any link: %s", out)
			}
			landlord := strings.TrimSpace(admin(t, bin, env, "create-landlord", "--name", "Khun Somchai", "--plan", "standard"))
			account := strings.TrimSpace(admin(t, bin, env, "link-account", "--landlord", landlord))
			live := strings.TrimSpace(admin(t, bin, env, "create-key", "--mode", "live", "--account", account))
			status, la := srv.call(t, live, "GET", "/v1/account", "")
			if status != 200 || la["data"].(map[string]any)["id"] != account {
				t.Fatalf("live account: %d %v", status, la)
			}

			// A restart over the same database prints no new key and keeps the data.
			srv.cmd.Process.Signal(syscall.SIGTERM)
			if err := srv.cmd.Wait(); err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.stderr)
			}
			again := startServer(t, bin, env)
			if again.key != "" {
				t.Fatal("a second start printed a new key")
			}
			if status, _ := again.call(t, key, "GET", "/v1/properties/"+id, ""); status != 200 {
				t.Fatalf("after restart: %d", status)
			}
			resp, err := http.Get(again.base + "/readyz")
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("readyz: %v %v", resp, err)
			}
		})
	}
}

// The commands refuse what they cannot do, with a message and no output.
// The README's --rate-limits off works (it was once taken as a stray
// argument, leaving the limits on), and so do on, true and false.
func TestOnOffFlag(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  string
		want bool
	}{
		{[]string{"--rate-limits", "off"}, "", false},
		{[]string{"--rate-limits=false"}, "", false},
		{[]string{"--rate-limits", "on"}, "off", true},
		{nil, "off", false},
		{nil, "", true},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		v, err := newOnOff(fs, "rate-limits", c.env, true, "")
		if err != nil {
			t.Fatal(err)
		}
		e := environment{getenv: func(string) string { return "" }, stdout: io.Discard, stderr: io.Discard}
		if err := e.parse(fs, c.args, ""); err != nil || bool(*v) != c.want {
			t.Errorf("%v (env %q): %v %v", c.args, c.env, bool(*v), err)
		}
	}
	if _, err := newOnOff(flag.NewFlagSet("x", flag.ContinueOnError), "rate-limits", "maybe", true, ""); err == nil {
		t.Error("RENTAPI_RATE_LIMITS=maybe was taken")
	}
}

func TestRunErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	getenv := func(name string) string {
		return map[string]string{"RENTAPI_DB": "sqlite:" + filepath.Join(dir, "x.db")}[name]
	}
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"admin"},
		{"admin", "create-key"}, // no demo application yet
		{"admin", "create-key", "--mode", "staging", "--app", "app_x"},
		{"migrate", "--db", "mysql://x"},
		{"migrate", "--db-max-conns", "0"},
		{"serve", "--db-max-conns", "-1", "--addr", "127.0.0.1:0"},
		{"serve", "--rate-limits", "maybe", "--addr", "127.0.0.1:0"},
		{"serve", "--webhook-allow-loopback", "on", "--addr", "127.0.0.1:0"}, // a stray argument after a switch
		{"migrate", "extra"},
		{"serve", "--pprof", "on", "--addr", "127.0.0.1:0"}, // the profiler needs the operator's listener
	} {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), args, getenv, nil, &stdout, &stderr); err == nil {
			t.Errorf("%v succeeded", args)
		}
		if stdout.Len() != 0 {
			t.Errorf("%v printed %q on stdout", args, stdout.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"migrate"}, getenv, nil, &stdout, &stderr); err != nil {
		t.Fatalf("migrate: %v %s", err, stderr.String())
	}
}

// Crash safety of webhook deliveries: the process is killed (SIGKILL) while
// 1,000 deliveries are pending, some of them in flight; after a restart
// every event reaches the receiver at least once.
func TestWebhooksSurviveAKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the binary twice and waits for 1,000 deliveries")
	}
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			dsn := freshDSN(t, engine)
			// The receiver holds every request until the first process is
			// gone, then takes everything.
			var mu sync.Mutex
			got := map[string]int{}
			hold := make(chan struct{})
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
				var ev struct{ ID string }
				json.NewDecoder(r.Body).Decode(&ev)
				mu.Lock()
				got[ev.ID]++
				mu.Unlock()
			}))
			defer recv.Close()

			env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret")}
			args := []string{"--webhook-allow-loopback", "--rate-limits=false", "--job-rescue-after", "3s"}
			srv := startServer(t, bin, env, args...)
			if status, ep := srv.call(t, srv.key, "POST", "/v1/webhook-endpoints", `{"url":"`+recv.URL+`/hook","enabled_events":["*"]}`); status != 201 {
				t.Fatalf("create endpoint: %d %v", status, ep)
			}
			status, p := srv.call(t, srv.key, "POST", "/v1/properties", `{"name":"Crash","electricity_rate":800,"water_rate":1800}`)
			if status != 201 {
				t.Fatalf("create property: %d %v", status, p)
			}
			id := p["data"].(map[string]any)["id"].(string)
			for i := range 999 {
				if status, _ := srv.call(t, srv.key, "PATCH", "/v1/properties/"+id, fmt.Sprintf(`{"name":"Crash %d"}`, i)); status != 200 {
					t.Fatalf("update %d: %d", i, status)
				}
			}
			srv.cmd.Process.Signal(syscall.SIGKILL)
			srv.cmd.Wait()
			close(hold)

			key := srv.key
			srv = startServer(t, bin, env, args...)
			var want []string
			path := "/v1/events?limit=100"
			for {
				status, page := srv.call(t, key, "GET", path, "")
				if status != 200 {
					t.Fatalf("events: %d %v", status, page)
				}
				for _, ev := range page["data"].([]any) {
					want = append(want, ev.(map[string]any)["id"].(string))
				}
				pg := page["pagination"].(map[string]any)
				if pg["has_more"] != true {
					break
				}
				path = "/v1/events?limit=100&cursor=" + pg["next_cursor"].(string)
			}
			if len(want) != 1000 {
				t.Fatalf("%d events, want 1000", len(want))
			}
			missing := want
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				mu.Lock()
				missing = slices.DeleteFunc(missing, func(id string) bool { return got[id] > 0 })
				mu.Unlock()
				if len(missing) == 0 {
					break
				}
			}
			if len(missing) > 0 {
				t.Fatalf("%d of 1000 events never arrived after the restart, e.g. %s\n%s", len(missing), missing[0], srv.stderr)
			}
		})
	}
}

// Help is asked for, so it is a success: the top level and admin list every
// command and tool, and each command and tool prints its flags, on stdout.
func TestHelp(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	help := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), args, getenv, nil, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		if stdout.Len() == 0 {
			t.Fatalf("%v printed nothing on stdout; stderr: %s", args, stderr.String())
		}
		return stdout.String()
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out := help(args...)
		for _, c := range []string{"serve", "migrate", "version", "admin create-app", "admin create-key", "admin create-landlord", "admin set-promptpay", "admin link-account",
			"admin reset-password", "admin suspend-developer", "admin unsuspend-developer", "admin disable-app", "admin enable-app", "admin list-keys", "admin revoke-key"} {
			if !strings.Contains(out, "  "+c+" ") {
				t.Errorf("%v does not list %q:\n%s", args, c, out)
			}
		}
	}
	for _, args := range [][]string{{"admin", "--help"}, {"admin", "-h"}, {"admin", "help"}} {
		out := help(args...)
		for _, tool := range adminTools {
			if !strings.Contains(out, "  "+tool.name+" ") {
				t.Errorf("%v does not list %q:\n%s", args, tool.name, out)
			}
		}
	}
	flags := map[string][]string{
		"serve":   {"-addr", "-db", "-db-max-conns", "-secret-file", "-redis", "-webhook-allow-loopback", "-public-url", "-payment-providers"},
		"migrate": {"-db", "-db-max-conns", "-secret-file"},
		"version": nil,
	}
	for _, tool := range adminTools {
		flags["admin "+tool.name] = []string{"-db", "-db-max-conns"}
	}
	flags["admin set-promptpay"] = append(flags["admin set-promptpay"], "-landlord", "-kind", "-id", "-ref2", "-name")
	flags["admin reset-password"] = append(flags["admin reset-password"], "-kind", "-email")
	flags["admin suspend-developer"] = append(flags["admin suspend-developer"], "-developer")
	flags["admin unsuspend-developer"] = append(flags["admin unsuspend-developer"], "-developer")
	flags["admin disable-app"] = append(flags["admin disable-app"], "-app")
	flags["admin enable-app"] = append(flags["admin enable-app"], "-app")
	flags["admin list-keys"] = append(flags["admin list-keys"], "-app")
	flags["admin revoke-key"] = append(flags["admin revoke-key"], "-key")
	for cmd, want := range flags {
		out := help(append(strings.Fields(cmd), "--help")...)
		if !strings.HasPrefix(out, "usage: rentapi "+cmd+" ") {
			t.Errorf("%s --help: %q", cmd, out)
		}
		for _, f := range want {
			if !strings.Contains(out, "  "+f+" ") && !strings.Contains(out, "  "+f+"\n") {
				t.Errorf("%s --help does not list %s:\n%s", cmd, f, out)
			}
		}
	}

	// A bad flag is an error, with the usage on stderr and nothing on stdout.
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"serve", "--no-such-flag"}, getenv, nil, &stdout, &stderr); err == nil || stdout.Len() > 0 ||
		!strings.Contains(stderr.String(), "usage: rentapi serve") {
		t.Errorf("serve --no-such-flag: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
}

// The real binary exits 0 for help and for version.
func TestBinaryHelpAndVersion(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, args := range [][]string{{"--help"}, {"serve", "--help"}, {"admin", "--help"}, {"admin", "set-promptpay", "-h"}, {"version"}} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Errorf("rentapi %v: %v\n%s", args, err, stderr.String())
		}
		if stdout.Len() == 0 {
			t.Errorf("rentapi %v printed nothing", args)
		}
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^rentapi \S+, (unknown revision|revision [0-9a-f]{40}\b.*), go\S+\n$`).Match(out) {
		t.Fatalf("version: %q", out)
	}
	// Built inside a repository (with VCS stamping on), it names the revision.
	if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && strings.Contains(string(out), "revision ") &&
		!strings.Contains(string(out), "revision "+strings.TrimSpace(string(head))) {
		t.Fatalf("version %q, but HEAD is %s", out, head)
	}
}

func TestVersionLine(t *testing.T) {
	t.Parallel()
	stamped := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "e6b1ab5c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a"},
		{Key: "vcs.time", Value: "2026-11-22T03:00:00Z"}, {Key: "vcs.modified", Value: "false"}}
	dirty := append(slices.Clone(stamped[:3]), debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "rentapi", Version: "(devel)"}}, true,
			"rentapi (devel), unknown revision, go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "rentapi"}}, true,
			"rentapi (devel), unknown revision, go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "rentapi", Version: "v1.2.0"}, Settings: stamped}, true,
			"rentapi v1.2.0, revision e6b1ab5c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a (2026-11-22T03:00:00Z), go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "rentapi", Version: "v0.0.0-20261122030000-e6b1ab5c0d1e+dirty"}, Settings: dirty}, true,
			"rentapi v0.0.0-20261122030000-e6b1ab5c0d1e+dirty, revision e6b1ab5c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a (2026-11-22T03:00:00Z) with uncommitted changes, go1.26.8"},
		{nil, false, "rentapi (unknown version: built without module support), unknown revision"},
	} {
		if got := versionLine(tc.bi, tc.ok); got != tc.want {
			t.Errorf("versionLine:\n got %q\nwant %q", got, tc.want)
		}
	}
}

// syncBuffer is a buffer that a server goroutine writes while the test
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveInProcess runs `rentapi serve` with args in this process until stop
// is called, and returns its address and the sandbox key it printed, if any.
func serveInProcess(t *testing.T, getenv func(string) string, args ...string) (base, key string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), getenv, nil, &stdout, &stderr) }()
	stop = func() error { cancel(); return <-done }
	for deadline := time.Now().Add(30 * time.Second); ; {
		if m := listening.FindStringSubmatch(stdout.String()); m != nil {
			base = m[1]
			break
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before listening: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve did not start: %s", stderr.String())
		}
	}
	if m := printed.FindStringSubmatch(stdout.String()); m != nil {
		key = m[1]
	}
	return base, key, stop
}

// A first start that cannot bind its address writes nothing, so the next
// start still makes the demo and prints its key: the key is shown once,
// and a database with a demo that nobody got the key for would never show
// it again.
func TestServeOnATakenAddressKeepsTheFirstKey(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	dbs := map[string]map[string]string{
		// No secret given: it is made beside the database, in a directory
		// the service creates.
		"sqlite": {"RENTAPI_DB": "sqlite:" + filepath.Join(dir, "data", "rentapi.db")},
	}
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbs["postgres"] = map[string]string{"RENTAPI_DB": storetest.Postgres(t).DSN, "RENTAPI_SECRET_FILE": filepath.Join(dir, "pg.secret")}
	}
	for name, env := range dbs {
		t.Run(name, func(t *testing.T) {
			getenv := func(k string) string { return env[k] }
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), []string{"serve", "--addr", taken.Addr().String()}, getenv, nil, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), "listen") {
				t.Fatalf("serve on a taken address: %v\n%s", err, stderr.String())
			}
			if stdout.Len() > 0 {
				t.Fatalf("serve on a taken address printed %q", stdout.String())
			}

			base, key, stop := serveInProcess(t, getenv, "--addr", "127.0.0.1:0")
			if key == "" {
				stop()
				t.Fatal("no sandbox key printed after a failed first start")
			}
			r, _ := http.NewRequest("GET", base+"/v1/account", nil)
			r.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("the printed key: %d", resp.StatusCode)
			}
			if name == "sqlite" {
				// The service's own directory and database are its user's only.
				for path, want := range map[string]os.FileMode{filepath.Join(dir, "data"): 0o700, filepath.Join(dir, "data", "rentapi.db"): 0o600} {
					if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
						t.Errorf("%s: %v %v, want mode %#o", path, fi.Mode(), err, want)
					}
				}
			}
			if err := stop(); err != nil {
				t.Fatalf("serve: %v", err)
			}
		})
	}
}

// serve --db-max-conns caps the process's PostgreSQL connections, however
// many requests come at once.
func TestServeDBMaxConns(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	u, err := url.Parse(e.DSN)
	if err != nil {
		t.Fatal(err)
	}
	app := "rentapi_" + strings.TrimPrefix(rental.NewID("t"), "t_")
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	env := map[string]string{"RENTAPI_DB": u.String(), "RENTAPI_SECRET_FILE": filepath.Join(t.TempDir(), "secret"), "RENTAPI_DB_MAX_CONNS": "2"}
	base, key, stop := serveInProcess(t, func(k string) string { return env[k] }, "--addr", "127.0.0.1:0", "--rate-limits=false")
	defer stop()

	var most atomic.Int64
	sampled := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var n int64
			if err := e.DB.WritePool().QueryRowContext(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n); err == nil && n > most.Load() {
				most.Store(n)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		wg.Go(func() {
			r, _ := http.NewRequest("GET", base+"/v1/properties", nil)
			r.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		})
	}
	wg.Wait()
	close(done)
	<-sampled
	for i, s := range statuses {
		if s != 200 && s != 503 {
			t.Errorf("request %d: status %d", i, s)
		}
	}
	if n := most.Load(); n == 0 || n > 2 {
		t.Fatalf("the process held up to %d connections; --db-max-conns is 2", n)
	}
}
