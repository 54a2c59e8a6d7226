package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// overflowing lists the elements whose right edge passes the window's,
// and says whether the page scrolls sideways.
const overflowing = `(() => {
	const w = window.innerWidth, out = [];
	if (document.documentElement.scrollWidth > w) out.push("page " + document.documentElement.scrollWidth + " > " + w);
	for (const e of document.querySelectorAll("body *")) {
		const r = e.getBoundingClientRect();
		if (r.width > 0 && r.right > w + 0.5) out.push(e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + " right " + Math.round(r.right));
	}
	return out.slice(0, 10).join("; ");
})()`

// The portal's pages in Chromium, on a phone (390×844) and a desktop
// (1280×800): the developer's applications, the new application form, an
// application with keys of every status and linked accounts, the pages
// that confirm a revocation and a disconnection, and the page that shows a
// new key once. Each renders with the stylesheet under the
// strict CSP, and nothing on it is wider than the window. The screenshots
// go to the test's artifact directory (go test -artifacts keeps them).
func TestPortalInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	e := storetest.SQLite(t)
	p := newPortal(t, e)
	b := p.developer("dev@example.com")
	b.post("/portal/apps/new", url.Values{"name": {"Meter Sync"}, "company": {"บริษัท มิเตอร์ซิงค์ จำกัด"}, "scope": {"meters:read", "meters:write"}})
	e.Clock.Advance(time.Minute)
	app := newApp(t, b, rental.AllScopes...)
	key := newKey(t, b, app, keyForm("Sandbox key", rental.ModeTest, rental.AllScopes...))
	callAPI(t, p.base, key, "GET", "/v1/account", "")
	e.Clock.Advance(time.Minute)
	newKey(t, b, app, withExpiry(keyForm("Nightly job", rental.ModeTest, rental.ScopeBillsRead), "2026-11-22"))
	var somchai, malee string
	e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
		if somchai, err = tx.CreateLandlord(t.Context(), "หอพักบ้านสุข (Khun Somchai)", rental.LandlordStandard); err != nil {
			return err
		}
		malee, err = tx.CreateLandlord(t.Context(), "Malee Apartment", rental.LandlordPro)
		return err
	})
	for _, ll := range []string{somchai, malee} {
		e.Clock.Advance(time.Minute)
		state := startLink(t, p, b, app)
		code := approve(t, e, app, state, ll, rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeBillsRead, rental.ScopeBillsWrite})
		if pg := b.get(callback(code, state)); pg.status != http.StatusOK {
			t.Fatalf("link: %d", pg.status)
		}
	}
	accounts, _ := e.DB.Read().LiveAccounts(t.Context(), app)
	b.post("/portal/apps/"+app+"/accounts/"+accounts[1].ID+"/disconnect", url.Values{}) // Malee Apartment, linked second
	bound := keyForm("Production, Khun Somchai", rental.ModeLive, rental.ScopePropertiesRead, rental.ScopeBillsRead)
	bound.Set("account", accounts[0].ID)
	newKey(t, b, app, bound)
	e.Clock.Advance(time.Minute)
	newKey(t, b, app, keyForm("Old laptop", rental.ModeTest, rental.ScopePropertiesRead))
	// Revoke "Old laptop" and rotate "Sandbox key".
	body := b.get("/portal/apps/" + app).body
	b.post("/portal/apps/"+app+"/keys/"+usableKeyNamed(t, body, "Old laptop")+"/revoke", url.Values{})
	b.post("/portal/apps/"+app+"/keys/"+usableKeyNamed(t, body, "Sandbox key")+"/rotate", url.Values{})

	// Requests for the Requests page (one refused), and events for the
	// Events page: a property, and a bill notice as the send job records it.
	callAPI(t, p.base, key, "GET", "/v1/bills/bill_doesnotexist", "")
	callAPI(t, p.base, key, "POST", "/v1/properties", "", `{"name":"Baan Suk Dormitory","electricity_rate":800,"water_rate":1800}`)
	var notification struct{ ID string }
	for bill, err := range sampleBills(t, e, appOf(t, e, app)) {
		if err != nil {
			t.Fatal(err)
		}
		if a := callAPI(t, p.base, key, "POST", "/v1/notifications", "", `{"type":"new_bill","bill_id":"`+bill.ID+`"}`); a.status == http.StatusAccepted {
			json.Unmarshal(a.data, &notification)
			break
		}
	}
	e.DB.InTx(t.Context(), func(tx *store.Tx) error {
		acct, err := tx.GetAccount(t.Context(), app, appOf(t, e, app).SandboxAccountID)
		if err != nil {
			return err
		}
		return tx.RecordEvent(t.Context(), acct, "notification.sent", map[string]string{"id": notification.ID, "object": "notification"})
	})
	for deadline := time.Now().Add(15 * time.Second); !strings.Contains(b.get("/portal/apps/"+app+"/requests").body, "POST /v1/notifications"); {
		if time.Now().After(deadline) {
			t.Fatal("the request log did not show the requests in 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}

	ctx := browse(t, path, 1280, 800, 90*time.Second)

	if err := portalSignIn(ctx, p.base, "dev@example.com", "long enough pw"); err != nil {
		t.Fatal(err)
	}
	check := func(name string, width, height int64) {
		t.Helper()
		styled, err := stylesheetApplied(ctx)
		if err != nil || !styled {
			t.Errorf("%s: the stylesheet did not apply (%v)", name, err)
		}
		over, err := chromedp.Run(ctx, chromedp.Evaluate[string](overflowing))
		if err != nil || over != "" {
			t.Errorf("%s at %d px: wider than the window: %s (%v)", name, width, over, err)
		}
		accessible(ctx, t, name, width)
		photograph(ctx, t, fmt.Sprintf("portal-%s-%dx%d.png", name, width, height), true)
	}
	for _, size := range [][2]int64{{390, 844}, {1280, 800}} {
		w, h := size[0], size[1]
		view := chromedp.EmulateViewport(w, h)
		if w < 500 {
			view = chromedp.EmulateViewport(w, h, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch)
		}
		pages := []struct{ name, path, wait string }{
			{"home", "/portal", `.list`},
			{"new-app", "/portal/apps/new", `textarea[name="redirect_uris"]`},
			{"app", "/portal/apps/" + app, `#settings`},
			{"revoke", "/portal/apps/" + app + "/keys/" + usableKeyNamed(t, b.get("/portal/apps/"+app).body, "Nightly job") + "/revoke", `button.danger`},
			{"disconnect", "/portal/apps/" + app + "/accounts/" + accounts[0].ID + "/disconnect", `button.danger`},
			{"requests", "/portal/apps/" + app + "/requests", `table.requests`},
			{"events", "/portal/apps/" + app + "/events/test", `.chat-preview`},
			{"new-key", "/portal/apps/" + app + "/keys/new", `input[name="expires"]`}, // last: the key made below is made on it
		}
		for _, pg := range pages {
			if err := chromedp.Do(ctx, view, chromedp.Navigate(p.base+pg.path), chromedp.WaitVisible(pg.wait)); err != nil {
				t.Fatalf("%s: %v", pg.name, err)
			}
			check(pg.name, w, h)
		}
		// The key made in the browser is shown once, and works.
		err := chromedp.Do(ctx,
			chromedp.SetValue(`input[name="name"]`, "Made in Chromium"),
			chromedp.Click(`main form button`),
			chromedp.WaitVisible(`#secret`),
		)
		if err != nil {
			t.Fatal(err)
		}
		check("key-created", w, h)
		secret, err := chromedp.Run(ctx, chromedp.Text(`#secret`))
		if err != nil || !strings.HasPrefix(secret, rental.KeyPrefixTest) {
			t.Fatalf("the key on screen: %q (%v)", secret, err)
		}
		wantAPI(t, callAPI(t, p.base, strings.TrimSpace(secret), "GET", "/v1/account", ""), http.StatusOK, "")
	}
}

// appOf reads an application from the store.
func appOf(t *testing.T, e storetest.Engine, id string) *rental.Application {
	t.Helper()
	a, err := e.DB.Read().GetApplication(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// portalSignIn signs the browser in to the portal at base.
func portalSignIn(ctx context.Context, base, email, password string) error {
	return chromedp.Do(ctx,
		chromedp.Navigate(base+"/portal/signin"),
		chromedp.SetValue(`input[name="email"]`, email),
		chromedp.SetValue(`input[name="password"]`, password),
		chromedp.Click(`main button`),
		chromedp.WaitVisible(`body.wide`),
	)
}
