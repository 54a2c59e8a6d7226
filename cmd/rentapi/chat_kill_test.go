package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Chat sends survive a crash: the real binary is killed (SIGKILL) with 200
// messages queued and LINE holding every push; after a restart every
// notification ends sent, and LINE accepted exactly 200 distinct messages
// (every push of one notification carries its one retry key; LINE answers
// a repeat with 409, which counts as sent).
func TestChatSurvivesAKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the binary twice and waits for 200 sends")
	}
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			dsn := freshDSN(t, engine)
			var mu sync.Mutex
			accepted := map[string]int{} // retry key → pushes LINE took
			pushes := 0
			hold := make(chan struct{})
			line := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/v2/bot/message/reply" {
					io.WriteString(w, `{"sentMessages":[{"id":"1","quoteToken":"q"}]}`)
					return
				}
				select {
				case <-hold:
				case <-r.Context().Done():
					return
				}
				key := r.Header.Get("X-Line-Retry-Key")
				mu.Lock()
				defer mu.Unlock()
				pushes++
				if accepted[key] > 0 {
					w.WriteHeader(http.StatusConflict)
					io.WriteString(w, `{"message":"The retry key is already accepted"}`)
					return
				}
				accepted[key]++
				io.WriteString(w, `{"sentMessages":[{"id":"1","quoteToken":"q"}]}`)
			}))
			defer line.Close()

			const channelSecret = "line-channel-secret-for-the-kill-test"
			env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret"),
				"RENTAPI_LINE_CHANNEL_SECRET=" + channelSecret, "RENTAPI_LINE_CHANNEL_TOKEN=line-token", "RENTAPI_LINE_API_URL=" + line.URL}
			// The restarted process rescues the sends the killed one was
			// running when it becomes River's leader, once the killed
			// leader's lease ends (9 to 15 s after the kill). With a
			// horizon of 8 s (sends time out after 4 s), every one of them
			// is stuck by then: the first rescue takes them all, rather
			// than the next one River makes 30 s later.
			args := []string{"--rate-limits=off", "--job-rescue-after", "8s"}
			srv := startServer(t, bin, env, args...)
			ll := strings.TrimSpace(admin(t, bin, env, "create-landlord", "--name", "Khun Somchai", "--plan", "standard"))
			acct := strings.TrimSpace(admin(t, bin, env, "link-account", "--landlord", ll))
			key := strings.TrimSpace(admin(t, bin, env, "create-key", "--mode", "live", "--account", acct))
			status, p := srv.call(t, key, "POST", "/v1/properties", `{"name":"Baan Suk","electricity_rate":800,"water_rate":1800}`)
			if status != 201 {
				t.Fatalf("property: %d %v", status, p)
			}
			status, room := srv.call(t, key, "POST", "/v1/properties/"+p["data"].(map[string]any)["id"].(string)+"/rooms", `{"number":"101","monthly_rent":350000}`)
			if status != 201 {
				t.Fatalf("room: %d %v", status, room)
			}
			status, tenant := srv.call(t, key, "POST", "/v1/rooms/"+room["data"].(map[string]any)["id"].(string)+"/tenant", `{"name":"Malee","phone":"0812345678"}`)
			if status != 201 {
				t.Fatalf("tenant: %d %v", status, tenant)
			}
			tenantID := tenant["data"].(map[string]any)["id"].(string)
			code, _ := tenant["data"].(map[string]any)["chat_registration_code"].(string)
			// The tenant sends the code to the service's LINE account.
			body, _ := json.Marshal(map[string]any{"destination": "U" + strings.Repeat("f", 32), "events": []any{map[string]any{
				"type": "message", "mode": "active", "timestamp": 1700000000000, "webhookEventId": "01KILLTESTEVENT",
				"deliveryContext": map[string]any{"isRedelivery": false}, "replyToken": "rt-1",
				"source":  map[string]any{"type": "user", "userId": "U" + strings.Repeat("a", 32)},
				"message": map[string]any{"type": "text", "id": "m1", "text": code, "quoteToken": "q"}}}})
			mac := hmac.New(sha256.New, []byte(channelSecret))
			mac.Write(body)
			r, _ := http.NewRequest("POST", srv.base+"/line/v1/webhook", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("X-Line-Signature", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
			resp, err := http.DefaultClient.Do(r)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("registration: %v %v", resp, err)
			}
			resp.Body.Close()

			for i := range 200 {
				r, _ := http.NewRequest("POST", srv.base+"/v1/messages", strings.NewReader(fmt.Sprintf(`{"tenant_id":%q,"text":"message %d"}`, tenantID, i)))
				r.Header.Set("Authorization", "Bearer "+key)
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Idempotency-Key", fmt.Sprintf("kill-%d", i))
				resp, err := http.DefaultClient.Do(r)
				if err != nil || resp.StatusCode != http.StatusAccepted {
					t.Fatalf("message %d: %v %v", i, resp, err)
				}
				resp.Body.Close()
			}
			srv.cmd.Process.Signal(syscall.SIGKILL)
			srv.cmd.Wait()
			close(hold)

			srv = startServer(t, bin, env, args...)
			sent := 0
			for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
				sent = 0
				for path := "/v1/notifications?status=sent&limit=100"; path != ""; {
					status, page := srv.call(t, key, "GET", path, "")
					if status != 200 {
						t.Fatalf("notifications: %d %v", status, page)
					}
					sent += len(page["data"].([]any))
					path = ""
					if pg := page["pagination"].(map[string]any); pg["has_more"] == true {
						path = "/v1/notifications?status=sent&limit=100&cursor=" + pg["next_cursor"].(string)
					}
				}
				if sent == 200 {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if sent != 200 || len(accepted) != 200 {
				t.Fatalf("%d of 200 notifications sent; LINE accepted %d distinct messages in %d pushes\n%s", sent, len(accepted), pushes, srv.stderr)
			}
			for k, n := range accepted {
				if n != 1 {
					t.Fatalf("retry key %s accepted %d times", k, n)
				}
			}
			t.Logf("%d pushes for 200 messages (repeats answered 409)", pushes)
		})
	}
}
