package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// A live bill paid by a provider's signed confirmations shows its receipt
// (null while a part is paid, then number, time and page), the same in the
// list and in the bill.updated event that says it is paid, each answer as
// the OpenAPI document describes it; the page opens at the URL's path.
func TestBillReceipt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		p := newPayee(t, h, rental.LandlordStandard)
		link := p.link(t, h)
		open(t, link)
		pay := p.payments(t, h)[0]["id"].(string)
		bill := func() map[string]any {
			t.Helper()
			res := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill})
			want(t, res, http.StatusOK)
			return res.data()
		}
		if b := bill(); b["receipt"] != nil {
			t.Fatalf("unpaid bill's receipt %v", b["receipt"])
		}
		want(t, h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("kb-r1", pay, 100000)}), http.StatusOK)
		if b := bill(); b["status"] != "issued" || b["receipt"] != nil {
			t.Fatalf("after a part: %v, receipt %v", b["status"], b["receipt"])
		}
		want(t, h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("kb-r2", pay, p.total-100000)}), http.StatusOK)
		b := bill()
		r, ok := b["receipt"].(map[string]any)
		if b["status"] != "paid" || !ok || r["number"] != "R2026-000001" || r["issued_at"] == nil ||
			!strings.HasPrefix(r["url"].(string), storetest.PublicURL+"/pay/receipt/") {
			t.Fatalf("paid bill: %v, receipt %v", b["status"], b["receipt"])
		}
		res := h.do(req{key: p.key, method: "GET", path: "/v1/bills?status=paid"})
		want(t, res, http.StatusOK)
		if listed := res.json()["data"].([]any)[0].(map[string]any)["receipt"]; !equalJSON(listed, r) {
			t.Fatalf("listed receipt %v, want %v", listed, r)
		}
		res = h.do(req{key: p.key, method: "GET", path: "/v1/events?type=bill.updated&limit=1"})
		want(t, res, http.StatusOK)
		ev := res.json()["data"].([]any)[0].(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
		if ev["status"] != "paid" || !equalJSON(ev["receipt"], r) {
			t.Fatalf("bill.updated %v", ev)
		}
		u, _ := url.Parse(r["url"].(string))
		status, page := open(t, h.url+u.Path)
		if status != http.StatusOK || !strings.Contains(page, "R2026-000001") || !strings.Contains(page, "Malee Sukjai") {
			t.Fatalf("receipt page %d:\n%s", status, page)
		}
	})
}

// A payment_receipt's LINE text names the receipt and links its page.
func TestReceiptNotification(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		line := newFakeLINE(t)
		h := chatHarness(t, e, line)
		p := newPayee(t, h, rental.LandlordStandard)
		tenant := billTenant(t, h, p)
		registerTenant(t, h, tenant)
		open(t, p.link(t, h))
		pay := p.payments(t, h)[0]["id"].(string)
		want(t, h.confirm(confirmation{at: e.Clock.Now(), body: confirmationBody("kb-n1", pay, p.total)}), http.StatusOK)
		res := h.do(req{key: p.key, method: "GET", path: "/v1/bills/" + p.bill})
		r := res.data()["receipt"].(map[string]any)

		res = notify(h, p.key, "payment_receipt", p.bill)
		want(t, res, http.StatusAccepted)
		if n := waitNotification(t, h, p.key, res.data()["id"].(string)); n["status"] != "sent" {
			t.Fatalf("notification %v", n)
		}
		_, accepted := line.pushes()
		if len(accepted) != 1 {
			t.Fatalf("%d messages", len(accepted))
		}
		for _, m := range accepted {
			var msg struct{ Type, Text string }
			if err := json.Unmarshal(m, &msg); err != nil || msg.Type != "text" {
				t.Fatalf("message %s (%v)", m, err)
			}
			for _, want := range []string{"ได้รับชำระเงินแล้ว", "ใบเสร็จเลขที่ " + r["number"].(string), "Receipt " + r["number"].(string), r["url"].(string)} {
				if !strings.Contains(msg.Text, want) {
					t.Errorf("the receipt's text does not say %q:\n%s", want, msg.Text)
				}
			}
			if strings.Index(msg.Text, "ได้รับชำระเงินแล้ว") > strings.Index(msg.Text, "Payment received") {
				t.Errorf("Thai does not come first:\n%s", msg.Text)
			}
		}
	})
}

// equalJSON reports whether two decoded JSON values are the same.
func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
