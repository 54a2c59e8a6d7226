package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/chat"
	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// lineSecret is the test LINE channel's secret.
const lineSecret = "line-channel-secret"

// lineWebhook posts LINE events to the service's LINE webhook, signed with
// secret (unsigned when it is empty).
func lineWebhook(h *harness, secret string, events ...map[string]any) *result {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"destination": "U" + strings.Repeat("f", 32), "events": events})
	var headers []string
	if secret != "" {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		headers = append(headers, "X-Line-Signature: "+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return h.do(req{method: "POST", path: "/line/v1/webhook", body: body, headers: headers})
}

func lineEvent(typ, id, user string, redelivery bool) map[string]any {
	return map[string]any{"type": typ, "mode": "active", "timestamp": 1700000000000, "webhookEventId": id,
		"deliveryContext": map[string]any{"isRedelivery": redelivery}, "replyToken": "rt-" + id,
		"source": map[string]any{"type": "user", "userId": user}}
}

func lineText(id, user, text string, redelivery bool) map[string]any {
	e := lineEvent("message", id, user, redelivery)
	e["message"] = map[string]any{"type": "text", "id": "m" + id, "text": text, "quoteToken": "q"}
	return e
}

// tenantOf reads a tenant with the landlord's key.
func tenantOf(h *harness, key, id string) map[string]any {
	h.t.Helper()
	res := h.do(req{key: key, method: "GET", path: "/v1/tenants/" + id})
	want(h.t, res, http.StatusOK)
	return res.data()
}

// eventCount counts the landlord's events of a type about a tenant.
func eventCount(h *harness, key, typ string) int {
	h.t.Helper()
	res := h.do(req{key: key, method: "GET", path: "/v1/events?type=" + typ + "&limit=100"})
	want(h.t, res, http.StatusOK)
	list, _ := res.json()["data"].([]any)
	return len(list)
}

func TestLineRegistration(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		other := newPayee(t, h, rental.LandlordStandard)
		tenant := billTenant(t, h, p)
		otherTenant := billTenant(t, h, other)

		before := tenantOf(h, p.key, tenant)
		code, _ := before["chat_registration_code"].(string)
		if len(code) != rental.RegistrationCodeLen || before["chat_registered"] != false || before["chat_registration_url"] != storetest.AddFriendURL {
			t.Fatalf("new tenant: %v", before)
		}
		otherCode := tenantOf(h, other.key, otherTenant)["chat_registration_code"].(string)
		user := "U" + strings.Repeat("a", 32)

		// Bad and missing signatures change nothing.
		want(t, lineWebhook(h, "wrong-secret", lineText("ev1", user, code, false)), http.StatusUnauthorized, "invalid_signature")
		want(t, lineWebhook(h, "", lineText("ev1", user, code, false)), http.StatusUnauthorized, "invalid_signature")
		if got := tenantOf(h, p.key, tenant); got["chat_registered"] != false || got["chat_registration_code"] != code {
			t.Fatalf("after bad signatures: %v", got)
		}

		// Follow, then the code (lower case, with a dash), delivered twice.
		want(t, lineWebhook(h, lineSecret, lineEvent("follow", "ev0", user, false)), http.StatusOK)
		typed := strings.ToLower(code[:4]) + "-" + code[4:]
		want(t, lineWebhook(h, lineSecret, lineText("ev1", user, typed, false)), http.StatusOK)
		want(t, lineWebhook(h, lineSecret, lineText("ev1", user, typed, true)), http.StatusOK)
		got := tenantOf(h, p.key, tenant)
		if got["chat_registered"] != true || got["chat_registration_code"] != nil {
			t.Fatalf("after the code: %v", got)
		}
		if n := eventCount(h, p.key, "tenant.line_registered"); n != 1 {
			t.Errorf("tenant.line_registered %d times; want 1", n)
		}
		// The code is used up; another landlord's tenant is untouched.
		want(t, lineWebhook(h, lineSecret, lineText("ev2", "U"+strings.Repeat("b", 32), code, false)), http.StatusOK)
		if n := eventCount(h, p.key, "tenant.line_registered"); n != 1 {
			t.Errorf("a used code: tenant.line_registered %d times; want 1", n)
		}
		if got := tenantOf(h, other.key, otherTenant); got["chat_registered"] != false || got["chat_registration_code"] != otherCode {
			t.Errorf("the other landlord's tenant: %v", got)
		}
		if n := eventCount(h, other.key, "tenant.line_registered"); n != 0 {
			t.Errorf("the other landlord got %d tenant.line_registered", n)
		}
		line.mu.Lock()
		replies := strings.Join(line.replies, "\n")
		n := len(line.replies)
		line.mu.Unlock()
		if n != 3 || !strings.Contains(replies, "You are registered") || !strings.Contains(replies, "unknown or has already been used") {
			t.Errorf("%d replies: %s", n, replies)
		}

		// A notification to the freshly registered tenant is sent.
		res := h.do(req{key: p.key, method: "POST", path: "/v1/messages", body: map[string]any{"tenant_id": tenant, "text": "hello"},
			headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
		want(t, res, http.StatusAccepted)
		if d := waitNotification(t, h, p.key, res.data()["id"].(string)); d["status"] != rental.NotificationSent {
			t.Errorf("message to the registered tenant: %v", d)
		}

		// Unfollow unregisters and gives a new code.
		want(t, lineWebhook(h, lineSecret, lineEvent("unfollow", "ev3", user, false)), http.StatusOK)
		got = tenantOf(h, p.key, tenant)
		if got["chat_registered"] != false || got["chat_registration_code"] == nil || got["chat_registration_code"] == code {
			t.Fatalf("after unfollow: %v", got)
		}
	})
}

func TestLineRegisterHelper(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		tenant := billTenant(t, h, p)
		path := "/v1/test-helpers/tenants/" + tenant + "/line-register"
		want(t, h.do(req{key: p.key, method: "POST", path: path, headers: []string{"Idempotency-Key: " + rental.NewID("idem")}}),
			http.StatusForbidden, "test_mode_only")

		f := h.fixture(rental.PlanPro)
		key := h.testKey(f, rental.ScopeTenantsWrite, rental.ScopeTenantsRead, rental.ScopePropertiesWrite, rental.ScopeRoomsRead, rental.ScopeRoomsWrite)
		res := h.do(req{key: key, method: "GET", path: "/v1/rooms?status=vacant&limit=1"})
		want(t, res, http.StatusOK)
		rooms, _ := res.json()["data"].([]any)
		if len(rooms) == 0 {
			t.Fatal("no vacant sandbox room")
		}
		room := rooms[0].(map[string]any)["id"].(string)
		res = h.do(req{key: key, method: "POST", path: "/v1/rooms/" + room + "/tenant", body: map[string]any{"name": "Malee", "phone": "0812345679"},
			headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
		want(t, res, http.StatusCreated)
		id := res.data()["id"].(string)
		if res.data()["chat_registration_code"] == nil {
			t.Fatalf("moved in without a code: %v", res.data())
		}
		res = h.do(req{key: key, method: "POST", path: "/v1/test-helpers/tenants/" + id + "/line-register",
			headers: []string{"Idempotency-Key: " + rental.NewID("idem")}})
		want(t, res, http.StatusOK)
		if res.data()["chat_registered"] != true || res.data()["chat_registration_code"] != nil {
			t.Fatalf("registered: %v", res.data())
		}
	})
}

// The LINE webhook judges the signature before anything else: whatever an
// unsigned or badly signed request's media type, size or encoding, it is
// 401 invalid_signature; only a signed request learns that its body is too
// large, of the wrong media type or not UTF-8.
func TestLineWebhookChecksTheSignatureFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.LineChannelSecret = lineSecret })
		sign := func(secret string, body []byte) string {
			m := hmac.New(sha256.New, []byte(secret))
			m.Write(body)
			return base64.StdEncoding.EncodeToString(m.Sum(nil))
		}
		events, _ := json.Marshal(map[string]any{"destination": "U" + strings.Repeat("f", 32), "events": []any{}})
		large := append(append([]byte(`{"events":[],"pad":"`), strings.Repeat("x", 2<<20)...), `"}`...)
		notUTF8 := []byte("{\"events\":[],\"x\":\"\xff\xfe\"}")
		bodies := []struct {
			name, mediaType string
			body            []byte
			// signed is the answer to the body when it is rightly signed.
			signed int
		}{
			{"plain text", "text/plain", events, http.StatusUnsupportedMediaType},
			{"no media type", "", events, http.StatusUnsupportedMediaType},
			{"over 1 MB", "application/json", large, http.StatusRequestEntityTooLarge},
			{"not UTF-8", "application/json", notUTF8, http.StatusBadRequest},
			{"not JSON", "application/json", []byte("events"), http.StatusBadRequest},
			{"empty", "application/json", nil, http.StatusBadRequest},
			{"events", "application/json", events, http.StatusOK},
		}
		for _, b := range bodies {
			for _, sig := range []struct{ name, header string }{
				{"unsigned", ""},
				{"not base64", "X-Line-Signature: %%%"},
				{"short", "X-Line-Signature: " + base64.StdEncoding.EncodeToString([]byte("short"))},
				{"another secret", "X-Line-Signature: " + sign("wrong-secret", b.body)},
				{"another body", "X-Line-Signature: " + sign(lineSecret, append(slices.Clone(b.body), ' '))},
			} {
				res := h.do(req{method: "POST", path: "/line/v1/webhook", body: b.body, headers: []string{sig.header, "Content-Type: " + b.mediaType}})
				if res.status != http.StatusUnauthorized || res.code() != "invalid_signature" {
					t.Errorf("%s, %s: %d %s; want 401 invalid_signature", b.name, sig.name, res.status, res.body)
				}
			}
			res := h.do(req{method: "POST", path: "/line/v1/webhook", body: b.body,
				headers: []string{"X-Line-Signature: " + sign(lineSecret, b.body), "Content-Type: " + b.mediaType}})
			if res.status != b.signed {
				t.Errorf("%s, signed: %d %s; want %d", b.name, res.status, res.body, b.signed)
			}
		}
	})
}

