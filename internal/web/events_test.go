package web_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// TestPortalEvents: the Events page lists the sandbox's events the
// application may read, newest first, each with its payload (the event as
// a delivery carries it) and its deliveries with their attempts; type
// narrows it as the API's filter does; a resend to a chosen endpoint
// sends the event there, even to an endpoint that did not subscribe to
// it; a notification's event shows the notice as LINE shows it; another
// developer sees none of it, and live mode without a linked landlord says
// so.
func TestPortalEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		hs := hookSite(t, e)
		dev := signUpDeveloper(t, hs, e, "events-"+e.Name+"@example.com")
		key := storetest.Fixture{App: dev.app}.Key(t, e.DB, storetest.Secret(t), store.NewKey{Mode: rental.ModeTest})
		page := "/portal/apps/" + dev.app.ID + "/events/test"
		wantRedirect(t, dev.get("/portal/apps/"+dev.app.ID+"/events"), page)

		// Two endpoints: one for bills only, one for properties only.
		for _, ep := range []url.Values{
			{"url": {"https://hooks.example.com/bills"}, "enabled_events": {"bill.created"}},
			{"url": {"https://hooks.example.com/props"}, "enabled_events": {"property.created"}},
		} {
			madeSecret(t, dev.browser, dev.post(dev.hooks, ep))
		}
		eps := dev.endpoints(t, rental.ModeTest)
		bills := eps[0]
		if bills.URL != "https://hooks.example.com/bills" {
			bills = eps[1]
		}

		created := callAPI(t, hs.URL, key, "POST", "/v1/properties", "", `{"name":"Events Dorm","electricity_rate":800,"water_rate":1800}`)
		wantAPI(t, created, http.StatusCreated, "")
		var prop struct{ ID string }
		json.Unmarshal(created.data, &prop)

		// A bill notice to a tenant the sandbox's chat reaches.
		var notification struct{ ID string }
		for bill, err := range sampleBills(t, e, dev.app) {
			if err != nil {
				t.Fatal(err)
			}
			if a := callAPI(t, hs.URL, key, "POST", "/v1/notifications", "", `{"type":"new_bill","bill_id":"`+bill.ID+`"}`); a.status == http.StatusAccepted {
				json.Unmarshal(a.data, &notification)
				break
			}
		}
		if notification.ID == "" {
			t.Fatal("no sample bill could be sent")
		}
		// The send job records notification.sent with the notification; so
		// does this test, without a LINE to send to.
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			acct, err := tx.GetAccount(ctx, dev.app.ID, dev.app.SandboxAccountID)
			if err != nil {
				return err
			}
			return tx.RecordEvent(ctx, acct, "notification.sent", map[string]string{"id": notification.ID, "object": "notification"})
		})
		if err != nil {
			t.Fatal(err)
		}

		pg := dev.get(page)
		wantPage(t, pg, http.StatusOK, "<code>property.created</code>", "<code>notification.sent</code>", `&#34;id&#34;: &#34;`+prop.ID+`&#34;`,
			"https://hooks.example.com/props", `name="endpoint_id"`)
		if i, j := strings.Index(pg.body, "<code>notification.sent</code>"), strings.Index(pg.body, "<code>property.created</code>"); i > j {
			t.Error("not newest first")
		}
		// The notice as LINE shows it: the phone's line, the bill's lines.
		preview := pg.body[strings.Index(pg.body, `class="chat-preview"`):]
		preview = preview[:strings.Index(preview, "</figure>")]
		for _, want := range []string{"บิลค่าเช่า", "ห้อง", "ใบแจ้งค่าเช่า / Bill", "ค่าเช่า / Rent", "รวม / Total", "กำหนดชำระ"} {
			if !strings.Contains(preview, want) {
				t.Errorf("the LINE preview does not say %q:\n%s", want, preview)
			}
		}

		// Filtered by type, as the API filters.
		if pg := dev.get(page + "?type=property.*"); strings.Contains(pg.body, "<code>notification.sent</code>") || !strings.Contains(pg.body, "<code>property.created</code>") {
			t.Errorf("type=property.* lists other types")
		}
		if pg := dev.get(page + "?type=Bill!"); pg.status != http.StatusBadRequest {
			t.Errorf("a bad type: %d", pg.status)
		}

		// A resend to the bills-only endpoint, which never subscribed to
		// property.created: a new delivery there, shown on the page.
		evID := regexp.MustCompile(`<article class="card event" id="(evt_[a-z0-9]+)">\s*<div class="row spread">\s*<h2><code>property.created</code>`).FindStringSubmatch(pg.body)
		if evID == nil {
			t.Fatalf("no property.created event on the page")
		}
		sent := dev.post(page+"/"+evID[1]+"/send", url.Values{"endpoint_id": {bills.ID}})
		wantRedirect(t, sent, page+"?done=sent")
		delivered, _, err := e.DB.Read().ListDeliveries(ctx, dev.app.ID, rental.ModeTest, bills.ID, store.DeliveryFilter{EventID: evID[1]}, store.Page{Limit: 10})
		if err != nil || len(delivered) != 1 || delivered[0].EventType != "property.created" || !strings.Contains(delivered[0].Body, prop.ID) {
			t.Fatalf("the resend's delivery: %+v %v", delivered, err)
		}
		// Again: the same delivery, sent again, not a second one.
		wantRedirect(t, dev.post(page+"/"+evID[1]+"/send", url.Values{"endpoint_id": {bills.ID}}), page+"?done=sent")
		again, _, _ := e.DB.Read().ListDeliveries(ctx, dev.app.ID, rental.ModeTest, bills.ID, store.DeliveryFilter{EventID: evID[1]}, store.Page{Limit: 10})
		if len(again) != 1 || again[0].Generation != 2 {
			t.Fatalf("a second resend: %+v", again)
		}
		after := dev.get(page)
		if strings.Count(after.body[strings.Index(after.body, evID[1]):], "https://hooks.example.com/bills") < 1 {
			t.Error("the page does not show the resend's delivery")
		}
		for _, bad := range []url.Values{{"endpoint_id": {"we_doesnotexist"}}, {}} {
			if p := dev.post(page+"/"+evID[1]+"/send", bad); p.status != http.StatusNotFound {
				t.Errorf("a resend to %v: %d, want 404", bad, p.status)
			}
		}
		if p := dev.do("POST", page+"/"+evID[1]+"/send", url.Values{"endpoint_id": {bills.ID}}, "https://evil.example"); p.status != http.StatusForbidden {
			t.Errorf("a cross-site resend: %d, want 403", p.status)
		}
		if p := dev.post(page+"/evt_doesnotexist/send", url.Values{"endpoint_id": {bills.ID}}); p.status != http.StatusNotFound {
			t.Errorf("a resend of a missing event: %d", p.status)
		}

		// Nobody else's, and live mode without a landlord says so.
		other := signUpDeveloper(t, hs, e, "events-other-"+e.Name+"@example.com")
		if p := other.get(page); p.status != http.StatusNotFound {
			t.Errorf("another developer: %d", p.status)
		}
		live := "/portal/apps/" + dev.app.ID + "/events/live"
		wantPage(t, dev.get(live), http.StatusOK, "No landlord has linked the application yet")

		// Live mode: a linked landlord's events, until the landlord leaves;
		// the sandbox is no live account.
		acct := storetest.Fixture{App: dev.app}.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.RecordEvent(ctx, acct, "property.created", map[string]string{"id": "prop_livelandlord", "object": "property"})
		})
		if err != nil {
			t.Fatal(err)
		}
		wantPage(t, dev.get(live), http.StatusOK, "prop_livelandlord", acct.ID)
		liveEvent := regexp.MustCompile(`<article class="card event" id="(evt_[a-z0-9]+)">`).FindStringSubmatch(dev.get(live).body)
		if p := dev.get(live + "?account=" + dev.app.SandboxAccountID); p.status != http.StatusNotFound {
			t.Errorf("the sandbox on the live page: %d", p.status)
		}
		if p := dev.post(live+"/"+evID[1]+"/send", url.Values{"account": {dev.app.SandboxAccountID}, "endpoint_id": {bills.ID}}); p.status != http.StatusNotFound {
			t.Errorf("a sandbox event resent from the live page: %d", p.status)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, dev.app.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		if p := dev.get(live + "?account=" + acct.ID); p.status != http.StatusNotFound {
			t.Errorf("a disconnected landlord's events: %d", p.status)
		}
		wantPage(t, dev.get(live), http.StatusOK, "No landlord has linked the application yet")
		if p := dev.post(live+"/"+liveEvent[1]+"/send", url.Values{"account": {acct.ID}, "endpoint_id": {bills.ID}}); p.status != http.StatusNotFound {
			t.Errorf("a disconnected landlord's event resent: %d", p.status)
		}
		if p := dev.get("/portal/apps/" + dev.app.ID + "/events/both"); p.status != http.StatusNotFound {
			t.Errorf("a mode that is none: %d", p.status)
		}
	})
}

// sampleBills yields the sandbox's issued sample bills.
func sampleBills(t *testing.T, e storetest.Engine, app *rental.Application) func(func(rental.Bill, error) bool) {
	return func(yield func(rental.Bill, error) bool) {
		acct, err := e.DB.Read().GetAccount(t.Context(), app.ID, app.SandboxAccountID)
		if err != nil {
			yield(rental.Bill{}, err)
			return
		}
		bills, _, err := e.DB.Read().ListBills(t.Context(), acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 50})
		if err != nil {
			yield(rental.Bill{}, err)
			return
		}
		for _, b := range bills {
			if !yield(b, nil) {
				return
			}
		}
	}
}
