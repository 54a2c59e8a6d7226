package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
	"rentapi/internal/webhook"
	"rentapi/internal/webhook/webhooktest"
)

// hookSite serves the API and the pages over the engine's database, with
// the server secret and the strict webhook guard (public https only), whose
// names resolve on webhooktest's Internet.
func hookSite(t *testing.T, e storetest.Engine) *httptest.Server {
	t.Helper()
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	base := "http://" + hs.Listener.Addr().String()
	sec := storetest.Secret(t)
	guard := webhook.Guard{Resolver: webhooktest.Internet(t)}
	srv, err := api.NewServer(api.Config{DB: e.DB, Secret: sec, PublicURL: base, Guard: guard})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: e.DB, PublicURL: base, Secret: sec, Guard: guard}, srv)
	hs.Start()
	return hs
}

// developer is a developer signed in to the portal, with an application
// made the way the portal's application pages make one.
type developer struct {
	*browser
	db  *store.DB
	app *rental.Application
	// hooks is the path of the application's test-mode webhook pages.
	hooks string
}

func signUpDeveloper(t *testing.T, hs *httptest.Server, e storetest.Engine, email string) developer {
	t.Helper()
	b := newBrowser(t, hs.URL, nil)
	if p := b.post("/portal/signup", url.Values{"name": {"Dev " + email}, "email": {email}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign-up: %d %s", p.status, p.body)
	}
	ctx := t.Context()
	person, _, err := e.DB.Read().PersonByEmail(ctx, rental.PersonDeveloper, email)
	if err != nil {
		t.Fatal(err)
	}
	var app *rental.Application
	err = e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
		app, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: person.DeveloperID, Name: "Accounting of " + email,
			Company: "Co", Scopes: rental.AllScopes})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return developer{browser: b, db: e.DB, app: app, hooks: "/portal/apps/" + app.ID + "/webhooks/test"}
}

// endpoints lists the application's endpoints of the mode in the store.
func (d developer) endpoints(t *testing.T, mode rental.Mode) []rental.WebhookEndpoint {
	t.Helper()
	list, _, err := d.db.Read().ListEndpoints(t.Context(), d.app.ID, mode, store.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// secretShown finds a signing secret on a page.
var secretShown = regexp.MustCompile(`<p class="secret whsec">(whsec_[A-Za-z0-9]{32})</p>`)

// wantPage checks an answer's status and that its body says each of want.
func wantPage(t *testing.T, p page, status int, want ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d: %.2000s", p.status, status, p.body)
	}
	for _, w := range want {
		if !strings.Contains(p.body, w) {
			t.Fatalf("the page does not say %q: %.4000s", w, p.body)
		}
	}
}

// madeSecret follows the redirect of a form that made a signing secret (a
// new endpoint, a rotation) to the page that shows it once, and returns
// that page.
func madeSecret(t *testing.T, b *browser, p page) page {
	t.Helper()
	if p.status != http.StatusSeeOther || !strings.HasSuffix(p.location, "/secret") {
		t.Fatalf("answer %d to %q, want a 303 to the secret's page: %.1000s", p.status, p.location, p.body)
	}
	return b.get(p.location)
}

// wantRedirect checks a 303 to a path starting with prefix.
func wantRedirect(t *testing.T, p page, prefix string) {
	t.Helper()
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, prefix) {
		t.Fatalf("answer %d to %q, want a 303 to %s: %.1000s", p.status, p.location, prefix, p.body)
	}
}

