package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/api"
	"rentapi/internal/promptpay/promptpaytest"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// BrowserEnv set to "required" makes a missing Chromium a failure (CI
// installs it); otherwise the browser test skips without one.
const BrowserEnv = "RENTAPI_TEST_BROWSER"

// chromium finds the browser to drive, and makes sure axe-core is there
// to check the pages it shows (axeSource).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			axeSource(t)
			return p
		}
	}
	if os.Getenv(BrowserEnv) == "required" {
		t.Fatalf("%s=required but no Chromium is installed", BrowserEnv)
	}
	t.Skipf("no Chromium installed (set %s=required to make this a failure)", BrowserEnv)
	return ""
}

// browse starts a headless Chromium at path with a window of the size,
// for at most timeout; it closes with the test.
func browse(t *testing.T, path string, width, height int, timeout time.Duration) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(width, height))
	alloc, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(alloc)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancel(); cancelBrowser(); cancelAlloc() })
	return ctx
}

// service runs the API and the pages over a fresh database and returns the
// base URL and a sandbox test key.
func service(t *testing.T) (string, string) {
	e := storetest.SQLite(t)
	sec := storetest.Secret(t)
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	base := "http://" + hs.Listener.Addr().String()
	srv, err := api.NewServer(api.Config{DB: e.DB, Secret: sec, PublicURL: base})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: e.DB}, srv)
	hs.Start()
	f := storetest.NewFixture(t, e.DB, rental.PlanPro)
	return base, f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest})
}

// call sends an API request and decodes the data of the answer.
func call(t *testing.T, base, key, method, path string) map[string]any {
	t.Helper()
	r, _ := http.NewRequest(method, base+path, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode >= 300 {
		t.Fatalf("%s %s: %d (%v)", method, path, resp.StatusCode, err)
	}
	var m map[string]any
	if json.Unmarshal(out.Data, &m) != nil {
		var list []map[string]any
		json.Unmarshal(out.Data, &list)
		return list[0]
	}
	return m
}

// A tenant opens the payment link on a phone in Chromium: the page renders
// with its stylesheet under the strict CSP, fits the screen, and shows a QR
// that a scanner reads as the payment's PromptPay payload. The screenshot
// goes to the test's artifact directory (go test -artifacts keeps it).
func TestPaymentPageInChromium(t *testing.T) {
	path := chromium(t)
	base, key := service(t)
	bill := call(t, base, key, "GET", "/v1/bills?status=issued&limit=1")
	link := call(t, base, key, "POST", "/v1/bills/"+bill["id"].(string)+"/payment-link")

	ctx := browse(t, path, 390, 844, 60*time.Second)

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch),
		chromedp.Navigate(link["url"].(string)),
		chromedp.WaitVisible("#qr"),
	)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("qr").complete && document.getElementById("qr").naturalWidth > 0`))
	if err != nil || !loaded {
		t.Fatalf("QR image not loaded (%v)", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("main"))
	if err != nil {
		t.Fatal(err)
	}
	payment := call(t, base, key, "GET", "/v1/payments?bill_id="+bill["id"].(string))
	for _, want := range []string{"สแกนเพื่อจ่ายด้วยพร้อมเพย์", "Scan to pay with PromptPay", "Test mode", "ค่าห้องเดือน", "Total"} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not say %q:\n%s", want, text)
		}
	}
	// The stylesheet applied (the CSP lets 'self' styles in) and nothing
	// is wider than the phone.
	styled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`getComputedStyle(document.body).backgroundColor === "rgb(243, 245, 248)"`))
	if err != nil || !styled {
		t.Errorf("the stylesheet did not apply (%v)", err)
	}
	fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
	if err != nil || !fits {
		t.Errorf("the page is wider than the phone (%v)", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.ArtifactDir(), "payment-page.png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
	qr, err := chromedp.Run(ctx, chromedp.Screenshot("#qr"))
	if err != nil {
		t.Fatal(err)
	}
	if got := promptpaytest.Scan(t, qr); got != payment["qr_payload"] {
		t.Fatalf("the QR on screen reads %q; the payment's payload is %q", got, payment["qr_payload"])
	}
}
