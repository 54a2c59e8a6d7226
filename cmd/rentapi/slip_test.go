package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/slip/sliptest"
	"rentapi/internal/webhook"
)

// liveLINE is LINE for the live month: it takes pushes and replies and
// serves the pictures users sent through its content API, in LINE's wire
// format.
type liveLINE struct {
	*httptest.Server
	mu      sync.Mutex
	pushes  []string
	replies []string
	content map[string][]byte
}

func newLiveLINE(t *testing.T) *liveLINE {
	l := &liveLINE{content: map[string][]byte{}}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		l.mu.Lock()
		defer l.mu.Unlock()
		if id, ok := strings.CutPrefix(r.URL.Path, "/v2/bot/message/"); ok && r.Method == http.MethodGet {
			b, found := l.content[strings.TrimSuffix(id, "/content")]
			if !found || r.Header.Get("Authorization") != "Bearer line-token" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"message":"Not found"}`)
				return
			}
			w.Header().Set("Content-Type", "image/jpeg")
			w.Write(b)
			return
		}
		switch r.URL.Path {
		case "/v2/bot/message/reply":
			l.replies = append(l.replies, string(body))
		case "/v2/bot/message/push":
			l.pushes = append(l.pushes, string(body))
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"sentMessages":[{"id":"1","quoteToken":"q"}]}`)
	}))
	t.Cleanup(l.Close)
	return l
}

// said reports whether a push (or reply) to LINE carried text.
func (l *liveLINE) said(pushes bool, text string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.replies
	if pushes {
		list = l.pushes
	}
	for _, m := range list {
		if strings.Contains(m, text) {
			return true
		}
	}
	return false
}

// hookReceiver is a landlord's webhook endpoint: it keeps every delivery.
type hookReceiver struct {
	*httptest.Server
	mu         sync.Mutex
	deliveries []hookDelivery
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.deliveries = append(h.deliveries, hookDelivery{header: r.Header.Clone(), body: body})
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// types counts the distinct events of each type received, and whether each
// delivery was signed with secret.
func (h *hookReceiver) types(t *testing.T, secret string) map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	seen, out := map[string]bool{}, map[string]int{}
	for _, d := range h.deliveries {
		ts, _ := strconv.ParseInt(d.header.Get("X-SERVICE-Timestamp"), 10, 64)
		if d.header.Get("X-SERVICE-Signature") != "sha256="+webhook.Sign(secret, ts, d.body) {
			t.Errorf("delivery not signed with the endpoint's secret: %s", d.header.Get("X-SERVICE-Signature"))
		}
		var ev struct{ ID, Type string }
		json.Unmarshal(d.body, &ev)
		if !seen[ev.ID] {
			seen[ev.ID] = true
			out[ev.Type]++
		}
	}
	return out
}