// A developer manages an application's endpoints in the portal, on the
// API's code: create (the secret shown once, on that page only), list,
// edit, disable and enable, rotate (a new secret shown once, the old one
// kept for the overlap), a test event visible in the delivery log with its
// attempts, resend, delete; and the sandbox reset puts the sample data
// back. No signing secret is stored in clear.
func TestWebhookPortal(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		hs := hookSite(t, e)
		dev := signUpDeveloper(t, hs, e, "dev@example.com")

		wantRedirect(t, dev.get("/portal/apps/"+dev.app.ID+"/webhooks"), dev.hooks)
		wantPage(t, dev.get(dev.hooks), http.StatusOK, "No endpoints in this mode yet", "Reset the sandbox")
		wantPage(t, dev.get(dev.hooks+"/new"), http.StatusOK, `name="url"`, `value="bill.created"`, `value="*" checked`)

		created := madeSecret(t, dev.browser, dev.post(dev.hooks, url.Values{"url": {"https://hooks.example.com/rentapi"},
			"enabled_events": {"bill.created", "payment.paid"}, "description": {"บัญชี sync"}}))
		wantPage(t, created, http.StatusOK, "https://hooks.example.com/rentapi", "it is not shown again")
		m := secretShown.FindStringSubmatch(created.body)
		if m == nil {
			t.Fatalf("no secret shown: %s", created.body)
		}
		first := m[1]
		list := dev.endpoints(t, rental.ModeTest)
		if len(list) != 1 || list[0].URL != "https://hooks.example.com/rentapi" || strings.Join(list[0].EnabledEvents, ",") != "bill.created,payment.paid" ||
			list[0].Description == nil || *list[0].Description != "บัญชี sync" || list[0].Status != rental.EndpointEnabled {
			t.Fatalf("stored %+v", list)
		}
		ep := list[0].ID
		path := dev.hooks + "/" + ep
		if !strings.Contains(created.body, path) {
			t.Fatalf("the result does not link the endpoint %s", path)
		}

		listed := dev.get(dev.hooks)
		wantPage(t, listed, http.StatusOK, "https://hooks.example.com/rentapi", "บัญชี sync", "bill.created", "payment.paid", "Enabled", path+"/deliveries")
		wantPage(t, dev.get(path), http.StatusOK, ep, "Rotate the secret", "Send a test event", `value="bill.created" checked`)

		// Edit: a new URL, every event, no description.
		wantRedirect(t, dev.post(path, url.Values{"url": {"https://hooks2.example.com/in"}, "enabled_events": {"*"}, "description": {""}}), path+"?done=saved")
		e1, err := e.DB.Read().GetEndpoint(ctx, dev.app.ID, rental.ModeTest, ep)
		if err != nil || e1.URL != "https://hooks2.example.com/in" || strings.Join(e1.EnabledEvents, ",") != "*" || e1.Description != nil {
			t.Fatalf("after the edit %+v %v", e1, err)
		}
		wantPage(t, dev.get(path+"?done=saved"), http.StatusOK, "Saved.", "https://hooks2.example.com/in", "All events")

		// Disable: the reason says where; no test event to a disabled
		// endpoint; enable clears the reason.
		wantRedirect(t, dev.post(path+"/status", url.Values{"status": {"disabled"}}), path+"?done=disabled")
		e1, _ = e.DB.Read().GetEndpoint(ctx, dev.app.ID, rental.ModeTest, ep)
		if e1.Status != rental.EndpointDisabled || e1.DisabledReason == nil || !strings.Contains(*e1.DisabledReason, "portal") {
			t.Fatalf("disabled %+v", e1)
		}
		wantPage(t, dev.get(path), http.StatusOK, "Disabled", "Enable", "Disabled in the developer portal.")
		wantPage(t, dev.post(path+"/test", url.Values{}), http.StatusConflict, "enable it first")
		wantRedirect(t, dev.post(path+"/status", url.Values{"status": {"enabled"}}), path+"?done=enabled")
		e1, _ = e.DB.Read().GetEndpoint(ctx, dev.app.ID, rental.ModeTest, ep)
		if e1.Status != rental.EndpointEnabled || e1.DisabledReason != nil {
			t.Fatalf("enabled %+v", e1)
		}

		// Rotate: a new secret, shown once; the old one still signs.
		rotated := madeSecret(t, dev.browser, dev.post(path+"/rotate", url.Values{}))
		wantPage(t, rotated, http.StatusOK, "New signing secret", "24 hours")
		m = secretShown.FindStringSubmatch(rotated.body)
		if m == nil || m[1] == first {
			t.Fatalf("rotation showed %v (first %s)", m, first)
		}
		second := m[1]

		// A test event makes a delivery, signed with both secrets.
		wantRedirect(t, dev.post(path+"/test", url.Values{}), path+"/deliveries?done=test")
		ds, _, err := e.DB.Read().ListDeliveries(ctx, dev.app.ID, rental.ModeTest, ep, store.DeliveryFilter{}, store.Page{Limit: 10})
		if err != nil || len(ds) != 1 || ds[0].EventType != "webhook.test" || ds[0].Status != rental.DeliveryPending {
			t.Fatalf("deliveries %+v %v", ds, err)
		}
		d := ds[0]
		work, err := e.DB.Read().DeliveryWork(ctx, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		sec := storetest.Secret(t)
		cur, err1 := sec.Open(work.Secret, []byte(ep))
		old, err2 := sec.Open(work.OldSecret, []byte(ep))
		if err1 != nil || err2 != nil || string(cur) != second || string(old) != first || work.OldSecretUntil.Before(e.Clock.Now().Add(23*rental.SecretOverlap/24)) {
			t.Fatalf("signing secrets %q %q until %v (%v %v)", cur, old, work.OldSecretUntil, err1, err2)
		}
		// The job's first attempt fails; the log shows it.
		status := 503
		failed := store.AttemptOutcome{Attempt: rental.Attempt{AttemptedAt: rental.Time{Time: e.Clock.Now()}, StatusCode: &status, DurationMS: 87,
			ResponseBody: `{"error":"receiver <b>down</b>"}`}}
		next := e.Clock.Now().Add(rental.RetryGaps[0])
		failed.Next = &next
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { _, err := tx.RecordAttempt(ctx, work, failed); return err }); err != nil {
			t.Fatal(err)
		}
		log := dev.get(path + "/deliveries?done=test")
		wantPage(t, log, http.StatusOK, "A webhook.test event is on its way.", "webhook.test", d.ID, d.EventID, "503", "87 ms",
			`{&#34;error&#34;:&#34;receiver &lt;b&gt;down&lt;/b&gt;&#34;}`, "Pending", "Resend", "Next attempt")

		// Resend: a new run at once.
		wantRedirect(t, dev.post(path+"/deliveries/"+d.ID+"/resend", url.Values{}), path+"/deliveries?done=resent")
		again, err := e.DB.Read().DeliveryWork(ctx, d.ID)
		if err != nil || again.Generation != 2 || again.Status != rental.DeliveryPending {
			t.Fatalf("resent %+v %v", again, err)
		}

		// The secrets were shown on their own pages only, and are stored
		// sealed.
		for _, p := range []string{dev.hooks, path, path + "/deliveries", path + "/delete"} {
			if body := dev.get(p).body; strings.Contains(body, "whsec_") {
				t.Fatalf("%s shows a secret", p)
			}
		}
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, "whsec_") {
				t.Fatalf("table %s holds a signing secret in clear: %.300s", table, row)
			}
		}

		// Live mode: a test event is sent as a linked landlord's account;
		// the sandbox is not one.
		live := "/portal/apps/" + dev.app.ID + "/webhooks/live"
		wantPage(t, dev.get(live), http.StatusOK, "No endpoints in this mode yet")
		wantPage(t, madeSecret(t, dev.browser, dev.post(live, url.Values{"url": {"https://live.example.com/hook"}, "enabled_events": {"*"}})), http.StatusOK, "whsec_")
		lep := dev.endpoints(t, rental.ModeLive)[0].ID
		wantPage(t, dev.get(live+"/"+lep), http.StatusOK, "link one to the application first")
		acct := storetest.Fixture{App: dev.app}.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		wantPage(t, dev.get(live+"/"+lep), http.StatusOK, `<option value="`+acct.ID+`">`)
		wantPage(t, dev.post(live+"/"+lep+"/test", url.Values{"account": {dev.app.SandboxAccountID}}), http.StatusNotFound)
		wantRedirect(t, dev.post(live+"/"+lep+"/test", url.Values{"account": {acct.ID}}), live+"/"+lep+"/deliveries")
		// The live endpoint has the link's account.linked, and the test event
		// sent as the linked account.
		ds, _, _ = e.DB.Read().ListDeliveries(ctx, dev.app.ID, rental.ModeLive, lep, store.DeliveryFilter{}, store.Page{Limit: 10})
		if len(ds) != 2 || ds[0].EventType != "webhook.test" || ds[1].EventType != "account.linked" ||
			!strings.Contains(ds[0].Body, `"account_id":"`+acct.ID+`"`) {
			t.Fatalf("live deliveries %+v", ds)
		}
		if dev.get(dev.hooks+"/"+lep).status != http.StatusNotFound || dev.get(live+"/"+ep).status != http.StatusNotFound {
			t.Fatal("an endpoint is reachable under the other mode")
		}

		// Delete, after a confirmation page.
		wantPage(t, dev.get(path+"/delete"), http.StatusOK, "Delete this endpoint?", "https://hooks2.example.com/in")
		wantRedirect(t, dev.post(path+"/delete", url.Values{}), dev.hooks+"?done=deleted")
		if _, err := e.DB.Read().GetEndpoint(ctx, dev.app.ID, rental.ModeTest, ep); !rental.IsNotFound(err) {
			t.Fatalf("deleted endpoint: %v", err)
		}
		wantPage(t, dev.get(dev.hooks+"?done=deleted"), http.StatusOK, "The endpoint is deleted.", "No endpoints in this mode yet")
		wantPage(t, dev.get(path), http.StatusNotFound)

		// The sandbox reset, after a confirmation page, puts the sample
		// data back.
		sandbox := storetest.Fixture{App: dev.app}.Sandbox(t, e.DB)
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			p, err := rental.NewProperty(rental.PropertyChange{Name: rental.Of("Extra"), Address: rental.Of("1 Road"),
				ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800), DueDay: rental.Of[int64](5)})
			if err != nil {
				return err
			}
			if err := tx.Claim(ctx, sandbox); err != nil {
				return err
			}
			_, err = tx.CreateProperty(ctx, sandbox, p)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		usage := func() rental.Capacity {
			u, err := e.DB.Read().Usage(ctx, sandbox)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		if u := usage(); u.Properties != 3 {
			t.Fatalf("before the reset: %+v", u)
		}
		reset := "/portal/apps/" + dev.app.ID + "/sandbox/reset"
		wantPage(t, dev.get(reset), http.StatusOK, "Reset the sandbox?")
		wantRedirect(t, dev.post(reset, url.Values{}), dev.hooks+"?done=reset")
		if u := usage(); u != (rental.Capacity{Properties: 2, Rooms: 8}) {
			t.Fatalf("after the reset: %+v", u)
		}
		wantPage(t, dev.get(dev.hooks+"?done=reset"), http.StatusOK, "The sandbox has its sample data again.")
	})
}

