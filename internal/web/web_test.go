package web_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/api"
	"rentapi/internal/promptpay"
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

// browse opens a tab at path's Chromium with a window of the size, in a
// browser context of its own (cookies and storage as apart as in another
// browser); it closes with the test. timeout is the test's own budget, and
// a guard against a hung browser rather than a timing assertion: on a
// loaded machine (CI runs every package's tests side by side under the
// race detector) rendering runs several times slower, so the guard is
// never under browseFloor.
func browse(t *testing.T, path string, width, height int, timeout time.Duration) context.Context {
	timeout = max(timeout, browseFloor)
	browser, err := sharedBrowser(path)
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	tab, closeTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	ctx, cancel := context.WithTimeout(tab, timeout)
	t.Cleanup(func() { cancel(); closeTab() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("a tab of %d × %d px: %v", width, height, err)
	}
	return ctx
}

// theBrowser is the one Chromium the browser tests of this process open
// their tabs in: starting a Chromium costs more CPU than most tests spend
// on their pages. TestMain closes it.
var theBrowser struct {
	once   sync.Once
	ctx    context.Context // its first tab, whose children the tests' tabs are
	cancel context.CancelFunc
	err    error
}

// sharedBrowser starts theBrowser from path on its first call.
func sharedBrowser(path string) (context.Context, error) {
	theBrowser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 800))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelBrowser := chromedp.NewContext(alloc)
		theBrowser.ctx, theBrowser.cancel = ctx, func() { cancelBrowser(); cancelAlloc() }
		theBrowser.err = chromedp.Do(ctx) // the browser lives as long as ctx
	})
	return theBrowser.ctx, theBrowser.err
}

// TestMain closes theBrowser once every test is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if theBrowser.cancel != nil {
		theBrowser.cancel()
	}
	os.Exit(code)
}

// photosKept reports whether a screenshot taken now is kept: in the test's
// artifacts under go test -artifacts (without it, go test removes the
// artifact directory with the test), or in ShotsEnv's directory. The
// checks around a screenshot run either way; only the picture, which
// nobody would see, is not taken.
func photosKept() bool {
	f := flag.Lookup("test.artifacts")
	return f != nil && f.Value.String() == "true" || os.Getenv(ShotsEnv) != ""
}

// photograph saves the screen (the whole page when whole) as name in the
// test's artifacts and ShotsEnv's directory, when photosKept.
func photograph(ctx context.Context, t *testing.T, name string, whole bool) {
	t.Helper()
	if !photosKept() {
		return
	}
	shoot := chromedp.CaptureScreenshot()
	if whole {
		shoot = chromedp.FullScreenshot(100)
	}
	shot, err := chromedp.Run(ctx, shoot)
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	keepFile(t, name, shot)
}

// keepFile writes an output file of the test into its artifacts and
// ShotsEnv's directory.
func keepFile(t *testing.T, name string, b []byte) {
	t.Helper()
	dirs := []string{t.ArtifactDir()}
	if d := os.Getenv(ShotsEnv); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		out := filepath.Join(d, name)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("kept: %s", out)
	}
}

// browseFloor is the least time a browser test is given before it is
// taken for hung.
const browseFloor = 6 * time.Minute

// service runs the API and the pages over a fresh database and returns the
// base URL and a sandbox test key.
func service(t *testing.T) (string, string) {
	base, key, _ := serviceOn(t, storetest.SQLite(t))
	return base, key
}