// The live month end to end on the real binary with a slip-verification
// provider (the fake speaking EasySlip's format) and LINE (a fake speaking
// its format): a reading, its bill, the payment link; the tenant opens the
// page and uploads the slip's picture through its form as a browser does;
// the provider verifies it: slip.verified, payment.paid exactly once, the
// bill paid with its receipt number, the receipt's page, the receipt on
// LINE; the landlord's webhook endpoint receives every event, each signed.
// Then a registered tenant sends a slip to the Official Account (verified,
// receipt pushed), and a LINE user who is no tenant gets a polite reply
// and nothing is filed.
func TestLiveMonthWithSlips(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts the binary and waits for verification jobs")
	}
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dsn := freshDSN(t, engine)
			line, prov, hooks := newLiveLINE(t), sliptest.New(t), newHookReceiver(t)
			const channelSecret = "line-channel-secret-for-the-live-month"
			env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret"),
				"RENTAPI_LINE_CHANNEL_SECRET=" + channelSecret, "RENTAPI_LINE_CHANNEL_TOKEN=line-token",
				"RENTAPI_LINE_API_URL=" + line.URL, "RENTAPI_LINE_DATA_URL=" + line.URL,
				"RENTAPI_SLIP_PROVIDER_URL=" + prov.URL, "RENTAPI_SLIP_PROVIDER_KEY=" + sliptest.Key, "RENTAPI_WEBHOOK_ALLOW_LOOPBACK=on"}
			srv := startServer(t, bin, env)
			ll := strings.TrimSpace(admin(t, bin, env, "create-landlord", "--name", "Khun Somchai", "--plan", "standard"))
			admin(t, bin, env, "set-promptpay", "--landlord", ll, "--kind", "mobile", "--id", "081-234-5678", "--name", "สมชาย ใจดี")
			acct := strings.TrimSpace(admin(t, bin, env, "link-account", "--landlord", ll))
			key := strings.TrimSpace(admin(t, bin, env, "create-key", "--mode", "live", "--account", acct))
			post := func(path, body string) map[string]any {
				t.Helper()
				status, res := srv.call(t, key, "POST", path, body)
				if status != 200 && status != 201 && status != 202 {
					t.Fatalf("POST %s: %d %v", path, status, res)
				}
				return res["data"].(map[string]any)
			}
			get := func(path string) map[string]any {
				t.Helper()
				status, res := srv.call(t, key, "GET", path, "")
				if status != 200 {
					t.Fatalf("GET %s: %d %v", path, status, res)
				}
				return res
			}
			endpoint := post("/v1/webhook-endpoints", fmt.Sprintf(`{"url":%q,"enabled_events":["*"]}`, hooks.URL))
			secret := endpoint["secret"].(string)

			prop := post("/v1/properties", `{"name":"Baan Suk","address":"99 Soi Sukhumvit 71, Bangkok","electricity_rate":800,"water_rate":1800,"due_day":5}`)
			month := time.Now().In(rental.Bangkok).Format("2006-01")
			// A room, its tenant registered on LINE as the tenant does it, its bill of the month.
			lineWebhook := func(events ...map[string]any) {
				t.Helper()
				body, _ := json.Marshal(map[string]any{"destination": "U" + strings.Repeat("f", 32), "events": events})
				mac := hmac.New(sha256.New, []byte(channelSecret))
				mac.Write(body)
				r, _ := http.NewRequest("POST", srv.base+"/line/v1/webhook", bytes.NewReader(body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("X-Line-Signature", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
				resp, err := http.DefaultClient.Do(r)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("LINE webhook: %v %v", resp, err)
				}
				resp.Body.Close()
			}
			lineEvent := func(user string, message map[string]any) map[string]any {
				id := rental.NewID("ev")
				return map[string]any{"type": "message", "mode": "active", "timestamp": 1700000000000, "webhookEventId": id,
					"deliveryContext": map[string]any{"isRedelivery": false}, "replyToken": "rt-" + id,
					"source": map[string]any{"type": "user", "userId": user}, "message": message}
			}
			roomBill := func(number, user string) map[string]any {
				t.Helper()
				room := post("/v1/properties/"+prop["id"].(string)+"/rooms", `{"number":"`+number+`","monthly_rent":350000}`)
				tenant := post("/v1/rooms/"+room["id"].(string)+"/tenant", `{"name":"Malee","phone":"0812345678"}`)
				lineWebhook(lineEvent(user, map[string]any{"type": "text", "id": rental.NewID("m"), "quoteToken": "q", "text": tenant["chat_registration_code"]}))
				post("/v1/meter-readings", `{"room_id":"`+room["id"].(string)+`","month":"`+month+`","electricity":{"previous":1000,"current":1100},"water":{"previous":50,"current":55}}`)
				return post("/v1/bills", `{"room_id":"`+room["id"].(string)+`","month":"`+month+`"}`)
			}
			malee, somsri := "U"+strings.Repeat("a", 32), "U"+strings.Repeat("b", 32)
			bill := roomBill("101", malee)
			if bill["status"] != rental.BillIssued {
				t.Fatalf("bill %v", bill["status"])
			}
			total := bill["total"].(float64)
			prov.Set(sliptest.Settings{Mode: sliptest.Verified, Receiver: "xxx-xxx-5678", Amount: total / 100})
			link := post("/v1/bills/"+bill["id"].(string)+"/payment-link", "")
			u, _ := url.Parse(link["url"].(string))

			// The tenant opens the page and sends the slip through its form.
			page := fetch(t, srv.base+u.Path)
			action := regexp.MustCompile(`<form method="post" action="([^"]+)" enctype="multipart/form-data">`).FindStringSubmatch(page)
			if action == nil || !strings.Contains(page, `id="qr"`) {
				t.Fatalf("no QR and slip form on the payment page:\n%s", page)
			}
			var form bytes.Buffer
			mw := multipart.NewWriter(&form)
			fw, _ := mw.CreateFormFile("slip", "IMG_2041.JPG")
			fw.Write(append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte("slip"), 5000)...))
			mw.Close()
			r, _ := http.NewRequest("POST", srv.base+action[1], &form)
			r.Header.Set("Content-Type", mw.FormDataContentType())
			r.Header.Set("Origin", srv.base)
			r.Header.Set("Sec-Fetch-Site", "same-origin")
			resp, err := http.DefaultClient.Do(r) // follows the 303 back to the page
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || resp.Request.URL.Path != u.Path || !strings.Contains(string(b), `id="slip-status"`) {
				t.Fatalf("after the upload: %d at %s\n%s", resp.StatusCode, resp.Request.URL, b)
			}

			paid := waitPaid(t, get, bill["id"].(string))
			slips := get("/v1/slips?bill_id=" + bill["id"].(string))["data"].([]any)
			if len(slips) != 1 || slips[0].(map[string]any)["status"] != rental.SlipVerified || slips[0].(map[string]any)["source"] != rental.SlipFromPage {
				t.Fatalf("slips %v", slips)
			}
			receipt := paid["receipt"].(map[string]any)
			if !regexp.MustCompile(`^R\d{4}-000001$`).MatchString(receipt["number"].(string)) {
				t.Fatalf("receipt %v", receipt)
			}
			ru, _ := url.Parse(receipt["url"].(string))
			if page := fetch(t, srv.base+ru.Path); !strings.Contains(page, receipt["number"].(string)) {
				t.Fatalf("receipt page:\n%s", page)
			}
			if page := fetch(t, srv.base+u.Path); !strings.Contains(page, "Slip verified") || !strings.Contains(page, receipt["url"].(string)) {
				t.Fatalf("the payment page after verification:\n%s", page)
			}
			waitFor(t, "the receipt on LINE", func() bool {
				return line.said(true, receipt["number"].(string)) && line.said(true, receipt["url"].(string))
			})
			if n := len(get("/v1/events?type=payment.paid")["data"].([]any)); n != 1 {
				t.Fatalf("payment.paid %d times", n)
			}
			waitFor(t, "the events at the webhook endpoint", func() bool {
				got := hooks.types(t, secret)
				return got["slip.verified"] == 1 && got["payment.paid"] == 1 && got["bill.updated"] >= 1
			})

			// A slip over LINE from a registered tenant: fetched, filed, verified, answered.
			bill2 := roomBill("102", somsri)
			prov.Set(sliptest.Settings{Mode: sliptest.Verified, Receiver: "xxx-xxx-5678", Amount: bill2["total"].(float64) / 100})
			line.mu.Lock()
			line.content["m-somsri"] = append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte("somsri"), 4000)...)
			line.mu.Unlock()
			lineWebhook(lineEvent(somsri, map[string]any{"type": "image", "id": "m-somsri", "quoteToken": "q", "contentProvider": map[string]any{"type": "line"}}))
			if !line.said(false, "Slip received") {
				t.Fatalf("no reply to the LINE slip: %v", line.replies)
			}
			paid2 := waitPaid(t, get, bill2["id"].(string))
			number2 := paid2["receipt"].(map[string]any)["number"].(string)
			if !strings.HasSuffix(number2, "-000002") {
				t.Fatalf("second receipt %s", number2)
			}
			waitFor(t, "the LINE slip's receipt on LINE", func() bool { return line.said(true, number2) })
			if s := get("/v1/slips?bill_id=" + bill2["id"].(string))["data"].([]any); len(s) != 1 || s[0].(map[string]any)["source"] != rental.SlipFromLINE {
				t.Fatalf("LINE slips %v", s)
			}

			// From a LINE user who is no tenant: a polite reply, nothing filed.
			lineWebhook(lineEvent("U"+strings.Repeat("c", 32), map[string]any{"type": "image", "id": "m-somsri", "quoteToken": "q", "contentProvider": map[string]any{"type": "line"}}))
			if !line.said(false, "not registered as a tenant") {
				t.Fatalf("no polite reply to a stranger: %v", line.replies)
			}
			if s := get("/v1/slips?limit=100")["data"].([]any); len(s) != 2 {
				t.Fatalf("%d slips after a stranger's picture", len(s))
			}
			if got := hooks.types(t, secret); got["slip.verified"] != 2 || got["payment.paid"] != 2 {
				waitFor(t, "the second slip's events", func() bool {
					got := hooks.types(t, secret)
					return got["slip.verified"] == 2 && got["payment.paid"] == 2
				})
			}
			// The pictures never reach the log, raw or in base64.
			if logs := srv.stderr.String(); strings.Contains(logs, "slipslipslip") || strings.Contains(logs, "somsrisomsri") ||
				strings.Contains(logs, base64.StdEncoding.EncodeToString([]byte("slipslipslip"))[:12]) {
				t.Errorf("a slip's picture in the log")
			}
		})
	}
}

// waitPaid waits for the verification job to pay the bill and returns it.
func waitPaid(t *testing.T, get func(string) map[string]any, id string) map[string]any {
	t.Helper()
	var b map[string]any
	waitFor(t, "bill "+id+" paid", func() bool {
		b = get("/v1/bills/" + id)["data"].(map[string]any)
		return b["status"] == rental.BillPaid && b["receipt"] != nil
	})
	return b
}

// waitFor polls cond for up to 30 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("waited 30 s for %s", what)
}

// fetch GETs a page and fails the test unless it is 200.
func fetch(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", u, resp.StatusCode, b)
	}
	return string(b)
}
