package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// A landlord follows an application's connect link in Chromium: signed
// out, to sign-in, on to sign-up and back to the link; the consent page;
// Approve, which the page's policy lets the browser follow to the
// application's own server, which receives account_id and the state. Then
// the application asks for one more scope, and the landlord approves again
// on a page marking it new. Screenshots of /app, that consent page and a
// refused link, on a phone (390×844) and a laptop (1280×800), go to the
// test's artifact directory; nothing on them is wider than the window.
func TestConnectInChromium(t *testing.T) {
	path := chromium(t)
	back := make(chan url.Values, 4)
	client := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/back" {
			back <- r.URL.Query()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Baan Books</title><p id="back">Back at the application</p>`)
	}))
	t.Cleanup(client.Close)
	redirect := client.URL + "/back"
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
	shoot(ctx, t, "consent")
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
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.ArtifactDir(), fmt.Sprintf("%s-%dx%d.png", name, size.w, size.h))
		if err := os.WriteFile(out, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", out)
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
