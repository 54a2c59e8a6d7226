package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"rentapi/internal/bucket/buckettest"
)

// The real binary with its Redis killed under it: API requests are served
// and failed-key protection still refuses, the sign-in page answers 503
// with Retry-After, the fallback is counted in the operator's metrics, and
// every line on stderr is still JSON (the Redis client's own included).
func TestServeWhenRedisIsDown(t *testing.T) {
	t.Parallel()
	redis := buckettest.StartRedis(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	env := []string{"RENTAPI_DB=sqlite:" + filepath.Join(dir, "x.db"), "RENTAPI_SECRET_FILE=" + filepath.Join(dir, "secret"), "RENTAPI_REDIS=" + redis.URL}
	srv := startServer(t, bin, env, "--metrics-addr", "127.0.0.1:0")
	if status, _ := srv.call(t, srv.key, "GET", "/v1/account", ""); status != 200 {
		t.Fatalf("with Redis: %d", status)
	}
	redis.Stop()
	for range 3 {
		if status, _ := srv.call(t, srv.key, "GET", "/v1/account", ""); status != 200 {
			t.Fatalf("with Redis down: %d", status)
		}
	}
	bad := "svc_test_" + strings.Repeat("Z", 40)
	for range 30 {
		if status, _ := srv.call(t, bad, "GET", "/v1/account", ""); status != 401 {
			t.Fatalf("a bad key with Redis down: %d", status)
		}
	}
	if status, body := srv.call(t, bad, "GET", "/v1/account", ""); status != 429 {
		t.Fatalf("the 31st bad key with Redis down: %d %v", status, body)
	}
	form := url.Values{"email": {"dev@example.com"}, "password": {"long enough pw"}}
	r, _ := http.NewRequest("POST", srv.base+"/portal/signin", strings.NewReader(form.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("sign-in with Redis down: %d %v", resp.StatusCode, resp.Header)
	}
	resp, err = http.Get(srv.metrics)
	if err != nil {
		t.Fatal(err)
	}
	var fallbacks string
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "rentapi_rate_limit_fallbacks_total "); ok {
			fallbacks = v
		}
	}
	resp.Body.Close()
	if fallbacks == "" || fallbacks == "0" {
		t.Fatalf("rentapi_rate_limit_fallbacks_total %q", fallbacks)
	}
	time.Sleep(1500 * time.Millisecond) // a ping or two that fail, which the Redis client logs
	srv.cmd.Process.Signal(syscall.SIGTERM)
	if err := srv.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, srv.stderr)
	}
	var fellBack, redisLines int
	for line := range strings.Lines(srv.stderr.String()) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a line that is not JSON: %q", line)
		}
		switch {
		case m["level"] == "ERROR" && strings.HasPrefix(m["msg"].(string), "rate limit store failed"):
			fellBack++
		case m["component"] == "redis":
			redisLines++
		}
	}
	if fellBack != 1 {
		t.Fatalf("the fallback was logged %d times:\n%s", fellBack, srv.stderr)
	}
	t.Logf("%d lines of the Redis client", redisLines)
}
