package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// apiHeader is one header of GET path with key.
func apiHeader(t *testing.T, base, key, path, name string) (int, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", base+path, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(name)
}

// developerID is the signed-up developer's account.
func developerID(t *testing.T, e storetest.Engine, app string) string {
	t.Helper()
	a, err := e.DB.Read().GetApplication(t.Context(), app)
	if err != nil {
		t.Fatal(err)
	}
	return a.DeveloperID
}

// The plan page: a new developer is on Free; choosing Pro applies at the
// next request on every process (X-RateLimit-Limit, the burst, 20 → 200);
// choosing Developer waits for 00:00 on the 1st (then 60); Enterprise and
// an unknown plan are refused on the page, never a 500.
func TestPortalPlanChange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		other := p.secondProcess()
		b := p.developer("plan@example.com")
		app := newApp(t, b, rental.AllScopes...)
		key := newKey(t, b, app, keyForm("Sandbox", rental.ModeTest, rental.AllScopes...))
		limit := func(base string) string {
			t.Helper()
			e.Clock.Advance(time.Second)
			status, v := apiHeader(t, base, key, "/v1/account", "X-RateLimit-Limit")
			if status != http.StatusOK {
				t.Fatalf("GET /v1/account: %d", status)
			}
			return v
		}
		if pg := b.get("/portal/plan"); pg.status != http.StatusOK || !strings.Contains(pg.body, "Your plan</span>: Free") {
			t.Fatalf("plan page: %d\n%s", pg.status, pg.body)
		}
		if limit(p.base) != "20" || limit(other) != "20" {
			t.Fatal("a new developer is not on Free (burst 20)")
		}
		if pg := b.post("/portal/plan", url.Values{"plan": {"pro"}}); pg.status != http.StatusSeeOther || pg.location != "/portal/plan?done=plan_now" {
			t.Fatalf("upgrade: %d %s", pg.status, pg.location)
		}
		if limit(p.base) != "200" || limit(other) != "200" {
			t.Fatal("the upgrade to Pro is not seen at the next request")
		}
		if pg := b.post("/portal/plan", url.Values{"plan": {"developer"}}); pg.location != "/portal/plan?done=plan_later" {
			t.Fatalf("downgrade: %d %s", pg.status, pg.location)
		}
		if pg := b.get("/portal/plan?done=plan_later"); !strings.Contains(pg.body, "Changes to Developer at 2026-12-01 00:00") {
			t.Fatalf("the plan page does not show the change to come:\n%s", pg.body)
		}
		for _, c := range []struct {
			plan   string
			status int
			says   string
		}{
			{"enterprise", http.StatusForbidden, "agreed with the service"},
			{"gold", http.StatusBadRequest, "Unknown developer plan"},
			{"", http.StatusBadRequest, "Unknown developer plan"},
		} {
			if pg := b.post("/portal/plan", url.Values{"plan": {c.plan}}); pg.status != c.status || !strings.Contains(pg.body, c.says) {
				t.Errorf("plan %q: %d, want %d saying %q", c.plan, pg.status, c.status, c.says)
			}
		}
		if limit(p.base) != "200" {
			t.Fatal("the downgrade took effect before the 1st")
		}
		e.Clock.Advance(time.Date(2026, 12, 1, 0, 0, 0, 0, rental.Bangkok).Sub(e.Clock.Now()))
		if limit(p.base) != "60" || limit(other) != "60" {
			t.Fatal("the downgrade to Developer (burst 60) is not in effect on the 1st")
		}
	})
}

var (
	usedFigure      = regexp.MustCompile(`id="quota-used"><strong>([0-9,]+)</strong> / ([0-9,]+)`)
	remainingFigure = regexp.MustCompile(`id="quota-remaining"><strong>([0-9,]+)</strong>`)
)

// liveSetup links a real landlord to the application through the portal
// and makes a live key bound to it.
func liveSetup(t *testing.T, p *portal, b *browser, app string) string {
	t.Helper()
	var ll string
	p.e.DB.InTx(t.Context(), func(tx *store.Tx) (err error) {
		ll, err = tx.CreateLandlord(t.Context(), "หอพักบ้านสุข", rental.LandlordStandard)
		return err
	})
	state := startLink(t, p, b, app)
	code := approve(t, p.e, app, state, ll, rental.AllScopes)
	if pg := b.get(callback(code, state)); pg.status != http.StatusOK {
		t.Fatalf("link: %d", pg.status)
	}
	accounts, _ := p.e.DB.Read().LiveAccounts(t.Context(), app)
	f := keyForm("Live", rental.ModeLive, rental.AllScopes...)
	f.Set("account", accounts[0].ID)
	return newKey(t, b, app, f)
}

