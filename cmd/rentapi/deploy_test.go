package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rentapi/internal/bucket/buckettest"
	"rentapi/internal/store/storetest"
)

// tryServe runs `rentapi serve` in this process. When it starts listening
// it is stopped again, and started is true; otherwise err is why it did
// not start. Its output is returned either way.
func tryServe(t *testing.T, getenv func(string) string, args ...string) (started bool, err error, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out, errs syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"serve"}, args...), getenv, nil, &out, &errs) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		select {
		case err := <-done:
			return false, err, out.String(), errs.String()
		case <-time.After(20 * time.Millisecond):
		}
		if listening.MatchString(out.String()) {
			cancel()
			err := <-done
			return true, err, out.String(), errs.String()
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("serve neither started nor ended: %s", errs.String())
		}
	}
}

// A public URL is https, or plain http on this machine only.
func TestCheckPublicURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		publicURL, addr string
		ok              bool
	}{
		{"https://rent.example.com", "0.0.0.0:8080", true},
		{"https://rent.example.com:8443/", "[::]:8080", true},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"http://127.9.9.9", "0.0.0.0:8080", true},
		{"http://localhost:3000", "127.0.0.1:3000", true},
		{"http://app.localhost", "127.0.0.1:3000", true},
		{"http://[::1]:8080", "[::1]:8080", true},
		{"", "127.0.0.1:8080", true},
		{"", "[::1]:0", true},
		{"", "localhost:8080", true},
		{"http://rent.example.com", "127.0.0.1:8080", false},
		{"http://192.0.2.10:8080", "192.0.2.10:8080", false},
		{"http://0.0.0.0:8080", "0.0.0.0:8080", false},
		{"http://10.0.0.5", "127.0.0.1:8080", false},
		{"http://localhost.example.com", "127.0.0.1:8080", false},
		{"HTTP://rent.example.com", "127.0.0.1:8080", false},
		{"", "0.0.0.0:8080", false},
		{"", ":8080", false},
		{"", "192.0.2.10:8080", false},
		{"ftp://rent.example.com", "127.0.0.1:8080", false},
		{"https://", "127.0.0.1:8080", false},
		{"rent.example.com", "127.0.0.1:8080", false},
		{"https://user:pw@rent.example.com", "127.0.0.1:8080", false},
		{"https://rent.example.com/?x=1", "127.0.0.1:8080", false},
	} {
		err := checkPublicURL(c.publicURL, c.addr)
		if (err == nil) != c.ok {
			t.Errorf("public URL %q, address %q: %v", c.publicURL, c.addr, err)
		}
	}
}

// serve refuses to start, before it opens the database, when the public
// URL is plain http on a host that is not loopback (given, or made of a
// listen address on every interface): the pages' cookies would lose
// Secure. It says why and what to give instead. An https public URL
// serves, with Secure, __Host- cookies.
func TestServeRefusesAPlainHTTPPublicURL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "x.db")
	getenv := func(name string) string {
		return map[string]string{"RENTAPI_DB": "sqlite:" + dbPath, "RENTAPI_SECRET_FILE": filepath.Join(dir, "secret")}[name]
	}
	for _, args := range [][]string{
		{"--addr", "127.0.0.1:0", "--public-url", "http://rent.example.com"},
		{"--addr", "127.0.0.1:0", "--public-url", "http://203.0.113.9:8080"},
		{"--addr", "0.0.0.0:0"},
		{"--addr", ":0"},
	} {
		started, err, stdout, _ := tryServe(t, getenv, args...)
		if started || err == nil || !strings.Contains(err.Error(), "not loopback") || !strings.Contains(err.Error(), "https://") ||
			!strings.Contains(err.Error(), "Secure") {
			t.Errorf("serve %v: started %v, %v", args, started, err)
		}
		if stdout != "" {
			t.Errorf("serve %v printed %q", args, stdout)
		}
		if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
			t.Fatalf("serve %v made the database before refusing: %v", args, err)
		}
	}
	env := map[string]string{"RENTAPI_DB": "sqlite:" + dbPath, "RENTAPI_SECRET_FILE": filepath.Join(dir, "secret"), "RENTAPI_PUBLIC_URL": "https://rent.example.com"}
	base, _, stop := serveInProcess(t, func(k string) string { return env[k] }, "--addr", "127.0.0.1:0")
	defer stop()
	form := url.Values{"name": {"Dev"}, "email": {"dev@example.com"}, "password": {"long enough pw"}}
	r, _ := http.NewRequest("POST", base+"/portal/signup", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if c := resp.Cookies(); resp.StatusCode != http.StatusSeeOther || len(c) != 1 || !c[0].Secure || !strings.HasPrefix(c[0].Name, "__Host-") {
		t.Fatalf("sign-up over an https public URL: %d %v", resp.StatusCode, resp.Header["Set-Cookie"])
	}
}

// serve over PostgreSQL without --redis warns at start that every limit is
// counted by each process alone; with Redis, or over SQLite (one process
// only), it does not.
func TestServeWarnsOverPostgresWithoutRedis(t *testing.T) {
	t.Parallel()
	pg := storetest.Postgres(t).DSN
	redisURL := buckettest.StartRedis(t).URL
	dir := t.TempDir()
	for _, c := range []struct {
		name, db, redis string
		warns           bool
	}{
		{"postgres", pg, "", true},
		{"postgres with redis", pg, redisURL, false},
		{"sqlite", "sqlite:" + filepath.Join(dir, "x.db"), "", false},
	} {
		env := map[string]string{"RENTAPI_DB": c.db, "RENTAPI_REDIS": c.redis, "RENTAPI_SECRET_FILE": filepath.Join(dir, "secret")}
		started, err, _, stderr := tryServe(t, func(k string) string { return env[k] }, "--addr", "127.0.0.1:0")
		if !started || err != nil {
			t.Fatalf("%s: started %v, %v\n%s", c.name, started, err, stderr)
		}
		warned := false
		for line := range strings.Lines(stderr) {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("%s: a line that is not JSON: %q", c.name, line)
			}
			if m["msg"] == noRedisWarning {
				warned = m["level"] == "WARN"
			}
		}
		if warned != c.warns {
			t.Errorf("%s: warned %v, want %v:\n%s", c.name, warned, c.warns, stderr)
		}
	}
}
