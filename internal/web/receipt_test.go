package web_test

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// receiptPath is the path of a bill's receipt page, from its URL (the
// test store's public URL is not the test server's address).
func receiptPath(t *testing.T, bill map[string]any) string {
	t.Helper()
	r, ok := bill["receipt"].(map[string]any)
	if !ok {
		t.Fatalf("bill %v has no receipt", bill["id"])
	}
	u, err := url.Parse(r["url"].(string))
	if err != nil || !strings.HasPrefix(r["url"].(string), storetest.PublicURL+"/pay/receipt/") {
		t.Fatalf("receipt url %q (%v)", r["url"], err)
	}
	return u.Path
}

// fetchPage fetches a page.
func fetchPage(t *testing.T, u string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// The receipt page of a paid bill says who was paid (the property's name
// and address), by whom (the tenant, the room, the month), for what (the
// bill's lines and total) and how (each payment: when, PromptPay QR, how
// much), Thai first; a token no receipt has, a payment link's token or a
// changed one get the 404 page and nothing of any bill.
func TestReceiptPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		base, key, _ := serviceOn(t, e)
		bill := call(t, base, key, "GET", "/v1/bills?status=issued&limit=1")
		id := bill["id"].(string)
		if bill["receipt"] != nil {
			t.Fatalf("an issued bill has a receipt: %v", bill["receipt"])
		}
		// Paid in two parts through the sandbox's QR: the receipt comes with the second.
		total := int64(bill["total"].(float64))
		post(t, base, key, "/v1/test-helpers/payments", fmt.Sprintf(`{"bill_id":%q,"outcome":"paid","amount_paid":100000}`, id))
		if b := call(t, base, key, "GET", "/v1/bills/"+id); b["status"] != rental.BillIssued || b["receipt"] != nil {
			t.Fatalf("after a part: %v, receipt %v", b["status"], b["receipt"])
		}
		post(t, base, key, "/v1/test-helpers/payments", fmt.Sprintf(`{"bill_id":%q,"outcome":"paid"}`, id))
		bill = call(t, base, key, "GET", "/v1/bills/"+id)
		path := receiptPath(t, bill)
		number := bill["receipt"].(map[string]any)["number"].(string)
		room := call(t, base, key, "GET", "/v1/rooms/"+bill["room_id"].(string))
		prop := call(t, base, key, "GET", "/v1/properties/"+bill["property_id"].(string))
		tenant := call(t, base, key, "GET", "/v1/tenants/"+bill["tenant_id"].(string))

		status, hdr, page := fetchPage(t, base+path)
		if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || hdr.Get("Referrer-Policy") != "no-referrer" ||
			!strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Fatalf("receipt page: %d %v", status, hdr)
		}
		month, _ := time.Parse("2006-01", bill["month"].(string))
		for _, want := range []string{
			"ใบเสร็จรับเงิน", `<span lang="en">Receipt</span>`, `id="receipt-number">` + number + "<",
			prop["name"].(string), prop["address"].(string), tenant["name"].(string),
			"ห้อง " + room["number"].(string), "Room " + room["number"].(string), month.Format("January 2006"),
			"ค่าเช่าห้อง", "ค่าไฟฟ้า", "ค่าน้ำ", `id="receipt-total">` + rental.Baht(total) + "<",
			`id="receipt-paid">` + rental.Baht(total) + "<", "พร้อมเพย์ QR", "PromptPay QR",
			rental.Baht(100000), rental.Baht(total - 100000), "โหมดทดสอบ",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the receipt page does not say %q", want)
			}
		}
		if th, en := strings.Index(page, "ผู้รับเงิน"), strings.Index(page, "Received by"); th < 0 || en < th {
			t.Errorf("Thai does not come first: %d, %d", th, en)
		}
		if !regexp.MustCompile(`^R\d{4}-\d{6}$`).MatchString(number) {
			t.Errorf("number %q", number)
		}

		// Nothing else opens it.
		link := call(t, base, key, "POST", "/v1/bills/"+call(t, base, key, "GET", "/v1/bills?status=issued&limit=1")["id"].(string)+"/payment-link")
		token := path[strings.LastIndex(path, "/")+1:]
		forged := []string{
			"/pay/receipt/" + strings.Repeat("a", len(token)),
			"/pay/receipt/" + changed(token),
			"/pay/receipt/" + link["url"].(string)[strings.LastIndex(link["url"].(string), "/")+1:],
			"/pay/receipt/",
			"/pay/receipt/" + token + "/more",
		}
		for _, p := range forged {
			status, _, page := fetchPage(t, base+p)
			if status != http.StatusNotFound || strings.Contains(page, prop["name"].(string)) || strings.Contains(page, number) {
				t.Errorf("%s: %d\n%s", p, status, page)
			}
		}
		if status, _, page := fetchPage(t, base+forged[0]); !strings.Contains(page, "ไม่พบใบเสร็จนี้") || !strings.Contains(page, "This receipt link is not valid") {
			t.Errorf("forged token: %d, the page does not say so:\n%s", status, page)
		}
	})
}

