package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// A landlord follows an application's connect link in Chromium: signed
// out, to sign-in, on to sign-up and back to the link; the consent page;
// Approve, which the page's policy lets the browser follow to the
// application's own server, which receives account_id and the state. Then
// the application asks for one more scope, and the landlord approves again
// on a page marking it new. Screenshots of /app, that consent page (the
// window at its top and its end) and a refused link, on a phone (390×844)
// and a laptop (1280×800), go to the test's artifact directory; nothing on
// them is wider than the window.
func TestConnectInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	redirect, back := clientApp(t, "Baan Books", "Back at the application")
	env := newConnectEnv(t, storetest.SQLite(t), rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeBillsRead}, redirect)

	ctx := browse(t, path, 390, 844, 90*time.Second)
	phone := chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch)

	const state = "chromium-state-0123456789"
	link := env.hs.URL + env.connectPath(redirect, state)
	if err := chromedp.Do(ctx, phone, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`form[action="/app/signin"]`))); err != nil {
		t.Fatalf("the link, signed out: %v", err)
	}
	accessibleAtBothSizes(ctx, t, "landlord-signin")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`a[href^="/app/signup"]`)), chromedp.WaitVisible(chromedp.CSS(`input[name="name"]`))); err != nil {
		t.Fatalf("to sign-up: %v", err)
	}
	accessibleAtBothSizes(ctx, t, "landlord-signup")
	err := chromedp.Do(ctx,
		phone,
		chromedp.SendKeys(chromedp.CSS(`input[name="name"]`), "หอพักบ้านสุข Baan Suk"),
		chromedp.SendKeys(chromedp.CSS(`input[name="email"]`), "baansuk@example.com"),
		chromedp.SendKeys(chromedp.CSS(`input[name="password"]`), "long enough pw"),
		chromedp.Click(chromedp.CSS(`form[action="/app/signup"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`button[value="approve"]`)),
	)
	if err != nil {
		t.Fatalf("sign-up to the consent page: %v", err)
	}
	at, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || at != link {
		t.Fatalf("after sign-up the browser is at %q, not the link (%v)", at, err)
	}
	accessibleAtBothSizes(ctx, t, "consent-first")
	acctID := approveInBrowser(ctx, t, back, redirect, state)

	// One more scope: the page marks it new; approving keeps the account.
	env.setScopes(rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeBillsRead, rental.ScopePaymentsRead})
	const second = "chromium-state-second-42"
	if err := chromedp.Do(ctx, chromedp.Navigate(env.hs.URL+env.connectPath(redirect, second)), chromedp.WaitVisible(chromedp.CSS(`.tag.new`))); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`li.new`)))
	if err != nil || !strings.Contains(text, "See tenants' QR payments") {
		t.Fatalf("the new scope reads %q (%v)", text, err)
	}
	shootWindow(ctx, t, "consent-new-scope")
	if again := approveInBrowser(ctx, t, back, redirect, second); again != acctID {
		t.Fatalf("approved again as %s, was %s", again, acctID)
	}
	if a := env.account(acctID); !a.Granted.Has(rental.ScopePaymentsRead) {
		t.Fatalf("grant %v", a.Granted)
	}

	// In /app the landlord moves to the standard plan and sets the
	// PromptPay receiver; the application adds properties and rooms.
	err = chromedp.Do(ctx,
		chromedp.Navigate(env.hs.URL+"/app"),
		chromedp.Click(chromedp.CSS(`input[name="plan"][value="standard"]`)),
		chromedp.Click(chromedp.CSS(`#plan button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	accessibleAtBothSizes(ctx, t, "app-plan-changed")
	err = chromedp.Do(ctx,
		chromedp.Navigate(env.hs.URL+"/app"),
		chromedp.SetValue(chromedp.CSS(`select[name="kind"]`), "mobile"),
		chromedp.SendKeys(chromedp.CSS(`input[name="id"]`), "081-234-5678"),
		chromedp.SendKeys(chromedp.CSS(`#promptpay input[name="name"]`), "สมชาย ใจดี"),
		chromedp.Click(chromedp.CSS(`#promptpay button`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	)
	if err != nil {
		t.Fatalf("plan and receiver: %v", err)
	}
	if at, err := chromedp.Run(ctx, chromedp.Location()); err != nil || at != env.hs.URL+"/app?done=promptpay" {
		t.Fatalf("after saving the receiver the browser is at %q (%v)", at, err)
	}
	acct := env.account(acctID)
	if acct.Plan != rental.LandlordStandard || !acct.QRPayments {
		t.Fatalf("after choosing standard: %+v", acct)
	}
	env.addProperty(acct, "หอพักบ้านสุข 1 Baan Suk 1", 12)
	env.addProperty(acct, "หอพักบ้านสุข 2 Baan Suk 2", 8)
	if err := chromedp.Do(ctx, chromedp.Navigate(env.hs.URL+"/app"), chromedp.WaitVisible(chromedp.CSS(`#connections`))); err != nil {
		t.Fatal(err)
	}
	text, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	for _, want := range []string{"2 / 10", "20 / 300", "0812345678", "Baan Books"} {
		if err != nil || !strings.Contains(text, want) {
			t.Errorf("/app does not say %q (%v)", want, err)
		}
	}
	shoot(ctx, t, "app")

	bad := env.hs.URL + env.connectPath(redirect+"/", state)
	if err := chromedp.Do(ctx, chromedp.Navigate(bad), chromedp.WaitVisible(chromedp.CSS(`main .card`))); err != nil {
		t.Fatal(err)
	}
	if at, err := chromedp.Run(ctx, chromedp.Location()); err != nil || at != bad {
		t.Fatalf("a refused link went to %q (%v)", at, err)
	}
	shoot(ctx, t, "connect-error")
	select {
	case q := <-back:
		t.Fatalf("the application heard from a refused link: %v", q)
	default:
	}
}

// approveInBrowser presses Approve on the consent page shown and returns
// the account ID the application's server received with the state.
func approveInBrowser(ctx context.Context, t *testing.T, back chan url.Values, redirect, state string) string {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[value="approve"]`)), chromedp.WaitVisible(chromedp.CSS(`#back`))); err != nil {
		t.Fatalf("approve: %v", err)
	}
	var q url.Values
	select {
	case q = <-back:
	case <-ctx.Done():
		t.Fatal("the application's server was never reached")
	}
	at, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasPrefix(at, redirect+"?") || q.Get("state") != state || !strings.HasPrefix(q.Get("account_id"), "acct_") || len(q) != 2 {
		t.Fatalf("back at %q with %v (%v)", at, q, err)
	}
	return q.Get("account_id")
}

// shoot saves screenshots of the page on a phone and on a laptop, and
// fails the test where anything is wider than the window.
func shoot(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	for _, size := range screens {
		fitScreen(ctx, t, name, size)
		photograph(ctx, t, fmt.Sprintf("%s-%dx%d.png", name, size.w, size.h), true)
	}
}

// shootWindow checks the page on a phone and on a laptop as shoot does,
// and photographs the window (what the screen shows, a bar that stays at
// the bottom of the screen where it stays) at the top of the page and at
// its end.
func shootWindow(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	for _, size := range screens {
		fitScreen(ctx, t, name, size)
		for _, place := range []string{"top", "end"} {
			if !photosKept() {
				break
			}
			scroll := `window.scrollTo(0, 0); true`
			if place == "end" {
				scroll = `window.scrollTo(0, document.documentElement.scrollHeight); true`
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](scroll)); err != nil {
				t.Fatal(err)
			}
			photograph(ctx, t, fmt.Sprintf("%s-%s-%dx%d.png", name, place, size.w, size.h), false)
		}
	}
}

// stylesheetApplied reports whether the page's stylesheet applies, waiting
// up to 10 s for it to load: on a busy machine the page can be there before
// its stylesheet is.
func stylesheetApplied(ctx context.Context) (bool, error) {
	for range 100 {
		styled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`getComputedStyle(document.body).backgroundColor === "rgb(243, 245, 248)"`))
		if err != nil || styled {
			return styled, err
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false, nil
}

// screen is a window pages are looked at in.
type screen struct {
	w, h   int64
	mobile bool
}

// screens are a phone's and a laptop's.
var screens = []screen{{390, 844, true}, {1280, 800, false}}

// fitScreen sets the window to the screen, and fails the test where
// anything is wider than it, the stylesheet did not apply, or axe-core
// finds the page hard to read or to use (accessible).
func fitScreen(ctx context.Context, t *testing.T, name string, size screen) {
	t.Helper()
	viewport := chromedp.EmulateViewport(size.w, size.h)
	if size.mobile {
		viewport = chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	if err := chromedp.Do(ctx, viewport, chromedp.Sleep(100*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	wide, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const w = document.documentElement.clientWidth, out = [];
		if (document.documentElement.scrollWidth > w) out.push("the page (" + document.documentElement.scrollWidth + "px)");
		for (const e of document.querySelectorAll("body *")) {
			if (e.closest("details:not([open])") && e.tagName !== "SUMMARY" && e.tagName !== "DETAILS") continue;
			const r = e.getBoundingClientRect();
			if (r.width > 0 && (r.right > w + 0.5 || r.left < -0.5)) out.push(e.tagName.toLowerCase() + (e.className ? "." + e.className : "") + (e.id ? "#" + e.id : "") + " " + Math.round(r.left) + "-" + Math.round(r.right) + "px");
			if (out.length > 20) break;
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if len(wide) > 0 {
		t.Errorf("%s at %d px: wider than the window: %v", name, size.w, wide)
	}
	styled, err := stylesheetApplied(ctx)
	if err != nil || !styled {
		t.Errorf("%s: the stylesheet did not apply (%v)", name, err)
	}
	accessible(ctx, t, name, size.w)
}

// An application asking for every scope, on a phone: the consent page
// groups them by resource with how far each goes, keeps every scope's own
// words in Thai and English, and the decision sits at the bottom of the
// screen from the first look to the end of the page, where the thumb is.
// Approve works from there. Screenshots of the screen at the top and at
// the end of the page, on a phone and a laptop, go to the artifacts.
func TestConsentOnAPhoneInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	redirect, back := clientApp(t, "Baan Books", "Back at the application")
	env := newConnectEnv(t, storetest.SQLite(t), rental.AllScopes, redirect)
	ctx := browse(t, path, 390, 844, 90*time.Second)
	phone := chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateTouch)
	const state = "every-scope-state-42"
	err := chromedp.Do(ctx,
		phone,
		chromedp.Navigate(env.hs.URL+"/app/signup"),
		chromedp.SendKeys(`input[name="name"]`, "หอพักบ้านสุข Baan Suk"),
		chromedp.SendKeys(`input[name="email"]`, "baansuk@example.com"),
		chromedp.SendKeys(`input[name="password"]`, "long enough pw"),
		chromedp.Click(`form[action="/app/signup"] button`),
		chromedp.WaitVisible(`#connections`),
		chromedp.Navigate(env.hs.URL+env.connectPath(redirect, state)),
		chromedp.WaitVisible(`button[value="approve"]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(`main`))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range rental.AllScopes {
		th, en := web.ScopeText(sc)
		if !strings.Contains(text, th) || !strings.Contains(text, en) {
			t.Errorf("the page leaves out what %s allows: %q / %q", sc, th, en)
		}
	}
	for _, g := range web.GroupScopes(rental.AllScopes) {
		if !strings.Contains(text, g.TH) || !strings.Contains(text, g.EN) {
			t.Errorf("no heading for %s", g.Resource)
		}
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".grants > li").length`)); err != nil || n != 8 {
		t.Errorf("%d groups, want 8 (%v)", n, err)
	}
	// thumb reports where Approve is on the screen: its top and bottom,
	// and the screen's height.
	thumb := func(where string) {
		t.Helper()
		at, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(() => {
			const r = document.querySelector('button[value="approve"]').getBoundingClientRect();
			const d = document.querySelector('button[value="deny"]').getBoundingClientRect();
			return [r.top, r.bottom, d.bottom, window.innerHeight];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		top, bottom, deny, screen := at[0], at[1], at[2], at[3]
		if top < screen*2/3 || bottom > screen || deny > screen {
			t.Errorf("%s: Approve is at %.0f-%.0f px of a %.0f px screen, not at its bottom (Deny ends at %.0f)", where, top, bottom, screen, deny)
		}
	}
	thumb("at the top of the page")
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.scrollTo(0, document.body.scrollHeight / 2); true`)); err != nil {
		t.Fatal(err)
	}
	thumb("half way down")
	shootWindow(ctx, t, "consent")
	if err := chromedp.Do(ctx, phone); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](`window.scrollTo(0, 0); true`)); err != nil {
		t.Fatal(err)
	}
	thumb("on the phone again")
	approveInBrowser(ctx, t, back, redirect, state)
}

// clientApp is an application's site for the browser tests: a page named
// title that says text, at the redirect URI it returns, each return's query
// passed on to back (room for four).
func clientApp(t *testing.T, title, text string) (redirect string, back chan url.Values) {
	back = make(chan url.Values, 4)
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/back" {
			back <- r.URL.Query()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><p id="back">%s</p>`, title, text)
	}))
	t.Cleanup(client.Close)
	return client.URL + "/back", back
}