// Creating an endpoint and rotating its secret answer with a redirect to
// the page that shows the signing secret once: reloading it makes no
// endpoint and shows no secret (410), and no other session sees it.
func TestWebhookSecretShownOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		hs := hookSite(t, e)
		dev := signUpDeveloper(t, hs, e, "dev@example.com")
		created := dev.post(dev.hooks, url.Values{"url": {"https://hooks.example.com/in"}, "enabled_events": {"*"}})
		if secretShown.MatchString(created.body) {
			t.Fatalf("the form's answer shows the secret: %s", created.body)
		}
		shown := madeSecret(t, dev.browser, created)
		m := secretShown.FindStringSubmatch(shown.body)
		if shown.status != http.StatusOK || m == nil || !strings.Contains(shown.body, "Endpoint added") {
			t.Fatalf("the secret's page: %d\n%s", shown.status, shown.body)
		}
		for range 3 {
			again := dev.get(created.location)
			wantPage(t, again, http.StatusGone, "shown already", "https://hooks.example.com/in")
			if strings.Contains(again.body, "whsec_") {
				t.Fatalf("reloaded, the page shows a secret: %s", again.body)
			}
		}
		if n := len(dev.endpoints(t, rental.ModeTest)); n != 1 {
			t.Fatalf("%d endpoints after three reloads", n)
		}

		ep := dev.endpoints(t, rental.ModeTest)[0]
		rotated := dev.post(dev.hooks+"/"+ep.ID+"/rotate", url.Values{})
		other := newBrowser(t, hs.URL, nil)
		signIn(t, other, "dev@example.com")
		u, _ := url.Parse(hs.URL)
		other.c.Jar.SetCookies(u, rotated.cookies)
		wantPage(t, other.get(rotated.location), http.StatusGone, "shown already")
		page := madeSecret(t, dev.browser, rotated)
		n := secretShown.FindStringSubmatch(page.body)
		wantPage(t, page, http.StatusOK, "New signing secret", "keeps signing beside the new one until 2026-11-23 10:00")
		if n == nil || n[1] == m[1] {
			t.Fatalf("the rotated secret %v, the first %s", n, m[1])
		}
		wantPage(t, dev.get(rotated.location), http.StatusGone, "shown already")
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, "whsec_") {
				t.Fatalf("table %s holds a signing secret in clear", table)
			}
		}
	})
}

