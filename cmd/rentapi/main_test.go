package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"rentapi/internal/store/storetest"
)

// buildBinary compiles rentapi once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rentapi")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// server is a running rentapi process.
type server struct {
	cmd  *exec.Cmd
	base string
	key  string // the sandbox key printed on first start, if any
	// metrics is the metrics listener's URL, when it was asked for.
	metrics string
	stderr  *bytes.Buffer
}

var (
	metricsOn = regexp.MustCompile(`metrics on (http://\S+)`)
	listening = regexp.MustCompile(`listening on (http://\S+)`)
	printed   = regexp.MustCompile(`sandbox test key \(shown once; keep it\): (svc_test_[A-Za-z0-9]{40})`)
)

func startServer(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	s := &server{cmd: cmd, stderr: &bytes.Buffer{}}
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
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
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
func TestRunErrors(t *testing.T) {
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
	if testing.Short() {
		t.Skip("starts the binary twice and waits for 1,000 deliveries")
	}
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
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
