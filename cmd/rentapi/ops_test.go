package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// A realistic session on the real binary, logging at debug: keys valid,
// invalid and in the query string, a webhook endpoint and its rotated
// secret with a receiver that fails, a provider's badly signed callback,
// a malformed write. Every line the process writes on stderr is JSON, River's
// included; none holds a key, a webhook secret, the provider's secret or an
// Authorization value; the failing receiver is an info line, not a River
// warning; and the operator's listener serves the metrics the public one
// does not.
func TestLogsKeepSecrets(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dbs := map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "ops.db")}
	if os.Getenv(storetest.PostgresEnv) != "" {
		dbs["postgres"] = storetest.Postgres(t).DSN
	}
	for name, dsn := range dbs {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			dir := t.TempDir()
			providerSecret := "provsecret_" + rental.NewID("x")
			if err := os.WriteFile(filepath.Join(dir, "providers"), []byte("kbank="+providerSecret+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(dir, "secret"),
				"RENTAPI_PAYMENT_PROVIDERS=" + filepath.Join(dir, "providers"), "RENTAPI_LOG_LEVEL=debug"}
			if url := os.Getenv("RENTAPI_TEST_REDIS"); url != "" {
				env = append(env, "RENTAPI_REDIS="+url)
			}
			var hooks atomic.Int32
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hooks.Add(1)
				w.WriteHeader(http.StatusInternalServerError)
			}))
			defer recv.Close()
			srv := startServer(t, bin, env, "--webhook-allow-loopback", "--metrics-addr", "127.0.0.1:0", "--pprof", "on")
			if srv.key == "" || srv.metrics == "" {
				t.Fatalf("key %q, metrics %q", srv.key, srv.metrics)
			}
			// The profiler is on the operator's listener, never the public one.
			for _, c := range []struct {
				url  string
				want int
			}{{strings.TrimSuffix(srv.metrics, "/metrics") + "/debug/pprof/", http.StatusOK}, {srv.base + "/debug/pprof/", http.StatusNotFound}} {
				resp, err := http.Get(c.url)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != c.want {
					t.Fatalf("GET %s: %d, want %d", c.url, resp.StatusCode, c.want)
				}
			}
			made := strings.TrimSpace(admin(t, bin, env, "create-key", "--mode", "test"))
			unknown := rental.KeyPrefixLive + strings.Repeat("Q", 40)
			basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("landlord:hunter2-"+rental.NewID("x")))

			send := func(method, path, auth, body string, headers ...string) (int, map[string]any) {
				t.Helper()
				r, _ := http.NewRequest(method, srv.base+path, strings.NewReader(body))
				if auth != "" {
					r.Header.Set("Authorization", auth)
				}
				if body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				for i := 0; i+1 < len(headers); i += 2 {
					r.Header.Set(headers[i], headers[i+1])
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
			expect := func(what string, got, want int) {
				t.Helper()
				if got != want {
					t.Fatalf("%s: %d, want %d", what, got, want)
				}
			}
			status, _ := send("GET", "/v1/account", "Bearer "+srv.key, "")
			expect("printed key", status, 200)
			status, _ = send("GET", "/v1/account", "Bearer "+made, "")
			expect("created key", status, 200)
			status, _ = send("GET", "/v1/account", "Bearer "+unknown, "")
			expect("unknown key", status, 401)
			status, _ = send("GET", "/v1/account", basic, "")
			expect("basic auth", status, 401)
			status, _ = send("GET", "/v1/account?api_key="+made, "", "")
			expect("key in the query", status, 400)
			status, _ = send("GET", "/v1/properties/"+made, "Bearer "+made, "")
			expect("key in the path", status, 404)
			status, ep := send("POST", "/v1/webhook-endpoints", "Bearer "+made,
				`{"url":"`+recv.URL+`/hook","enabled_events":["*"]}`, "Idempotency-Key", "ops-endpoint")
			expect("create endpoint", status, 201)
			endpoint := ep["data"].(map[string]any)
			status, rot := send("POST", "/v1/webhook-endpoints/"+endpoint["id"].(string)+"/rotate-secret", "Bearer "+made, "")
			expect("rotate secret", status, 200)
			status, _ = send("POST", "/v1/webhook-endpoints/"+endpoint["id"].(string)+"/test", "Bearer "+made, "")
			expect("test event", status, 202)
			status, _ = send("POST", "/v1/properties", "Bearer "+made, `{"name":`)
			expect("malformed write", status, 400)
			status, _ = send("POST", "/provider/v1/confirmations/kbank", "", `{"transaction_id":"T1"}`,
				"X-Provider-Timestamp", "1795143600", "X-Provider-Signature", "sha256=00")
			expect("unsigned callback", status, 401)
			for deadline := time.Now().Add(30 * time.Second); hooks.Load() == 0; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the receiver was never called")
				}
			}

			// The operator's listener has the metrics; the public one has not.
			status, _ = send("GET", "/metrics", "", "")
			expect("public /metrics", status, 404)
			// The failed attempt is counted, then River takes the job back as retryable.
			scrape := func() string {
				t.Helper()
				resp, err := http.Get(srv.metrics)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return string(b)
			}
			metrics := scrape()
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(metrics, `rentapi_job_queue_depth{kind="webhook_delivery",state="retryable"} 1`); metrics = scrape() {
				if time.Now().After(deadline) {
					t.Fatalf("the failed delivery is not retryable:\n%s", metrics)
				}
				time.Sleep(50 * time.Millisecond)
			}
			for _, series := range []string{
				`rentapi_api_requests_total{mode="test",route="GET /v1/account",status="200"} 2`,
				`rentapi_api_requests_total{mode="none",route="GET /v1/account",status="401"} 2`,
				`rentapi_api_requests_total{mode="none",route="POST /provider/v1/confirmations/{provider}",status="401"} 1`,
				`rentapi_api_requests_in_flight 0`,
				`rentapi_webhook_attempts_total{result="failure"} 1`,
				`go_sql_in_use_connections{db_name=`,
				`go_goroutines `,
			} {
				if !strings.Contains(metrics, series) {
					t.Errorf("no %s in the metrics:\n%s", series, metrics)
				}
			}

			srv.cmd.Process.Signal(syscall.SIGTERM)
			if err := srv.cmd.Wait(); err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.stderr)
			}
			logs := srv.stderr.String()
			seen := map[string]bool{}
			for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil || rec["level"] == nil || rec["msg"] == nil {
					t.Errorf("not a JSON log line: %q", line)
					continue
				}
				msg, _ := rec["msg"].(string)
				switch {
				case rec["component"] == "river":
					seen["river"] = true
				case msg == "request" && rec["code"] != nil:
					seen[rec["code"].(string)] = true
				case msg == "webhook attempt" && rec["level"] == "INFO" && rec["status"] == 500.0 && rec["endpoint_id"] == endpoint["id"]:
					seen["attempt"] = true
				}
				if strings.Contains(msg, "Job errored; retrying") {
					t.Errorf("River warns of an expected failure: %s", line)
				}
			}
			for _, what := range []string{"river", "attempt", "invalid_api_key", "api_key_in_query", "invalid_json", "invalid_signature", "resource_not_found"} {
				if !seen[what] {
					t.Errorf("no %s line in the log:\n%s", what, logs)
				}
			}
			for what, secret := range map[string]string{
				"printed key": srv.key, "created key": made, "unknown key": unknown, "Authorization value": basic,
				"endpoint secret": endpoint["secret"].(string), "rotated secret": rot["data"].(map[string]any)["secret"].(string),
				"provider secret": providerSecret,
			} {
				if secret == "" || strings.Contains(logs, secret) {
					t.Errorf("the log holds the %s %q", what, secret)
				}
			}
			for _, prefix := range []string{rental.KeyPrefixTest, rental.KeyPrefixLive, rental.SecretPrefix, "Bearer "} {
				if strings.Contains(logs, prefix) {
					t.Errorf("the log holds %q", prefix)
				}
			}
		})
	}
}

// --log-level takes one of four levels.
func TestLogLevelFlag(t *testing.T) {
	t.Parallel()
	getenv := func(string) string { return "" }
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"serve", "--log-level", "loud"}, getenv, nil, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "debug, info, warn or error") {
		t.Fatalf("--log-level loud: %v", err)
	}
}