// What the portal refuses, it refuses with a page that says why and
// changes nothing: another developer's application or endpoint (404, as
// for none), a cross-site form post (403), a URL the guard refuses (400,
// the form keeping what was typed), the plan's endpoint count (403), bad
// values (4xx, never a 500); and a signed-out browser is sent to sign in.
func TestWebhookPortalRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		hs := hookSite(t, e)
		dev := signUpDeveloper(t, hs, e, "dev@example.com")
		other := signUpDeveloper(t, hs, e, "other@example.com")
		created := other.post(other.hooks, url.Values{"url": {"https://theirs.example.com/"}, "enabled_events": {"*"}})
		wantPage(t, madeSecret(t, other.browser, created), http.StatusOK, "whsec_")
		theirs := other.endpoints(t, rental.ModeTest)[0]
		theirPath := other.hooks + "/" + theirs.ID

		// Another developer's application and endpoint are not found,
		// whichever application the path names.
		for _, p := range []string{other.hooks, other.hooks + "/new", theirPath, theirPath + "/deliveries", theirPath + "/delete",
			"/portal/apps/" + other.app.ID + "/webhooks", "/portal/apps/" + other.app.ID + "/sandbox/reset",
			dev.hooks + "/" + theirs.ID, dev.hooks + "/" + theirs.ID + "/deliveries", "/portal/apps/app_nosuchapplication000000/webhooks/test"} {
			wantPage(t, dev.get(p), http.StatusNotFound, "This page does not exist.")
		}
		for _, p := range []string{theirPath, theirPath + "/status", theirPath + "/rotate", theirPath + "/test", theirPath + "/delete",
			dev.hooks + "/" + theirs.ID + "/delete", dev.hooks + "/" + theirs.ID + "/rotate", other.hooks,
			"/portal/apps/" + other.app.ID + "/sandbox/reset"} {
			wantPage(t, dev.post(p, url.Values{"url": {"https://mine.example.com/"}, "enabled_events": {"*"}, "status": {"disabled"}}), http.StatusNotFound)
		}
		after, err := e.DB.Read().GetEndpoint(ctx, other.app.ID, rental.ModeTest, theirs.ID)
		if err != nil || after.URL != theirs.URL || after.Status != rental.EndpointEnabled || !after.UpdatedAt.Equal(theirs.UpdatedAt.Time) {
			t.Fatalf("their endpoint changed: %+v %v", after, err)
		}
		if n := len(other.endpoints(t, rental.ModeTest)); n != 1 {
			t.Fatalf("their application has %d endpoints", n)
		}

		// A cross-site form post is refused before anything runs.
		mine := dev.post(dev.hooks, url.Values{"url": {"https://mine.example.com/"}, "enabled_events": {"*"}})
		wantPage(t, madeSecret(t, dev.browser, mine), http.StatusOK, "whsec_")
		ep := dev.endpoints(t, rental.ModeTest)[0]
		for _, p := range []string{dev.hooks, dev.hooks + "/" + ep.ID + "/delete", dev.hooks + "/" + ep.ID + "/rotate", "/portal/apps/" + dev.app.ID + "/sandbox/reset"} {
			if got := dev.do("POST", p, url.Values{"url": {"https://evil.example.com/"}, "enabled_events": {"*"}}, "https://evil.example"); got.status != http.StatusForbidden {
				t.Fatalf("cross-site post to %s: %d", p, got.status)
			}
		}
		if list := dev.endpoints(t, rental.ModeTest); len(list) != 1 || !list[0].UpdatedAt.Equal(ep.UpdatedAt.Time) {
			t.Fatalf("a cross-site post changed the endpoints: %+v", list)
		}

		// URLs the guard refuses, with its words; the form keeps what was
		// typed.
		for _, c := range []struct{ url, says string }{
			{"http://hooks.example.com/in", "must use https://"},
			{"https://10.1.2.3/in", "not a public internet address"},
			{"https://127.0.0.1:8443/in", "--webhook-allow-loopback"},
			{"https://intranet.corp/in", "private or reserved name"},
			{"hooks.example.com", "absolute https:// URL"},
			// Names are resolved as they are registered.
			{"https://private.example.com/in", "resolves to 10.0.0.5, which is not a public internet address"},
			{"https://loopback.example.com/in", "--webhook-allow-loopback"},
			{"https://nowhere.example.com/in", "nowhere.example.com does not resolve"},
		} {
			p := dev.post(dev.hooks, url.Values{"url": {c.url}, "enabled_events": {"bill.created"}, "description": {"kept <here>"}})
			wantPage(t, p, http.StatusBadRequest, "ใช้ URL นี้ไม่ได้", c.says, `value="`+c.url+`"`, "kept &lt;here&gt;", `value="bill.created" checked`)
			if strings.Contains(p.body, `value="*" checked`) {
				t.Fatalf("the form lost the ticked types")
			}
		}
		edit := dev.post(dev.hooks+"/"+ep.ID, url.Values{"url": {"http://mine.example.com/"}, "enabled_events": {"*"}})
		wantPage(t, edit, http.StatusBadRequest, "must use https://", `value="http://mine.example.com/"`)
		edit = dev.post(dev.hooks+"/"+ep.ID, url.Values{"url": {"https://private.example.com/"}, "enabled_events": {"*"}})
		wantPage(t, edit, http.StatusBadRequest, "resolves to 10.0.0.5", `value="https://private.example.com/"`)
		if got := dev.endpoints(t, rental.ModeTest)[0]; got.URL != "https://mine.example.com/" {
			t.Fatalf("a refused edit changed the URL to %s", got.URL)
		}

		// The free plan's two endpoints (test and live together); the third is refused.
		wantPage(t, madeSecret(t, dev.browser, dev.post(dev.hooks, url.Values{"url": {"https://two.example.com/"}, "enabled_events": {"*"}})), http.StatusOK, "whsec_")
		limit := dev.post(dev.hooks, url.Values{"url": {"https://three.example.com/"}, "enabled_events": {"*"}, "description": {"third"}})
		wantPage(t, limit, http.StatusForbidden, "จำนวน endpoint ครบตามแพ็กเกจแล้ว", "The free plan allows 2 webhook endpoints", "test and live together",
			`value="https://three.example.com/"`, ">third</textarea>")

		// Bad values: 4xx pages, never a 500.
		path := dev.hooks + "/" + ep.ID
		long := strings.Repeat("ก", rental.MaxEndpointDescription+1)
		for _, c := range []struct {
			path   string
			form   url.Values
			status int
		}{
			{dev.hooks, url.Values{"url": {"https://x.example.com/"}, "enabled_events": {"*", "bill.created"}}, http.StatusBadRequest},
			{dev.hooks, url.Values{"url": {"https://x.example.com/"}, "enabled_events": {"bill.paid"}}, http.StatusBadRequest},
			{dev.hooks, url.Values{"url": {"https://x.example.com/"}}, http.StatusBadRequest},
			{dev.hooks, url.Values{"url": {"https://x.example.com/"}, "enabled_events": {"*"}, "description": {long}}, http.StatusBadRequest},
			{dev.hooks, url.Values{"url": {"https://x.example.com/" + strings.Repeat("a", 3000)}, "enabled_events": {"*"}}, http.StatusBadRequest},
			{dev.hooks, url.Values{"url": {strings.Repeat("x", 70_000)}}, http.StatusBadRequest},
			{path, url.Values{"url": {""}, "enabled_events": {"*"}}, http.StatusBadRequest},
			{path + "/status", url.Values{"status": {"paused"}}, http.StatusBadRequest},
			{path + "/deliveries/whdl_nosuchdelivery0000000000/resend", url.Values{}, http.StatusNotFound},
		} {
			p := dev.post(c.path, c.form)
			if p.status != c.status {
				t.Fatalf("POST %s %.200v: %d, want %d: %.1500s", c.path, c.form, p.status, c.status, p.body)
			}
		}
		for _, c := range []struct {
			path   string
			status int
		}{
			{"/portal/apps/" + dev.app.ID + "/webhooks/staging", http.StatusNotFound},
			{path + "/deliveries?older=garbage", http.StatusBadRequest},
			{path + "/deliveries?older=1.we_'%3B--", http.StatusBadRequest},
			{path + "/deliveries?older=99999999999999.whdl_x", http.StatusOK},
		} {
			if p := dev.get(c.path); p.status != c.status {
				t.Fatalf("GET %s: %d, want %d", c.path, p.status, c.status)
			}
		}
		if n := len(dev.endpoints(t, rental.ModeTest)); n != 2 {
			t.Fatalf("%d endpoints after the refusals", n)
		}

		// Signed out, the pages send the browser to sign in first.
		anon := newBrowser(t, hs.URL, nil)
		wantRedirect(t, anon.get(path), "/portal/signin?next=")
		wantRedirect(t, anon.post(path+"/delete", url.Values{}), "/portal/signin")
		if _, err := e.DB.Read().GetEndpoint(ctx, dev.app.ID, rental.ModeTest, ep.ID); err != nil {
			t.Fatal(err)
		}
	})
}