// A LINE user may send ten wrong registration codes an hour, counted
// across the service's processes (two servers over two database handles
// here); after that every code, the right one too, is answered "try again
// later" and changes nothing until the hour is over. Another LINE user is
// not held up.
func TestLineCodeGuessing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		a := chatHarness(t, e, line)
		other := e.Another(t)
		client, err := chat.NewClient("line-token", line.url, line.url)
		if err != nil {
			t.Fatal(err)
		}
		b := newHarness(t, other, func(c *api.Config) { c.ChatLive, c.LINE, c.LineChannelSecret = true, client, lineSecret })
		p := newPayee(t, a, rental.LandlordStandard)
		tenant := billTenant(t, a, p)
		code := tenantOf(a, p.key, tenant)["chat_registration_code"].(string)
		wrong := func() string {
			for {
				if c := rental.NewRegistrationCode(); c != code {
					return c
				}
			}
		}
		guesser, neighbour := "U"+strings.Repeat("c", 32), "U"+strings.Repeat("d", 32)
		send := func(h *harness, user, text string) string {
			t.Helper()
			line.mu.Lock()
			n := len(line.replies)
			line.mu.Unlock()
			want(t, lineWebhook(h, lineSecret, lineText(rental.NewID("ev"), user, text, false)), http.StatusOK)
			line.mu.Lock()
			defer line.mu.Unlock()
			if len(line.replies) != n+1 {
				t.Fatalf("%d replies to one code", len(line.replies)-n)
			}
			return line.replies[n]
		}
		for i := range rental.MaxWrongCodes {
			h := a
			if i%2 == 1 {
				h = b
			}
			if r := send(h, guesser, wrong()); !strings.Contains(r, "unknown or has already been used") {
				t.Fatalf("wrong code %d: reply %s", i+1, r)
			}
			e.Clock.Advance(time.Minute)
		}
		for _, h := range []*harness{a, b} {
			for _, text := range []string{code, wrong()} {
				if r := send(h, guesser, text); !strings.Contains(r, "Please try again later.") {
					t.Fatalf("a code after ten wrong ones: reply %s", r)
				}
			}
		}
		if got := tenantOf(a, p.key, tenant); got["chat_registered"] != false || got["chat_registration_code"] != code {
			t.Fatalf("the right code after ten wrong ones changed the tenant: %v", got)
		}
		if n := eventCount(a, p.key, "tenant.line_registered"); n != 0 {
			t.Fatalf("tenant.line_registered %d times", n)
		}
		if r := send(b, neighbour, wrong()); !strings.Contains(r, "unknown or has already been used") {
			t.Fatalf("another LINE user: reply %s", r)
		}
		// The hour from the first wrong code is over: the right code works.
		e.Clock.Advance(time.Hour - rental.MaxWrongCodes*time.Minute)
		if r := send(b, guesser, code); !strings.Contains(r, "You are registered") {
			t.Fatalf("the right code an hour later: reply %s", r)
		}
		if got := tenantOf(a, p.key, tenant); got["chat_registered"] != true {
			t.Fatalf("after the hour: %v", got)
		}
	})
}
