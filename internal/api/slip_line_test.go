package api_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/chat"
	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/slip"
	"rentapi/internal/slip/sliptest"
	"rentapi/internal/store/storetest"
	"rentapi/internal/webhook"
)

// lineImage is a LINE image message event, its content on LINE's servers.
func lineImage(id, user, messageID string) map[string]any {
	e := lineEvent("message", id, user, false)
	e["message"] = map[string]any{"type": "image", "id": messageID, "quoteToken": "q", "contentProvider": map[string]any{"type": "line"}}
	return e
}

// slipJPEG is a JPEG's start with n to tell slips apart (the fake provider
// reads the same bytes as the same transfer).
func slipJPEG(n byte) []byte {
	return append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte{n}, 3000)...)
}

// A registered tenant sends slips to the Official Account as pictures:
// each is fetched from LINE's content API and filed against the tenant's
// oldest unpaid bill (source line), once however often LINE delivers the
// event, and verified by the slip job, never in the webhook. A slip paying
// someone else is answered with why; a verified one that pays the bill off
// with the receipt and its link. A LINE user who is no tenant, and the
// tenant with nothing left to pay, get a polite reply: nothing is fetched
// or filed.
func TestSlipThroughLINE(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line, prov := newFakeLINE(t), sliptest.New(t)
		client, err := chat.NewClient("line-token", line.url, line.url)
		if err != nil {
			t.Fatal(err)
		}
		slips, err := slip.New(prov.URL, sliptest.Key)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, e, func(c *api.Config) {
			c.Guard = webhook.Guard{AllowLoopback: true}
			c.ChatLive, c.LINE, c.LineChannelSecret, c.SlipsLive = true, client, lineSecret, true
		})
		h.runJobs(slog.New(slog.DiscardHandler), jobs.Options{LINE: client, Slips: slips})
		p := slipPayee(t, h, prov)
		tenant := billTenant(t, h, p)
		registerTenant(t, h, tenant)
		user := "U" + strings.Repeat("0", 32-min(len(tenant), 32)) + tenant[:min(len(tenant), 32)]
		send := func(user, messageID string, redelivery ...string) string {
			t.Helper()
			line.mu.Lock()
			n := len(line.replies)
			line.mu.Unlock()
			id := rental.NewID("ev")
			if len(redelivery) > 0 {
				id = redelivery[0]
			}
			want(t, lineWebhook(h, lineSecret, lineImage(id, user, messageID)), http.StatusOK)
			line.mu.Lock()
			defer line.mu.Unlock()
			if len(line.replies) == n {
				return ""
			}
			return line.replies[n]
		}
		list := func() []any {
			res := h.do(req{key: p.key, method: "GET", path: "/v1/slips?bill_id=" + p.bill})
			want(t, res, http.StatusOK)
			l, _ := res.json()["data"].([]any)
			return l
		}
		pushed := func(want string) {
			t.Helper()
			h.settleChat()
			_, msgs := line.pushes()
			for _, m := range msgs {
				if strings.Contains(string(m), want) {
					return
				}
			}
			t.Fatalf("no push to the tenant says %q: %s", want, msgs)
		}

		// Paid to someone else: filed, rejected by the job, answered. The
		// provider fails its first two answers, so that the slip is still
		// pending when the webhook has answered and the list is read (the
		// job runs beside the test, and each retry waits for River's
		// scheduler), unless the webhook verified it itself; a later retry
		// rejects it.
		prov.Set(sliptest.Settings{Mode: sliptest.WrongReceiver, Failures: 2})
		line.setContent("m1", slipJPEG(1))
		if r := send(user, "m1", "ev_first"); !strings.Contains(r, "Slip received") {
			t.Fatalf("reply %s", r)
		}
		if r := send(user, "m1", "ev_first"); r != "" {
			t.Fatalf("a redelivery was answered again: %s", r)
		}
		l := list()
		if len(l) != 1 {
			t.Fatalf("%d slips after a slip and its redelivery", len(l))
		}
		sl := l[0].(map[string]any)
		if sl["source"] != rental.SlipFromLINE || sl["status"] != rental.SlipPending {
			t.Fatalf("slip %v", sl)
		}
		if d := stepSlip(t, h, p.key, sl["id"].(string)); d["rejection_reason"] != rental.RejectReceiver {
			t.Fatalf("slip %v", d)
		}
		pushed("did not go to your landlord")

		// Paid to the landlord: verified, the bill paid, the receipt pushed.
		prov.Set(sliptest.Settings{Mode: sliptest.Verified, Receiver: "xxx-xxx-5678", Amount: float64(p.total) / 100})
		line.setContent("m2", slipJPEG(2))
		if r := send(user, "m2"); !strings.Contains(r, "Slip received") {
			t.Fatalf("reply %s", r)
		}
		l = list()
		if len(l) != 2 {
			t.Fatalf("%d slips", len(l))
		}
		if d := settleSlip(t, h, p.key, l[0].(map[string]any)["id"].(string)); d["status"] != rental.SlipVerified {
			t.Fatalf("slip %v", d)
		}
		bill := getBill(t, h, p.key, p.bill)
		if bill["status"] != rental.BillPaid || bill["receipt"] == nil {
			t.Fatalf("bill %v, receipt %v", bill["status"], bill["receipt"])
		}
		receipt := bill["receipt"].(map[string]any)
		pushed(receipt["number"].(string))
		pushed(receipt["url"].(string))

		// Nothing left to pay, or no tenant: a polite reply, nothing fetched or filed.
		line.mu.Lock()
		fetched := line.fetched
		line.mu.Unlock()
		line.setContent("m3", slipJPEG(3))
		if r := send(user, "m3"); !strings.Contains(r, "no unpaid bill") {
			t.Fatalf("a tenant with nothing to pay: reply %s", r)
		}
		if r := send("U"+strings.Repeat("e", 32), "m3"); !strings.Contains(r, "not registered as a tenant") {
			t.Fatalf("a stranger: reply %s", r)
		}
		line.mu.Lock()
		defer line.mu.Unlock()
		if line.fetched != fetched || len(list()) != 2 {
			t.Fatalf("fetched %d more, %d slips", line.fetched-fetched, len(list()))
		}
	})
}