// serviceOn runs the API and the pages over the engine's database and
// returns the base URL, a sandbox test key and its fixture.
func serviceOn(t *testing.T, e storetest.Engine) (string, string, storetest.Fixture) {
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
	return base, f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest}), f
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
// with its stylesheet under the strict CSP, fits the screen, says when the
// bill is due and whom it pays, shows a QR that a scanner reads as the
// payment's PromptPay payload, and links that image to save it. The
// screenshots (the phone's, then at 390 and 1280 px with axe-core's
// checks) go to the test's artifact directory (go test -artifacts keeps
// them).
func TestPaymentPageInChromium(t *testing.T) {
	t.Parallel()
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
	for _, want := range []string{"สแกนเพื่อจ่ายด้วยพร้อมเพย์", "Scan to pay with PromptPay", "Test mode", "ค่าห้องเดือน", "Total",
		"กำหนดชำระ", "Due ", "จ่ายให้", "Pay to", "บัญชีทดสอบ Sandbox (no real account)", "Save the QR to your phone"} {
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
	photograph(ctx, t, "payment-page.png", true)
	qr, err := chromedp.Run(ctx, chromedp.Screenshot("#qr"))
	if err != nil {
		t.Fatal(err)
	}
	if got := promptpaytest.Scan(t, qr); got != payment["qr_payload"] {
		t.Fatalf("the QR on screen reads %q; the payment's payload is %q", got, payment["qr_payload"])
	}
	// The link that saves the QR is the image shown, named for the room
	// and month.
	save, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[document.getElementById("save-qr").href, document.getElementById("save-qr").download, document.getElementById("qr").src]`))
	if err != nil || len(save) != 3 || save[0] != save[2] || !strings.HasPrefix(save[1], "promptpay-") || !strings.HasSuffix(save[1], ".png") {
		t.Fatalf("the save link %v (%v)", save, err)
	}
	shoot(ctx, t, "payment")
}

// The payment page says when the bill is due and whom the QR pays, in Thai
// and English, and links its QR image for saving to the phone: the PNG the
// page shows, of the payment's payload. The name is the landlord's
// PromptPay account holder's, as /app keeps it, so a new name shows at the
// next look.
func TestPaymentPageSaysWhoAndWhen(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		base, key, f := serviceOn(t, e)
		bill := call(t, base, key, "GET", "/v1/bills?status=issued&limit=1")
		link := call(t, base, key, "POST", "/v1/bills/"+bill["id"].(string)+"/payment-link")
		get := func(path string) (int, http.Header, []byte) {
			t.Helper()
			resp, err := http.Get(path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, resp.Header, b
		}
		status, _, body := get(link["url"].(string))
		page := string(body)
		due, err := time.Parse(time.DateOnly, bill["due_date"].(string))
		if status != http.StatusOK || err != nil {
			t.Fatalf("payment page: %d (%v)", status, err)
		}
		thai := []string{"มกราคม", "กุมภาพันธ์", "มีนาคม", "เมษายน", "พฤษภาคม", "มิถุนายน", "กรกฎาคม", "สิงหาคม", "กันยายน", "ตุลาคม", "พฤศจิกายน", "ธันวาคม"}
		for _, want := range []string{
			fmt.Sprintf("กำหนดชำระ %d %s %d", due.Day(), thai[due.Month()-1], due.Year()+543),
			"Due " + due.Format("2 January 2006"),
			`จ่ายให้ · <span lang="en">Pay to</span> <strong id="payee">บัญชีทดสอบ Sandbox (no real account)</strong>`,
			"Your bank app shows the receiver's name before you confirm",
			"บันทึก QR ลงเครื่อง", "Save the QR to your phone",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the payment page does not say %q", want)
			}
		}
		save := regexp.MustCompile(`<a class="button secondary save" id="save-qr" href="(/pay/[A-Za-z0-9_-]+/(pay_[A-Za-z0-9]+)\.png)" download="(promptpay-[A-Za-z0-9-]+-\d{4}-\d{2}\.png)">`).FindStringSubmatch(page)
		if save == nil || !strings.Contains(page, `<img id="qr" src="`+save[1]+`"`) || save[3] != "promptpay-"+call(t, base, key, "GET", "/v1/rooms/"+bill["room_id"].(string))["number"].(string)+"-"+bill["month"].(string)+".png" {
			t.Fatalf("no link to save the QR shown:\n%s", page)
		}
		status, hdr, png := get(base + save[1])
		payment := call(t, base, key, "GET", "/v1/payments/"+save[2])
		if status != http.StatusOK || hdr.Get("Content-Type") != "image/png" || promptpaytest.Scan(t, png) != payment["qr_payload"] {
			t.Fatalf("the saved QR: %d %s", status, hdr.Get("Content-Type"))
		}

		// The name follows what the landlord keeps.
		sandbox := f.Sandbox(t, e.DB)
		err = e.DB.InTx(t.Context(), func(tx *store.Tx) error {
			_, err := tx.SetPromptPay(t.Context(), sandbox.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}, "หอพักบ้านสุข <Baan Suk>")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, body := get(link["url"].(string)); !strings.Contains(string(body), `<strong id="payee">หอพักบ้านสุข &lt;Baan Suk&gt;</strong>`) {
			t.Fatalf("the new name is not shown:\n%s", body)
		}
	})
}
