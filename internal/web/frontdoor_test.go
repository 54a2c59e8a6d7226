package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/store/storetest"
)

// The whole front door in a real Chromium: a developer signs up and creates
// an application whose redirect URI is the developer's own server; a
// landlord follows the application's connect link, signs up, approves, and
// the developer's server receives account_id and the state; the developer
// makes a live key for that account in the portal and it works against the
// API; the landlord disconnects in /app and the same call gets 403
// account_access_revoked; a second approval gives back the same acct_ ID
// and the key works again. The new application comes with a test key,
// shown once (a reload of its page says so). The sign-up, sign-in,
// password and not-found pages are photographed on the way, on a phone and
// a laptop, and axe-core checks every page on the way at both sizes.
func TestFrontDoorInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	redirect, back := clientApp(t, "Dorm Books", "Back at Dorm Books")
	p := newPortal(t, storetest.SQLite(t))

	ctx := browse(t, path, 1280, 800, 120*time.Second)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	location := func() string {
		t.Helper()
		at, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		return at
	}

	// The developer signs up and creates the application.
	run("portal sign-up page", chromedp.Navigate(p.base+"/portal/signup"), chromedp.WaitVisible(`input[name="name"]`))
	shoot(ctx, t, "signup")
	run("developer sign-up",
		chromedp.EmulateViewport(1280, 800),
		chromedp.SendKeys(`input[name="name"]`, "Dorm Books"),
		chromedp.SendKeys(`input[name="email"]`, "dev@dormbooks.example"),
		chromedp.SendKeys(`input[name="password"]`, "a long developer password"),
		chromedp.Click(`form[action="/portal/signup"] button`),
		chromedp.WaitVisible(`a[href="/portal/apps/new"]`),
	)
	accessibleAtBothSizes(ctx, t, "portal-empty")
	run("new application form", chromedp.Navigate(p.base+"/portal/apps/new"), chromedp.WaitVisible(`textarea[name="redirect_uris"]`))
	accessibleAtBothSizes(ctx, t, "new-app")
	run("new application",
		chromedp.SendKeys(`input[name="name"]`, "Dorm Books"),
		chromedp.SendKeys(`input[name="company"]`, "Dorm Books Co., Ltd."),
		chromedp.SetValue(`textarea[name="redirect_uris"]`, redirect),
		chromedp.Click(`form[action="/portal/apps/new"] button`),
		chromedp.WaitVisible(`#secret`),
	)
	// The application comes with a test key, shown once, that works.
	m := regexp.MustCompile(`/portal/apps/(app_[a-z0-9]+)/keys/key_[a-z0-9]+/secret\?done=app_created$`).FindStringSubmatch(location())
	if m == nil {
		t.Fatalf("after creating the application the browser is at %s", location())
	}
	app := m[1]
	testKey, err := chromedp.Run(ctx, chromedp.Text(`#secret`))
	if testKey = strings.TrimSpace(testKey); err != nil || !strings.HasPrefix(testKey, "svc_test_") {
		t.Fatalf("the test key on screen: %q (%v)", testKey, err)
	}
	wantAPI(t, callAPI(t, p.base, testKey, "GET", "/v1/properties", ""), http.StatusOK, "")
	shoot(ctx, t, "app-created")
	run("the new key's page, reloaded", chromedp.Reload(), chromedp.WaitVisible(`#gone`))
	shoot(ctx, t, "key-shown-already")

	// The landlord follows the connect link, signs up and approves.
	connect := func(state string) string {
		return p.base + "/connect/" + app + "?redirect_uri=" + url.QueryEscape(redirect) + "&state=" + state
	}
	run("the connect link, signed out", chromedp.Navigate(connect("front-door-state-1")), chromedp.WaitVisible(`form[action="/app/signin"]`))
	shoot(ctx, t, "signin")
	run("landlord sign-up page",
		chromedp.Click(`a[href^="/app/signup"]`),
		chromedp.WaitVisible(`input[name="name"]`),
	)
	accessibleAtBothSizes(ctx, t, "landlord-signup")
	run("landlord sign-up",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.SendKeys(`input[name="name"]`, "หอพักบ้านสุข Baan Suk"),
		chromedp.SendKeys(`input[name="email"]`, "somchai@baansuk.example"),
		chromedp.SendKeys(`input[name="password"]`, "a long landlord password"),
		chromedp.Click(`form[action="/app/signup"] button`),
		chromedp.WaitVisible(`button[value="approve"]`),
	)
	accessibleAtBothSizes(ctx, t, "consent")
	account := approveInBrowser(ctx, t, back, redirect, "front-door-state-1")

	// The developer makes a live key bound to that account.
	run("live key form",
		chromedp.EmulateViewport(1280, 800),
		chromedp.Navigate(p.base+"/portal/apps/"+app+"/keys/new"),
		chromedp.WaitVisible(`select[name="account"]`),
	)
	accessibleAtBothSizes(ctx, t, "new-live-key")
	run("live key",
		chromedp.SendKeys(`input[name="name"]`, "Production"),
		chromedp.Click(`input[name="mode"][value="live"]`),
		chromedp.SetValue(`select[name="account"]`, account),
		chromedp.Click(`form[action$="/keys"] button`),
		chromedp.WaitVisible(`#secret`),
	)
	key, err := chromedp.Run(ctx, chromedp.Text(`#secret`))
	if key = strings.TrimSpace(key); err != nil || !strings.HasPrefix(key, "svc_live_") {
		t.Fatalf("the live key on screen: %q (%v)", key, err)
	}
	accessibleAtBothSizes(ctx, t, "live-key-created")
	wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/properties", ""), http.StatusOK, "")
	wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/account", account), http.StatusOK, "")

	// The landlord disconnects the application in /app.
	run("the landlord's account", chromedp.Navigate(p.base+"/app"), chromedp.WaitVisible(`#connections`))
	accessibleAtBothSizes(ctx, t, "landlord-app")
	run("disconnect",
		chromedp.Click(`form[action="/app/connections/`+account+`/disconnect"] button`),
		chromedp.WaitVisible(`form[method="post"][action="/app/connections/`+account+`/disconnect"]`),
	)
	shoot(ctx, t, "disconnect")
	run("disconnect confirmed",
		chromedp.Click(`form[method="post"][action="/app/connections/`+account+`/disconnect"] button`),
		chromedp.WaitVisible(`.flash`),
	)
	accessibleAtBothSizes(ctx, t, "landlord-disconnected")
	wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/properties", ""), http.StatusForbidden, "account_access_revoked")

	// Approving again relinks the same account, and the key works again.
	run("relink", chromedp.Navigate(connect("front-door-state-2")), chromedp.WaitVisible(`button[value="approve"]`))
	if again := approveInBrowser(ctx, t, back, redirect, "front-door-state-2"); again != account {
		t.Fatalf("relinked as %s, was %s", again, account)
	}
	wantAPI(t, callAPI(t, p.base, key, "GET", "/v1/properties", ""), http.StatusOK, "")

	// The developer links from the portal: the consent page (the landlord
	// is signed in in this browser) returns to the portal's callback with
	// a code only this session and its state cookie can exchange.
	run("link from the portal",
		chromedp.Navigate(p.base+"/portal/apps/"+app),
		chromedp.Click(`form[action="/portal/apps/`+app+`/link"] button`),
		chromedp.WaitVisible(`button[value="approve"]`),
		chromedp.Click(`button[value="approve"]`),
	)
	for deadline := time.Now().Add(20 * time.Second); !strings.HasPrefix(location(), p.base+"/portal/callback?"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the portal's callback was never reached; at %s", location())
		}
	}
	run("the callback page", chromedp.WaitVisible(`main .card`))
	if at := location(); !strings.HasPrefix(at, p.base+"/portal/callback?code=") {
		t.Fatalf("after approving the portal's link the browser is at %s", at)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(`main`))
	if err != nil || !strings.Contains(text, account) {
		t.Fatalf("the portal's callback page does not name %s:\n%s (%v)", account, text, err)
	}
	shoot(ctx, t, "linked")
	run("the application page", chromedp.Navigate(p.base+"/portal/apps/"+app), chromedp.WaitVisible(`#settings`))
	accessibleAtBothSizes(ctx, t, "portal-app")
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(`main`))
	k := keyIDs.FindStringSubmatch(html)
	if err != nil || k == nil {
		t.Fatalf("no key on the application page (%v)", err)
	}
	for _, pg := range []struct{ name, path, wait string }{
		{"confirm", "/portal/apps/" + app + "/keys/" + k[1] + "/rotate", `main form button`},
		{"webhook-new", "/portal/apps/" + app + "/webhooks/test/new", `input[name="url"]`},
		{"sandbox-reset", "/portal/apps/" + app + "/sandbox/reset", `main form button`},
	} {
		run(pg.name, chromedp.Navigate(p.base+pg.path), chromedp.WaitVisible(pg.wait))
		shoot(ctx, t, pg.name)
	}

	run("password page", chromedp.Navigate(p.base+"/app/password"), chromedp.WaitVisible(`input[name="current"]`))
	shoot(ctx, t, "password")
	run("a page that does not exist", chromedp.Navigate(p.base+"/portal/nothing-here"), chromedp.WaitVisible(`main .card`))
	shoot(ctx, t, "not-found")
}