// The pages of the delivery log page through older deliveries.
func TestWebhookDeliveryLogPages(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	ctx := t.Context()
	hs := hookSite(t, e)
	dev := signUpDeveloper(t, hs, e, "dev@example.com")
	wantPage(t, madeSecret(t, dev.browser, dev.post(dev.hooks, url.Values{"url": {"https://hooks.example.com/"}, "enabled_events": {"*"}})), http.StatusOK, "whsec_")
	ep := dev.endpoints(t, rental.ModeTest)[0].ID
	for range 25 {
		wantRedirect(t, dev.post(dev.hooks+"/"+ep+"/test", url.Values{}), dev.hooks)
	}
	first := dev.get(dev.hooks + "/" + ep + "/deliveries")
	older := regexp.MustCompile(`href="([^"]*/deliveries\?older=[^"]+)"`).FindStringSubmatch(first.body)
	if first.status != http.StatusOK || strings.Count(first.body, `class="card delivery"`) != 20 || older == nil {
		t.Fatalf("first page: %d, %d deliveries, older %v", first.status, strings.Count(first.body, `class="card delivery"`), older)
	}
	second := dev.get(strings.ReplaceAll(older[1], "&amp;", "&"))
	if second.status != http.StatusOK || strings.Count(second.body, `class="card delivery"`) != 5 || strings.Contains(second.body, "?older=") {
		t.Fatalf("second page: %d, %d deliveries", second.status, strings.Count(second.body, `class="card delivery"`))
	}
	all, _, err := e.DB.Read().ListDeliveries(ctx, dev.app.ID, rental.ModeTest, ep, store.DeliveryFilter{}, store.Page{Limit: 100})
	if err != nil || len(all) != 25 {
		t.Fatalf("%d deliveries: %v", len(all), err)
	}
	for _, d := range all {
		if n := strings.Count(first.body+second.body, "<dd><code>"+d.ID+"</code></dd>"); n != 1 {
			t.Fatalf("delivery %s is shown %d times", d.ID, n)
		}
	}
}