// changed is the token with its last character changed.
func changed(token string) string {
	last := byte('a')
	if token[len(token)-1] == 'a' {
		last = 'b'
	}
	return token[:len(token)-1] + string(last)
}

// post sends an API write with a fresh Idempotency-Key and fails the test
// unless it succeeds.
func post(t *testing.T, base, key, path, body string) {
	t.Helper()
	r, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", rental.NewID("idem"))
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
}

// ShotsEnv names a directory the browser tests' screenshots and the
// receipt's print PDFs are copied to, to look at (they also go to the
// test's artifacts); set, the screenshots are taken without -artifacts.
const ShotsEnv = "RENTAPI_TEST_SHOTS"

// A sample receipt in Chromium: it fits a phone and a laptop with its
// stylesheet, passes axe-core's checks at both, and prints on one A4 page
// and on one A5 page, without the hint to print.
func TestReceiptInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	base, key := service(t)
	bill := call(t, base, key, "GET", "/v1/bills?status=paid&limit=1")
	ctx := browse(t, path, 1280, 800, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+receiptPath(t, bill)), chromedp.WaitVisible("#receipt-number")); err != nil {
		t.Fatal(err)
	}
	shoot(ctx, t, "receipt")
	for _, size := range screens {
		setScreen(ctx, t, size)
		photograph(ctx, t, fmt.Sprintf("receipt-%d.png", size.w), true)
	}
	for _, paper := range []struct {
		name string
		w, h float64 // inches
	}{{"a4", 8.27, 11.69}, {"a5", 5.83, 8.27}} {
		res, err := chromedp.Call(ctx, cdppage.PrintToPDF, cdppage.PrintToPDFParams{PaperWidth: paper.w, PaperHeight: paper.h})
		if err != nil {
			t.Fatal(err)
		}
		pdf := res.Data
		if pages := len(pdfPage.FindAll(pdf, -1)); pages != 1 {
			t.Errorf("%s: the receipt prints on %d pages", paper.name, pages)
		}
		keepFile(t, "receipt-"+paper.name+".pdf", pdf)
	}
	// On paper: an A5 sheet's width inside the page's margins (148 mm −
	// 2 × 12 mm, at 96 px an inch), to look at.
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"}); err != nil {
		t.Fatal(err)
	}
	setScreen(ctx, t, screen{w: 469, h: 703})
	photograph(ctx, t, "receipt-print-a5.png", true)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector("p.noprint")).display`))
	if err != nil || shown != "none" {
		t.Errorf("the hint to print is printed: %q (%v)", shown, err)
	}
}

// pdfPage finds the page objects of a PDF (not its /Pages tree).
var pdfPage = regexp.MustCompile(`/Type\s*/Page[^s]`)
