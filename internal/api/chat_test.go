package api_test

import (
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/chat"
	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/webhook"
)

// fakeLINE speaks the LINE Messaging API's push as LINE does: 200 with
// sentMessages, 409 for a retry key it already accepted, and whatever
// status it is told to answer in turn.
type fakeLINE struct {
	t   *testing.T
	url string

	mu       sync.Mutex
	answers  []int // statuses to answer in turn; 200 once used up
	always   int   // when set, the status of every push
	accepted map[string]json.RawMessage
	keys     []string // the retry key of every push, in order
	replies  []string // the body of every reply
	arrived  chan struct{}
	// content is what LINE's content API serves by message ID, and
	// fetched counts its requests.
	content map[string][]byte
	fetched int
}

// setContent makes the fake's content API serve b as the message's.
func (f *fakeLINE) setContent(messageID string, b []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.content[messageID] = b
}

func newFakeLINE(t *testing.T) *fakeLINE {
	f := &fakeLINE{t: t, accepted: map[string]json.RawMessage{}, arrived: make(chan struct{}, 100000), content: map[string][]byte{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

func (f *fakeLINE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if id, ok := strings.CutPrefix(r.URL.Path, "/v2/bot/message/"); ok && r.Method == http.MethodGet && strings.HasSuffix(id, "/content") {
		// LINE's content API: the bytes as sent, or 404 with LINE's error body.
		f.mu.Lock()
		f.fetched++
		b, found := f.content[strings.TrimSuffix(id, "/content")]
		f.mu.Unlock()
		if !found || r.Header.Get("Authorization") != "Bearer line-token" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"message":"Not found"}`)
			return
		}
		w.Header().Set("Content-Type", http.DetectContentType(b))
		w.Write(b)
		return
	}
	if r.Method == http.MethodPost && r.URL.Path == "/v2/bot/message/reply" {
		f.mu.Lock()
		f.replies = append(f.replies, string(body))
		f.mu.Unlock()
		io.WriteString(w, `{"sentMessages":[{"id":"1","quoteToken":"q"}]}`)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v2/bot/message/push" || r.Header.Get("Authorization") != "Bearer line-token" {
		f.t.Errorf("fake LINE: %s %s %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}
	var push struct {
		To       string            `json:"to"`
		Messages []json.RawMessage `json:"messages"`
	}
	key := r.Header.Get("X-Line-Retry-Key")
	if err := json.Unmarshal(body, &push); err != nil || push.To == "" || len(push.Messages) == 0 || len(key) != 36 {
		f.t.Errorf("fake LINE: bad push %q %s", key, body)
	}
	f.mu.Lock()
	defer func() { f.mu.Unlock(); f.arrived <- struct{}{} }()
	f.keys = append(f.keys, key)
	status := http.StatusOK
	switch {
	case f.always != 0:
		status = f.always
	case len(f.answers) > 0:
		status, f.answers = f.answers[0], f.answers[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	if _, done := f.accepted[key]; done && status == http.StatusOK {
		w.WriteHeader(http.StatusConflict)
		io.WriteString(w, `{"message":"The retry key is already accepted"}`)
		return
	}
	w.WriteHeader(status)
	if status != http.StatusOK {
		io.WriteString(w, `{"message":"status `+strconv.Itoa(status)+`"}`)
		return
	}
	f.accepted[key] = push.Messages[0]
	io.WriteString(w, `{"sentMessages":[{"id":"`+strconv.Itoa(len(f.accepted))+`","quoteToken":"q"}]}`)
}

// pushes is the number of pushes so far and the messages accepted.
func (f *fakeLINE) pushes() (int, map[string]json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]json.RawMessage{}
	for k, v := range f.accepted {
		out[k] = v
	}
	return len(f.keys), out
}

// chatHarness is a webhook harness whose jobs push to the fake LINE.
func chatHarness(t *testing.T, e storetest.Engine, line *fakeLINE, opts ...func(*api.Config)) *harness {
	client, err := chat.NewClient("line-token", line.url, line.url)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, e, append([]func(*api.Config){func(c *api.Config) {
		c.Guard = webhook.Guard{AllowLoopback: true}
		c.ChatLive, c.LINE, c.LineChannelSecret = true, client, lineSecret
	}}, opts...)...)
	h.runJobs(slog.New(slog.DiscardHandler), jobs.Options{LINE: client})
	return h
}

// registerTenant registers the tenant as the tenant would: it sends the
// tenant's code (read from the database, as the landlord would hand it
// over) to the service's LINE webhook, signed as LINE signs it.
func registerTenant(t *testing.T, h *harness, tenantID string) {
	t.Helper()
	var code sql.NullString
	if err := h.e.DB.WritePool().QueryRowContext(t.Context(), `SELECT chat_registration_code FROM tenants WHERE id = $1`, tenantID).Scan(&code); err != nil {
		t.Fatal(err)
	}
	if !code.Valid {
		return // registered already, as sandbox tenants are
	}
	user := "U" + strings.Repeat("0", 32-min(len(tenantID), 32)) + tenantID[:min(len(tenantID), 32)]
	want(t, lineWebhook(h, lineSecret, lineText(rental.NewID("ev"), user, code.String, false)), http.StatusOK)
}

// billTenant is the tenant of the payee's bill.
func billTenant(t *testing.T, h *harness, p payee) string {
	t.Helper()
	res := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill})
	want(t, res, http.StatusOK)
	return res.data()["tenant_id"].(string)
}

// notify sends a notice with a fresh Idempotency-Key.
func notify(h *harness, key, typ, bill string) *result {
	return h.do(req{key: key, method: "POST", path: "/v1/notifications", body: map[string]any{"type": typ, "bill_id": bill},
		headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
}

// waitNotification waits for the send jobs that can run now and reads the
// notification, until it leaves queued.
func waitNotification(t *testing.T, h *harness, key, id string) map[string]any {
	t.Helper()
	for range 100 {
		h.settleChat()
		res := h.do(req{key: key, method: "GET", path: "/v1/notifications/" + id})
		want(t, res, http.StatusOK)
		if d := res.data(); d["status"] != rental.NotificationQueued {
			return d
		}
	}
	t.Fatalf("notification %s still queued", id)
	return nil
}

func TestNotificationMonth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		rc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(h.liveKey(p.app, ""), rc, "notification.sent", "notification.failed")
		tenant := billTenant(t, h, p)

		want(t, notify(h, p.key, "new_bill", p.bill), http.StatusConflict, "tenant_not_reachable")
		registerTenant(t, h, tenant)
		want(t, h.do(req{key: p.key, method: "POST", path: "/v1/notifications", body: map[string]any{"type": "new_bill", "bill_id": p.bill}}),
			http.StatusBadRequest, "parameter_missing")
		want(t, notify(h, p.key, "payment_receipt", p.bill), http.StatusConflict, "invalid_state")

		res := notify(h, p.key, "new_bill", p.bill)
		want(t, res, http.StatusAccepted)
		n := res.data()
		if n["status"] != "queued" || n["tenant_id"] != tenant || n["bill_id"] != p.bill || n["channel"] != "line" {
			t.Fatalf("notification %v", n)
		}
		res = h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill})
		if res.data()["status"] != rental.BillIssued {
			t.Fatalf("the draft bill was not issued: %v", res.data()["status"])
		}
		sent := waitNotification(t, h, p.key, n["id"].(string))
		if sent["status"] != "sent" || sent["sent_at"] == nil || sent["attempts"].(float64) != 1 {
			t.Fatalf("notification %v", sent)
		}
		pushes, accepted := line.pushes()
		if pushes != 1 || len(accepted) != 1 {
			t.Fatalf("%d pushes, %d accepted", pushes, len(accepted))
		}
		var flex string
		for _, m := range accepted {
			flex = string(m)
		}
		link := p.link(t, h)
		if !strings.Contains(flex, `"type":"flex"`) || !strings.Contains(flex, rental.Baht(p.total)) || !strings.Contains(flex, link) {
			t.Fatalf("flex %s lacks the total %s or the link %s", flex, rental.Baht(p.total), link)
		}
		got := rc.waitFor(1)
		if !strings.Contains(string(got[0].body), `"type":"notification.sent"`) {
			t.Fatalf("webhook %s", got[0].body)
		}
		res = h.do(req{key: p.key, method: "GET", path: "/v1/notifications?status=sent&bill_id=" + p.bill})
		want(t, res, http.StatusOK)
		if items := res.json()["data"].([]any); len(items) != 1 {
			t.Fatalf("%d sent notifications", len(items))
		}

		// A message: text, through the same job.
		res = h.do(req{key: p.key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "สวัสดีครับ"},
			headers: []string{"Idempotency-Key: m1"}})
		want(t, res, http.StatusAccepted)
		if d := waitNotification(t, h, p.key, res.data()["id"].(string)); d["status"] != "sent" || d["type"] != "message" {
			t.Fatalf("message %v", d)
		}
	})
}

func TestNotificationRetries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		rc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(h.liveKey(p.app, ""), rc, "notification.sent", "notification.failed")
		tenant := billTenant(t, h, p)
		registerTenant(t, h, tenant)
		message := func(text string) string {
			res := h.do(req{key: p.key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": text},
				headers: []string{"Idempotency-Key: " + text}})
			want(t, res, http.StatusAccepted)
			return res.data()["id"].(string)
		}
		// stepUntil moves the clock past each retry until the notification is done.
		stepUntil := func(id string) map[string]any {
			t.Helper()
			for range 10 {
				h.settleChat()
				res := h.do(req{key: p.key, method: "GET", path: "/v1/notifications/" + id})
				if d := res.data(); d["status"] != "queued" {
					return d
				}
				e.Clock.Advance(31 * time.Minute)
			}
			t.Fatalf("notification %s still queued", id)
			return nil
		}

		// 500, 500, then 200: sent at the third attempt, one message taken.
		line.mu.Lock()
		line.answers = []int{500, 500}
		line.mu.Unlock()
		d := stepUntil(message("flaky"))
		pushes, accepted := line.pushes()
		if d["status"] != "sent" || d["attempts"].(float64) != 3 || pushes != 3 || len(accepted) != 1 {
			t.Fatalf("after 500, 500, 200: %v, %d pushes, %d accepted", d, pushes, len(accepted))
		}
		line.mu.Lock()
		if k := line.keys; k[0] != k[1] || k[1] != k[2] {
			t.Fatalf("retry keys differ: %v", k)
		}
		// 403: failed at once with a reason.
		line.always = http.StatusForbidden
		line.mu.Unlock()
		d = stepUntil(message("blocked"))
		if d["status"] != "failed" || d["attempts"].(float64) != 1 || d["failure_reason"] == nil {
			t.Fatalf("after 403: %v", d)
		}
		// Always 500: failed after the fifth attempt, one event.
		line.mu.Lock()
		line.always = http.StatusInternalServerError
		line.mu.Unlock()
		id := message("down")
		d = stepUntil(id)
		if d["status"] != "failed" || d["attempts"].(float64) != 5 {
			t.Fatalf("after 500s: %v", d)
		}
		if n, err := e.DB.Read().CountEvents(t.Context(), p.acct, "notification.failed"); err != nil || n != 2 {
			t.Fatalf("%d notification.failed events, %v", n, err)
		}
		if n, err := e.DB.Read().CountEvents(t.Context(), p.acct, "notification.sent"); err != nil || n != 1 {
			t.Fatalf("%d notification.sent events, %v", n, err)
		}
	})
}

// settleChat waits until no send job can run before the clock moves.
func (h *harness) settleChat() {
	h.t.Helper()
	h.settleKind(store.SendArgs{}.Kind())
}

func TestSendingLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		other := newPayee(t, h, rental.LandlordStandard)
		tenant, otherTenant := billTenant(t, h, p), billTenant(t, h, other)
		registerTenant(t, h, tenant)
		registerTenant(t, h, otherTenant)
		send := func(key, tenant, idem string) *result {
			return h.do(req{key: key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "hello"},
				headers: []string{"Idempotency-Key: " + idem}})
		}
		for i := range 60 {
			want(t, send(p.key, tenant, "k"+strconv.Itoa(i)), http.StatusAccepted)
		}
		// A replay is not counted, and answers as the first time.
		res := send(p.key, tenant, "k0")
		want(t, res, http.StatusAccepted)
		if res.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %v", res.header)
		}
		res = send(p.key, tenant, "k60")
		want(t, res, http.StatusTooManyRequests, "sending_limit")
		if res.header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
		want(t, send(other.key, otherTenant, "o1"), http.StatusAccepted)
		e.Clock.Advance(time.Minute)
		want(t, send(p.key, tenant, "k61"), http.StatusAccepted)
	})
}

// The sending limit is one count per account for the whole deployment:
// sends spread over two processes (two API servers over one database,
// sharing Redis) are refused at the 61st.
func TestSendingLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	url := os.Getenv(redisEnv)
	if url == "" {
		t.Skip(redisEnv + " is not set")
	}
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		prefix := rental.NewID("t") + ":"
		shared := func(c *api.Config) { c.RedisURL, c.RedisPrefix = url, prefix }
		a := chatHarness(t, e, line, shared)
		b := newHarness(t, e, shared, func(c *api.Config) { c.ChatLive, c.LineChannelSecret = true, lineSecret })
		p := newPayee(t, a, rental.LandlordStandard)
		tenant := billTenant(t, a, p)
		registerTenant(t, a, tenant)
		// Redis's clock refills a token a second while the sends run, so the
		// count allowed is 60 plus what refilled, never 60 per process. The
		// sends go on, alternating, until each process has been refused
		// once: on a loaded machine 90 sends can take long enough for the
		// refill to cover them all.
		start := time.Now()
		allowed, refused := 0, map[*harness]int{}
		for i := 0; i < 400 && (refused[a] == 0 || refused[b] == 0); i++ {
			h := a
			if i%2 == 1 {
				h = b
			}
			res := h.do(req{key: p.key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "hello"},
				headers: []string{"Idempotency-Key: x" + strconv.Itoa(i)}})
			switch {
			case res.status == http.StatusAccepted:
				allowed++
			case res.status == http.StatusTooManyRequests && res.code() == "sending_limit":
				refused[h]++
			default:
				t.Fatalf("send %d: %d %s", i, res.status, res.body)
			}
		}
		ceiling := 60 + int(time.Since(start).Seconds()) + 1
		if allowed < 60 || allowed > ceiling || refused[a] == 0 || refused[b] == 0 {
			t.Fatalf("two processes allowed %d sends (one limit allows 60 to %d); refused %d and %d", allowed, ceiling, refused[a], refused[b])
		}
	})
}

// TestSendingLimitPerAccount: the 60 sends a minute are the acct_
// account's, a landlord as linked to one application, so one application
// that uses up its sends leaves another application's sends to the same
// landlord, and the same tenant, untouched. With RENTAPI_TEST_REDIS set,
// the sends are spread over two processes sharing the limits there; without
// it, both applications send through one process.
func TestSendingLimitPerAccount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		line := newFakeLINE(t)
		var shared []func(*api.Config)
		if url := os.Getenv(redisEnv); url != "" {
			prefix := rental.NewID("t") + ":"
			shared = append(shared, func(c *api.Config) { c.RedisURL, c.RedisPrefix = url, prefix })
		}
		a := chatHarness(t, e, line, shared...)
		b := a
		if len(shared) > 0 {
			b = newHarness(t, e, append(shared, func(c *api.Config) { c.ChatLive, c.LineChannelSecret = true, lineSecret })...)
		}
		p := newPayee(t, a, rental.LandlordStandard)
		tenant := billTenant(t, a, p)
		registerTenant(t, a, tenant)
		// Another developer's application, linked to the same landlord.
		g := a.fixture(rental.PlanPro)
		var acct *rental.Account
		if err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			acct, err = tx.LinkAccount(ctx, g.App.ID, p.acct.LandlordID, g.App.Scopes)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if acct.LandlordID != p.acct.LandlordID || acct.ID == p.acct.ID {
			t.Fatalf("accounts %+v and %+v", p.acct, acct)
		}
		other := a.liveKey(g, acct.ID)
		send := func(h *harness, key, idem string) *result {
			t.Helper()
			return h.do(req{key: key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "hello"},
				headers: []string{"Idempotency-Key: " + idem}})
		}
		// Redis's clock refills a send a second while these run, so they go
		// on until one is refused: on a loaded CI machine 90 sends took 53 s
		// and the refill covered them all.
		refused := false
		for i := 0; i < 400 && !refused; i++ {
			res := send([]*harness{a, b}[i%2], p.key, "first-"+strconv.Itoa(i))
			switch {
			case res.status == http.StatusTooManyRequests && res.code() == "sending_limit":
				refused = true
			case res.status != http.StatusAccepted:
				t.Fatalf("send %d of the first application: %d %s", i, res.status, res.body)
			}
		}
		if !refused {
			t.Fatal("the first application's sends were never refused")
		}
		for i, h := range []*harness{a, b} {
			want(t, send(h, other, "second-"+strconv.Itoa(i)), http.StatusAccepted)
		}
	})
}

func TestMessageIdempotentUnderConcurrency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		// The per-second limits are off: the test clock does not move, so a
		// budget the retries spent would never refill, and a slow first
		// request (the race detector on a loaded machine) would leave the
		// retries refused for good.
		h := chatHarness(t, e, line, func(c *api.Config) { c.NoRateLimits = true })
		p := newPayee(t, h, rental.LandlordStandard)
		tenant := billTenant(t, h, p)
		registerTenant(t, h, tenant)
		var wg sync.WaitGroup
		ids := make(chan string, 20)
		for range 20 {
			wg.Go(func() {
				for {
					res, err := h.send(req{key: p.key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "once"},
						headers: []string{"Idempotency-Key: same"}})
					if err != nil {
						t.Error(err)
						return
					}
					// A client retries the same key while the first request
					// runs (409 at once, on either engine).
					if res.code() == "idempotency_in_progress" {
						time.Sleep(50 * time.Millisecond)
						continue
					}
					if res.status != http.StatusAccepted {
						t.Errorf("%d %s", res.status, res.body)
						return
					}
					ids <- res.data()["id"].(string)
					return
				}
			})
		}
		wg.Wait()
		close(ids)
		seen := map[string]bool{}
		for id := range ids {
			seen[id] = true
		}
		if len(seen) != 1 {
			t.Fatalf("%d notifications", len(seen))
		}
		h.settleChat()
		if pushes, accepted := line.pushes(); pushes != 1 || len(accepted) != 1 {
			t.Fatalf("%d pushes, %d accepted", pushes, len(accepted))
		}
	})
}

func TestNotificationSandbox(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := chatHarness(t, e, newFakeLINE(t))
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		res := h.do(req{key: key, method: "GET", path: "/v1/tenants"})
		var unreachable string
		for _, it := range res.json()["data"].([]any) {
			if tn := it.(map[string]any); tn["name"] == store.UnreachableSandboxTenant {
				unreachable = tn["id"].(string)
			}
		}
		res = h.do(req{key: key, method: "GET", path: "/v1/bills?status=issued"})
		want(t, res, http.StatusOK)
		var bill string
		for _, it := range res.json()["data"].([]any) {
			if b := it.(map[string]any); b["tenant_id"] != unreachable {
				bill = b["id"].(string)
			}
		}
		res = notify(h, key, "payment_reminder", bill)
		want(t, res, http.StatusAccepted)
		if d := waitNotification(t, h, key, res.data()["id"].(string)); d["status"] != "sent" {
			t.Fatalf("sandbox notice %v", d)
		}
		res = h.do(req{key: key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": unreachable, "text": "hi"},
			headers: []string{"Idempotency-Key: u"}})
		want(t, res, http.StatusAccepted)
		id := res.data()["id"].(string)
		for range 6 {
			h.settleChat()
			e.Clock.Advance(31 * time.Minute)
		}
		h.settleChat()
		if d := h.do(req{key: key, method: "GET", path: "/v1/notifications/" + id}).data(); d["status"] != "failed" || d["attempts"].(float64) != 5 {
			t.Fatalf("unreachable sandbox tenant: %v", d)
		}
	})
}

// Without a channel token to push with, a live send is 503
// chat_unavailable (the tenant registered while the secret, which checks
// LINE's webhooks, was set).
func TestChatUnavailable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.LineChannelSecret = lineSecret })
		p := newPayee(t, h, rental.LandlordStandard)
		registerTenant(t, h, billTenant(t, h, p))
		want(t, notify(h, p.key, "new_bill", p.bill), http.StatusServiceUnavailable, "chat_unavailable")
	})
}