// The usage page shows the numbers the quota enforces: after live requests
// (and test-mode and refused ones, which do not count), its used and
// remaining are the quota headers' figures; months are chosen by ?month=,
// and a bad month is a clear page.
func TestUsagePageMatchesQuota(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("usage@example.com")
		app := newApp(t, b, rental.AllScopes...)
		live := liveSetup(t, p, b, app)
		test := newKey(t, b, app, keyForm("Sandbox", rental.ModeTest, rental.AllScopes...))
		var remaining string
		for range 7 {
			e.Clock.Advance(200 * time.Millisecond)
			var status int
			status, remaining = apiHeader(t, p.base, live, "/v1/properties", "X-Quota-Remaining")
			if status != http.StatusOK {
				t.Fatalf("live request: %d", status)
			}
			apiHeader(t, p.base, test, "/v1/properties", "X-Quota-Remaining")
		}
		apiHeader(t, p.base, "svc_live_"+strings.Repeat("Q", 40), "/v1/properties", "") // 401
		if remaining != "993" {
			t.Fatalf("X-Quota-Remaining %s after 7 live requests", remaining)
		}
		time.Sleep(1500 * time.Millisecond) // the meter writes within a second
		pg := b.get("/portal/usage")
		used, left := usedFigure.FindStringSubmatch(pg.body), remainingFigure.FindStringSubmatch(pg.body)
		if pg.status != http.StatusOK || used == nil || left == nil {
			t.Fatalf("usage page: %d\n%s", pg.status, pg.body)
		}
		if used[1] != "7" || used[2] != "1,000" || left[1] != remaining {
			t.Fatalf("usage page says %s used of %s, %s remaining; the quota says 7 and %s", used[1], used[2], left[1], remaining)
		}
		if !strings.Contains(pg.body, "<td>2026-11-22</td><td class=\"num\">7</td>") || !strings.Contains(pg.body, "<svg class=\"chart\"") ||
			!strings.Contains(pg.body, "Dorm Books") {
			t.Fatalf("the usage page lacks the day, the chart or the application:\n%s", pg.body)
		}
		if pg := b.get("/portal/usage?month=2026-10"); pg.status != http.StatusOK || !strings.Contains(pg.body, "No billable requests") {
			t.Fatalf("last month: %d", pg.status)
		}
		for _, bad := range []string{"2026-13", "last", "2027-01", "2026-1"} {
			if pg := b.get("/portal/usage?month=" + url.QueryEscape(bad)); pg.status != http.StatusBadRequest {
				t.Errorf("month %q: %d, want 400", bad, pg.status)
			}
		}
	})
}

// makeInvoice puts the developer on Pro with November's requests past its
// quota, and closes November on 1 December: 1,990 THB and 13 started
// thousands at 6 THB.
func makeInvoice(t *testing.T, e storetest.Engine, dev, app string) *rental.Invoice {
	t.Helper()
	ctx := t.Context()
	if err := e.DB.InTx(ctx, func(tx *store.Tx) error { _, err := tx.ChangeDeveloperPlan(ctx, dev, rental.PlanPro); return err }); err != nil {
		t.Fatal(err)
	}
	counts := map[store.UsageCell]int64{}
	for d := 1; d <= 22; d++ {
		counts[store.UsageCell{Application: app, Day: time.Date(2026, 11, d, 0, 0, 0, 0, rental.Bangkok).Format(time.DateOnly)}] = int64(18_000 + 900*(d%7))
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	counts[store.UsageCell{Application: app, Day: "2026-11-22"}] += 512_345 - total
	if _, err := e.DB.AddUsage(ctx, store.UsagePeriod{Developer: dev, Mode: rental.ModeLive, From: "2026-11-01", To: "2026-11-30"}, counts); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(time.Date(2026, 12, 1, 0, 0, 5, 0, rental.Bangkok).Sub(e.Clock.Now()))
	var inv *rental.Invoice
	if err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) { inv, err = tx.CloseMonth(ctx, dev, "2026-11"); return err }); err != nil || inv == nil {
		t.Fatalf("invoice %v (%v)", inv, err)
	}
	return inv
}

