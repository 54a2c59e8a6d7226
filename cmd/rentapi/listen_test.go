package main

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// forwarded is one delivery `rentapi listen` made to the local receiver.
type forwarded struct {
	id, typ  string
	verified bool
	at       time.Time
}

// `rentapi listen` on the real binary: every event of a reading, a bill and
// its payment reaches the local receiver as a delivery signed with the
// session's printed secret, in the order of the events; the server is
// killed and started again on the same address, listen reconnects, and the
// receiver has every event exactly once.
func TestListenForwardsTheStream(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dsn := freshDSN(t, engine)
			var mu sync.Mutex
			var got []forwarded
			secret := make(chan string, 1)
			var key string
			recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var ev struct{ ID, Type string }
				json.Unmarshal(body, &ev)
				mu.Lock()
				defer mu.Unlock()
				if key == "" {
					key = <-secret
				}
				ts := r.Header.Get("X-SERVICE-Timestamp")
				mac := hmac.New(sha256.New, []byte(key))
				fmt.Fprintf(mac, "%s.%s", ts, body)
				sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
				got = append(got, forwarded{id: ev.ID, typ: ev.Type, at: time.Now(),
					verified: r.Header.Get("X-SERVICE-Signature") == sig && r.Header.Get("X-SERVICE-Event-ID") == ev.ID &&
						r.Header.Get("X-SERVICE-Event") == ev.Type && r.Header.Get("Content-Type") == "application/json; charset=utf-8"})
			}))
			defer recv.Close()

			addr := freeAddr(t)
			env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret")}
			args := []string{"--addr", addr, "--rate-limits=false"}
			srv := startServer(t, bin, env, args...)
			apiKey := srv.key

			cmd := exec.Command(bin, "listen", "--api-key", apiKey, "--forward-to", recv.URL+"/hook", "--api-base", srv.base)
			cmd.Env = os.Environ()
			out, _ := cmd.StdoutPipe()
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			ready := make(chan struct{}, 10)
			printed := regexp.MustCompile(`^Webhook signing secret for this session: (whsec_[A-Za-z0-9]{32})$`)
			var lines syncBuffer
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines.Write([]byte(sc.Text() + "\n"))
					if m := printed.FindStringSubmatch(sc.Text()); m != nil {
						secret <- m[1]
					}
					if strings.Contains(sc.Text(), "ready: streaming") {
						ready <- struct{}{}
					}
				}
			}()
			waitReady := func() {
				t.Helper()
				select {
				case <-ready:
				case <-time.After(30 * time.Second):
					t.Fatalf("listen did not connect:\n%s", lines.String())
				}
			}
			waitReady()

			call := func(method, path, body string) map[string]any {
				t.Helper()
				status, res := srv.call(t, apiKey, method, path, body)
				if status >= 300 {
					t.Fatalf("%s %s: %d %v", method, path, status, res)
				}
				return res["data"].(map[string]any)
			}
			month := func(n int) {
				t.Helper()
				prop := call("POST", "/v1/properties", fmt.Sprintf(`{"name":"Listen %d","electricity_rate":800,"water_rate":1800}`, n))["id"].(string)
				room := call("POST", "/v1/properties/"+prop+"/rooms", `{"number":"101","monthly_rent":350000}`)["id"].(string)
				call("POST", "/v1/meter-readings", `{"room_id":"`+room+`","month":"2026-10","electricity":{"current":1200},"water":{"current":100}}`)
				bill := call("POST", "/v1/bills", `{"room_id":"`+room+`","month":"2026-10"}`)["id"].(string)
				call("POST", "/v1/test-helpers/payments", `{"bill_id":"`+bill+`","outcome":"paid"}`)
			}
			// every is the sandbox's events after the first of ours, oldest first.
			var first string
			every := func() []string {
				t.Helper()
				var ids []string
				for path := "/v1/events?order=asc&limit=100"; path != ""; {
					status, page := srv.call(t, apiKey, "GET", path, "")
					if status != 200 {
						t.Fatalf("events: %d %v", status, page)
					}
					for _, ev := range page["data"].([]any) {
						ids = append(ids, ev.(map[string]any)["id"].(string))
					}
					path = ""
					if pg := page["pagination"].(map[string]any); pg["has_more"] == true {
						path = "/v1/events?order=asc&limit=100&cursor=" + pg["next_cursor"].(string)
					}
				}
				for i, id := range ids {
					if id == first {
						return ids[i:]
					}
				}
				t.Fatalf("the first event %s is not listed", first)
				return nil
			}
			// received waits until the receiver has as many deliveries as
			// want, and compares them with it.
			received := func(want []string) {
				t.Helper()
				for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					mu.Lock()
					n := len(got)
					mu.Unlock()
					if n >= len(want) {
						break
					}
				}
				time.Sleep(300 * time.Millisecond) // a repeat would come now
				mu.Lock()
				defer mu.Unlock()
				ids := make([]string, len(got))
				for i, f := range got {
					ids[i] = f.id
					if !f.verified {
						t.Errorf("delivery %d (%s %s) does not verify with the printed secret", i, f.typ, f.id)
					}
				}
				if strings.Join(ids, " ") != strings.Join(want, " ") {
					t.Fatalf("the receiver got %d events %v,\nthe service has %d %v\nlisten said:\n%s", len(ids), ids, len(want), want, lines.String())
				}
			}

			month(1)
			made := time.Now()
			status, page := srv.call(t, apiKey, "GET", "/v1/events?limit=100", "")
			if status != 200 {
				t.Fatalf("events: %d", status)
			}
			for _, ev := range page["data"].([]any) { // newest first: the last one of the list is ours
				if ev.(map[string]any)["type"] == "property.created" {
					first = ev.(map[string]any)["id"].(string)
					break
				}
			}
			want := every()
			received(want)
			var types []string
			for _, f := range got {
				types = append(types, f.typ)
			}
			for _, typ := range []string{"property.created", "meter.reading.created", "bill.created", "payment.paid", "bill.updated"} {
				if !strings.Contains(strings.Join(types, " "), typ) {
					t.Fatalf("no %s among %v", typ, types)
				}
			}
			mu.Lock()
			t.Logf("%d events forwarded; the last one %v after the request that made it returned", len(got), got[len(got)-1].at.Sub(made))
			mu.Unlock()

			// Killed and started again on the same address: listen reconnects
			// after the last event it forwarded, and nothing repeats.
			srv.cmd.Process.Signal(syscall.SIGKILL)
			srv.cmd.Wait()
			srv = startServer(t, bin, env, args...)
			waitReady()
			month(2)
			received(every())
			if !strings.Contains(lines.String(), "ready: streaming the events after "+want[len(want)-1]) {
				t.Fatalf("listen did not resume after the last event it forwarded:\n%s", lines.String())
			}
			// A server told to stop ends its streams rather than wait on them.
			srv.cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- srv.cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("the server stopped with %v: %s", err, srv.stderr)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server's shutdown waits on the open stream")
			}
		})
	}
}

// freeAddr is a loopback address with a port free now, for a server that
// must come back on the same one.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}