// The webhook pages in Chromium on a phone (390×844) and a laptop
// (1280×800): the list, the page that shows a new endpoint's secret and
// the delivery log render with the stylesheet under the strict CSP and
// nothing is wider than the screen. Screenshots go to the test's artifact
// directory (go test -artifacts keeps them).
func TestWebhookPagesInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	e := storetest.SQLite(t)
	hs := hookSite(t, e)

	ctx := browse(t, path, 1280, 800, 90*time.Second)

	// The developer signs up in the browser; the application is made as
	// the portal's application pages make one.
	err := chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/portal/signup"),
		chromedp.SendKeys(`input[name="name"]`, "สมศักดิ์ Somsak"),
		chromedp.SendKeys(`input[name="email"]`, "dev@example.com"),
		chromedp.SendKeys(`input[name="password"]`, "long enough pw"),
		chromedp.Click(`main form button`),
		chromedp.WaitNotPresent(`input[name="password"]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	person, _, err := e.DB.Read().PersonByEmail(t.Context(), rental.PersonDeveloper, "dev@example.com")
	if err != nil {
		t.Fatal(err)
	}
	var app *rental.Application
	err = e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
		app, err = tx.CreateApplication(t.Context(), store.ApplicationSpec{DeveloperID: person.DeveloperID, Name: "บัญชีหอพัก Dorm Accounting",
			Company: "Siam Soft", Scopes: rental.AllScopes})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	hooks := hs.URL + "/portal/apps/" + app.ID + "/webhooks/test"

	// check looks at the page on screen: styled, no wider than the
	// screen, nothing axe-core finds hard to read or use; and keeps its
	// screenshot.
	check := func(name string) {
		t.Helper()
		styled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`getComputedStyle(document.body).backgroundColor === "rgb(243, 245, 248)"`))
		if err != nil || !styled {
			t.Errorf("%s: the stylesheet did not apply (%v)", name, err)
		}
		fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
		if err != nil || !fits {
			wide, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth).slice(0, 5).map(e => e.tagName + "." + e.className).join(", ")`))
			t.Errorf("%s: the page is wider than the screen (%v): %s", name, err, wide)
		}
		width, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`window.innerWidth`))
		if err != nil {
			t.Fatal(err)
		}
		accessible(ctx, t, name, width)
		photograph(ctx, t, name+".png", true)
	}

	for _, screen := range []struct {
		width, height int64
		phone         bool
	}{{390, 844, true}, {1280, 800, false}} {
		size := strconv.FormatInt(screen.width, 10)
		viewport := chromedp.EmulateViewport(screen.width, screen.height)
		if screen.phone {
			viewport = chromedp.EmulateViewport(screen.width, screen.height, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch)
		}
		receiver := "https://hooks.siamsoft.co.th/rentapi/" + size
		if err := chromedp.Do(ctx, viewport, chromedp.Navigate(hooks+"/new"), chromedp.WaitVisible(`input[name="url"]`)); err != nil {
			t.Fatal(err)
		}
		check("webhook-new-" + size)
		err := chromedp.Do(ctx,
			chromedp.SendKeys(`input[name="url"]`, receiver),
			chromedp.Click(`input[value="*"]`),
			chromedp.Click(`input[value="bill.created"]`),
			chromedp.Click(`input[value="bill.overdue"]`),
			chromedp.Click(`input[value="payment.paid"]`),
			chromedp.SendKeys(`textarea[name="description"]`, "ระบบบัญชี · accounting sync"),
			chromedp.Click(`main form button`),
			chromedp.WaitVisible(`.secret`),
		)
		if err != nil {
			t.Fatal(err)
		}
		secret, err := chromedp.Run(ctx, chromedp.Text(`.secret`))
		if err != nil || !secretShown.MatchString(`<p class="secret whsec">`+secret+`</p>`) {
			t.Fatalf("secret on screen %q (%v)", secret, err)
		}
		check("webhook-created-" + size)
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(`#gone`)); err != nil {
			t.Fatalf("the secret's page reloaded: %v", err)
		}
		check("webhook-secret-shown-already-" + size)

		if err := chromedp.Do(ctx, chromedp.Navigate(hooks), chromedp.WaitVisible(`.endpoints`)); err != nil {
			t.Fatal(err)
		}
		check("webhooks-list-" + size)

		// Two test events from the endpoint's page; the first went
		// through three attempts, the second waits for its first.
		var ep string
		for _, e := range func() []rental.WebhookEndpoint {
			list, _, _ := e.DB.Read().ListEndpoints(t.Context(), app.ID, rental.ModeTest, store.Page{Limit: 10})
			return list
		}() {
			if e.URL == receiver {
				ep = e.ID
			}
		}
		for i := range 2 {
			if err := chromedp.Do(ctx, chromedp.Navigate(hooks+"/"+ep), chromedp.WaitVisible(`form[action$="/test"]`)); err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				check("webhook-endpoint-" + size)
				if err := chromedp.Do(ctx, chromedp.Navigate(hooks+"/"+ep+"/delete"), chromedp.WaitVisible(`form[action$="/delete"] button`)); err != nil {
					t.Fatal(err)
				}
				check("webhook-delete-" + size)
				if err := chromedp.Do(ctx, chromedp.Navigate(hooks+"/"+ep), chromedp.WaitVisible(`form[action$="/test"]`)); err != nil {
					t.Fatal(err)
				}
			}
			if err := chromedp.Do(ctx, chromedp.Click(`form[action$="/test"] button`), chromedp.WaitVisible(`.flash`)); err != nil {
				t.Fatal(err)
			}
		}
		ds, _, err := e.DB.Read().ListDeliveries(t.Context(), app.ID, rental.ModeTest, ep, store.DeliveryFilter{}, store.Page{Limit: 10, Asc: true})
		if err != nil || len(ds) != 2 {
			t.Fatalf("deliveries %v %v", ds, err)
		}
		refused, unavailable, ok := "dial tcp 203.0.113.7:443: connect: connection refused", 503, 200
		for i, a := range []rental.Attempt{
			{Error: &refused, DurationMS: 3},
			{StatusCode: &unavailable, DurationMS: 1204, ResponseBody: `{"error":"maintenance","retry_after":60,"message":"ระบบปิดปรับปรุงชั่วคราว"}`},
			{StatusCode: &ok, DurationMS: 87, ResponseBody: "ok"},
		} {
			work, err := e.DB.Read().DeliveryWork(t.Context(), ds[0].ID)
			if err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(rental.RetryGaps[max(i-1, 0)])
			a.Attempt, a.AttemptedAt = i+1, rental.Time{Time: e.Clock.Now()}
			o := store.AttemptOutcome{Attempt: a}
			if !a.Succeeded() {
				next := e.Clock.Now().Add(rental.RetryGaps[i])
				o.Next = &next
			}
			if err := e.DB.InTx(t.Context(), func(tx *store.Tx) error { _, err := tx.RecordAttempt(t.Context(), work, o); return err }); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(hooks+"/"+ep+"/deliveries"), chromedp.WaitVisible(`.delivery`)); err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(ctx, chromedp.Text(`main`))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"webhook.test", ds[0].ID, ds[0].EventID, "503", "1204 ms", "connection refused", "maintenance", "Succeeded", "Pending", "Resend"} {
			if !strings.Contains(text, want) {
				t.Errorf("the delivery log does not say %q:\n%s", want, text)
			}
		}
		check("webhook-deliveries-" + size)
	}

	// A third endpoint is over the free plan's two: the form says so on
	// the phone, keeping what was typed.
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(hooks+"/new"),
		chromedp.SendKeys(`input[name="url"]`, "https://hooks.siamsoft.co.th/rentapi/third"),
		chromedp.Click(`main form button`),
		chromedp.WaitVisible(`.error`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if typed, err := chromedp.Run(ctx, chromedp.Value(`input[name="url"]`)); err != nil || typed != "https://hooks.siamsoft.co.th/rentapi/third" {
		t.Errorf("the refused form holds %q (%v)", typed, err)
	}
	check("webhook-refused-390")
}