// The invoices: listed in the portal, each a printable tax-invoice page
// with the seller, the buyer, the lines, the VAT included and the total;
// another developer's, or a number of no invoice, is not found.
func TestPortalInvoices(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("books@example.com")
		app := newApp(t, b, rental.AllScopes...)
		inv := makeInvoice(t, e, developerID(t, e, app), app)
		signIn(t, b, "books@example.com")
		list := b.get("/portal/invoices")
		if list.status != http.StatusOK || !strings.Contains(list.body, `href="/portal/invoices/`+inv.Number+`"`) || !strings.Contains(list.body, "2,068.00 THB") {
			t.Fatalf("invoices: %d\n%s", list.status, list.body)
		}
		pg := b.get("/portal/invoices/" + inv.Number)
		for _, want := range []string{inv.Number, "Invoice / Tax invoice", "Seller", "rentapi", "books@example.com", "Baan Soft Co., Ltd.",
			"Pro plan, 2026-11", "1,990.00", "78.00", "VAT 7%, included", "135.29", "1,932.71", `id="invoice-total">2,068.00`, "2026-12-15"} {
			if !strings.Contains(pg.body, want) {
				t.Errorf("the invoice page lacks %q", want)
			}
		}
		stranger := p.developer("other@example.com")
		for _, path := range []string{"/portal/invoices/" + inv.Number, "/portal/invoices/INV-2026-999999", "/portal/invoices/nothing"} {
			if pg := stranger.get(path); pg.status != http.StatusNotFound {
				t.Errorf("%s for another developer: %d, want 404", path, pg.status)
			}
		}
	})
}

// The usage, plan and invoice pages in Chromium on a phone and a laptop:
// styled under the strict CSP (the chart is inline SVG, no script), nothing
// wider than the window. Screenshots go to the artifact directory.
func TestBillingInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	e := storetest.SQLite(t)
	p := newPortal(t, e)
	b := p.developer("shots@example.com")
	app := newApp(t, b, rental.AllScopes...)
	dev := developerID(t, e, app)
	var second string
	e.DB.InTx(t.Context(), func(tx *store.Tx) error {
		a, err := tx.CreateApplication(t.Context(), store.ApplicationSpec{DeveloperID: dev, Name: "Meter Sync", Company: "Baan Soft Co., Ltd.",
			Scopes: rental.Scopes{rental.ScopeMetersRead}})
		if err == nil {
			second = a.ID
		}
		return err
	})
	inv := makeInvoice(t, e, dev, app)
	// December so far: two applications, a few days.
	counts := map[store.UsageCell]int64{}
	for d := 1; d <= 9; d++ {
		day := time.Date(2026, 12, d, 0, 0, 0, 0, rental.Bangkok).Format(time.DateOnly)
		counts[store.UsageCell{Application: app, Day: day}] = int64(9_000 + 1_700*(d%4))
		if d%2 == 0 {
			counts[store.UsageCell{Application: second, Day: day}] = int64(2_500 + 300*d)
		}
	}
	if _, err := e.DB.AddUsage(t.Context(), store.UsagePeriod{Developer: dev, Mode: rental.ModeLive, From: "2026-12-01", To: "2026-12-31"}, counts); err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(8*24*time.Hour + 10*time.Hour)
	ctx := browse(t, path, 1280, 800, 120*time.Second)
	if err := portalSignIn(ctx, p.base, "shots@example.com", "long enough pw"); err != nil {
		t.Fatal(err)
	}
	for _, pg := range []struct{ name, path, wait string }{
		{"portal-usage", "/portal/usage", `svg.chart`},
		{"portal-usage-last-month", "/portal/usage?month=2026-11", `svg.chart`},
		{"portal-plan", "/portal/plan", `input[name="plan"]`},
		{"portal-invoices", "/portal/invoices", `ul.invoices`},
		{"portal-invoice", "/portal/invoices/" + inv.Number, `#invoice-total`},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(p.base+pg.path), chromedp.WaitVisible(pg.wait)); err != nil {
			t.Fatalf("%s: %v", pg.name, err)
		}
		shoot(ctx, t, pg.name)
	}
}