// The delivery log shows, and resends, deliveries whose bodies hold a
// payment link's URL, which are stored sealed: a tenant opening the
// sandbox's payment page makes a payment.pending delivery that the portal
// lists and resends with its body as made, and no table holds the link's
// token in clear.
func TestDeliveryLogOfSealedBodies(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		hs := hookSite(t, e)
		dev := signUpDeveloper(t, hs, e, "dev@example.com")
		wantPage(t, madeSecret(t, dev.browser, dev.post(dev.hooks, url.Values{"url": {"https://hooks.example.com/"}, "enabled_events": {"payment.pending"}})), http.StatusOK, "whsec_")
		ep := dev.endpoints(t, rental.ModeTest)[0].ID
		acct := storetest.Fixture{App: dev.app}.Sandbox(t, e.DB)
		var link *rental.PaymentLink
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			bills, _, err := tx.ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 1})
			if err != nil || len(bills) != 1 {
				t.Fatalf("an issued sandbox bill: %v %v", bills, err)
			}
			link, _, err = tx.CreatePaymentLink(ctx, acct, bills[0].ID, rental.NewPaymentPage(hs.URL))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(link.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the payment page: %d", resp.StatusCode)
		}
		ds, _, err := e.DB.Read().ListDeliveries(ctx, dev.app.ID, rental.ModeTest, ep, store.DeliveryFilter{}, store.Page{Limit: 10})
		if err != nil || len(ds) != 1 || !strings.Contains(ds[0].Body, `"payment_url":"`+link.URL+`"`) {
			t.Fatalf("deliveries %+v %v", ds, err)
		}
		path := dev.hooks + "/" + ep
		wantPage(t, dev.get(path+"/deliveries"), http.StatusOK, "payment.pending", ds[0].ID, ds[0].EventID)
		wantRedirect(t, dev.post(path+"/deliveries/"+ds[0].ID+"/resend", url.Values{}), path+"/deliveries?done=resent")
		work, err := e.DB.Read().DeliveryWork(ctx, ds[0].ID)
		if err != nil || work.Generation != 2 || work.Body != ds[0].Body {
			t.Fatalf("resent %+v %v", work, err)
		}
		token := link.URL[strings.LastIndex(link.URL, "/")+1:]
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				t.Errorf("table %s holds the link's token in clear: %.300s", table, row)
			}
		}
	})
}
