package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// slipPNG is the start of a PNG, which is all the sniffing looks at.
var slipPNG = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 2000)...)

// slipForm is a browser's multipart body of the payment page's slip form.
func slipForm(t *testing.T, field, name string, content []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if field != "" {
		fw, err := mw.CreateFormFile(field, name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// noRedirects is a client that shows redirects rather than following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// upload posts a slip form to the payment page of token, as a browser of
// the page's own site does.
func upload(t *testing.T, base, token, contentType string, body io.Reader, header ...string) (*http.Response, string) {
	t.Helper()
	r, _ := http.NewRequest("POST", base+"/pay/"+token+"/slip", body)
	r.Header.Set("Content-Type", contentType)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirects.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// A tenant sends the slip from the payment page, without JavaScript: the
// form posts the picture and is sent back to the page (303), which shows
// the slip being checked, then verified with the receipt's link once the
// job has settled it. A picture too large (by its length, or as it
// arrives), a PDF named .png, a form without a picture or with an empty
// one, a forged token and a post from another site each get a page that
// says so with its status, and nothing is stored.
func TestSlipFromThePaymentPage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		base, key, _ := serviceOn(t, e)
		bill := call(t, base, key, "GET", "/v1/bills?status=issued&limit=1")
		id := bill["id"].(string)
		link := call(t, base, key, "POST", "/v1/bills/"+id+"/payment-link")
		token := link["url"].(string)[strings.LastIndex(link["url"].(string), "/")+1:]
		slips := func() int {
			t.Helper()
			r, _ := http.NewRequest("GET", base+"/v1/slips?limit=100&bill_id="+id, nil)
			r.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return strings.Count(string(b), `"object":"slip"`)
		}
		before := slips()

		status, _, page := fetchPage(t, base+"/pay/"+token)
		if status != http.StatusOK || !strings.Contains(page, `action="/pay/`+token+`/slip"`) || !strings.Contains(page, `enctype="multipart/form-data"`) ||
			!strings.Contains(page, `name="slip"`) {
			t.Fatalf("the payment page has no slip form: %d\n%s", status, page)
		}
		if qr, form := strings.Index(page, `id="qr"`), strings.Index(page, `id="slip"`); qr < 0 || form < qr {
			t.Errorf("the slip form is not below the QR: %d, %d", qr, form)
		}

		// Refused, each on a page of its own, nothing stored.
		ct, pdf := slipForm(t, "slip", "slip.png", []byte("%PDF-1.7\n1 0 obj"))
		ctEmpty, empty := slipForm(t, "", "", nil)
		ctEmptyFile, emptyFile := slipForm(t, "slip", "slip.png", nil)
		ctOther, other := slipForm(t, "picture", "slip.png", slipPNG)
		ctBig, big := slipForm(t, "slip", "slip.png", append(slipPNG, make([]byte, 3<<20)...))
		for _, c := range []struct {
			name, token, contentType string
			body                     io.Reader
			header                   []string
			status                   int
			says                     string
		}{
			{"3 MB", token, ctBig, bytes.NewReader(big), nil, http.StatusRequestEntityTooLarge, "larger than 2 MB"},
			{"3 MB, no length", token, ctBig, io.MultiReader(bytes.NewReader(big)), nil, http.StatusRequestEntityTooLarge, "larger than 2 MB"},
			{"a PDF named .png", token, ct, bytes.NewReader(pdf), nil, http.StatusBadRequest, "not a JPEG or PNG"},
			{"an empty form", token, ctEmpty, bytes.NewReader(empty), nil, http.StatusBadRequest, "No picture was chosen"},
			{"an empty file", token, ctEmptyFile, bytes.NewReader(emptyFile), nil, http.StatusBadRequest, "No picture was chosen"},
			{"another field", token, ctOther, bytes.NewReader(other), nil, http.StatusBadRequest, "No picture was chosen"},
			{"not a form", token, "text/plain", strings.NewReader("hello"), nil, http.StatusBadRequest, "No picture was chosen"},
			{"a forged token", changed(token), ct, bytes.NewReader(slipFormBody(t, ct)), nil, http.StatusNotFound, "This payment link is not valid"},
			{"from another site", token, ct, bytes.NewReader(slipFormBody(t, ct)), []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, ""},
		} {
			resp, page := upload(t, base, c.token, c.contentType, c.body, c.header...)
			if resp.StatusCode != c.status || !strings.Contains(page, c.says) {
				t.Errorf("%s: %d, want %d saying %q\n%s", c.name, resp.StatusCode, c.status, c.says, page)
			}
			if c.status < 403 && (!strings.Contains(page, `href="/pay/`+token+`#slip"`) || !strings.Contains(page, "ส่งสลิปไม่สำเร็จ")) {
				t.Errorf("%s: the page does not lead back to the form\n%s", c.name, page)
			}
			if n := slips(); n != before {
				t.Fatalf("%s: %d slips stored, want %d", c.name, n, before)
			}
		}

		// Sent: back to the page, which shows it being checked.
		ctOK, body := slipForm(t, "slip", "IMG_0001.PNG", slipPNG)
		resp, _ := upload(t, base, token, ctOK, bytes.NewReader(body))
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/pay/"+token+"#slip" {
			t.Fatalf("upload: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		if n := slips(); n != before+1 {
			t.Fatalf("%d slips, want %d", n, before+1)
		}
		sl := call(t, base, key, "GET", "/v1/slips?bill_id="+id+"&limit=1")
		if sl["status"] != rental.SlipPending || sl["source"] != rental.SlipFromPage {
			t.Fatalf("slip %v", sl)
		}
		if _, _, page := fetchPage(t, base+"/pay/"+token); !strings.Contains(page, "กำลังตรวจสอบ") || !strings.Contains(page, "being checked") {
			t.Errorf("the page does not show the slip being checked:\n%s", page)
		}

		// The job settles it (the sandbox's simulated provider): verified,
		// the bill paid, the receipt linked and no form any more.
		if _, err := e.DB.SettleSlip(t.Context(), sl["id"].(string), store.SlipVerdict{Simulated: true}); err != nil {
			t.Fatal(err)
		}
		bill = call(t, base, key, "GET", "/v1/bills/"+id)
		if bill["status"] != rental.BillPaid {
			t.Fatalf("bill %v", bill["status"])
		}
		_, _, page = fetchPage(t, base+"/pay/"+token)
		receipt := receiptPath(t, bill)
		if !strings.Contains(page, "Slip verified") || !strings.Contains(page, `id="receipt" href="`+storetest.PublicURL+receipt+`"`) ||
			strings.Contains(page, `name="slip"`) {
			t.Errorf("the page after verification:\n%s", page)
		}
		if status, _, _ := fetchPage(t, base+receipt); status != http.StatusOK {
			t.Errorf("receipt page: %d", status)
		}
	})
}

// slipFormBody is a good slip form of content type ct's boundary.
func slipFormBody(t *testing.T, ct string) []byte {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.SetBoundary(ct[strings.Index(ct, "boundary=")+len("boundary="):])
	fw, _ := mw.CreateFormFile("slip", "slip.png")
	fw.Write(slipPNG)
	mw.Close()
	return buf.Bytes()
}

// A tenant sends the slip through the payment page's form in Chromium: the
// file chosen and sent, the page comes back showing it being checked; once
// the job verified it, the page shows it verified with the receipt's link.
// The page with the form and with the verified slip is photographed at
// both sizes (fitScreen: nothing wider than the screen, the stylesheet
// applied, axe-core's checks when asked for), also into ShotsEnv's
// directory.
func TestSlipUploadInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	e := storetest.SQLite(t)
	base, key, _ := serviceOn(t, e)
	bill := call(t, base, key, "GET", "/v1/bills?status=issued&limit=1")
	link := call(t, base, key, "POST", "/v1/bills/"+bill["id"].(string)+"/payment-link")
	picture := filepath.Join(t.TempDir(), "slip.png")
	img := image.NewRGBA(image.Rect(0, 0, 60, 120))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(picture, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	ctx := browse(t, path, 1280, 800, 90*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(link["url"].(string)), chromedp.WaitVisible("#slip-file")); err != nil {
		t.Fatal(err)
	}
	shootSlip(ctx, t, "payment-slip-form")
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles("#slip-file", []string{picture}), chromedp.Click("#send-slip"),
		chromedp.WaitVisible("#slip-status")); err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("#slip"))
	if err != nil || !strings.Contains(text, "กำลังตรวจสอบ") || !strings.Contains(text, "being checked") {
		t.Fatalf("after sending: %q (%v)", text, err)
	}
	sl := call(t, base, key, "GET", "/v1/slips?bill_id="+bill["id"].(string)+"&limit=1")
	if sl["status"] != rental.SlipPending || sl["source"] != rental.SlipFromPage {
		t.Fatalf("slip %v", sl)
	}
	if _, err := e.DB.SettleSlip(t.Context(), sl["id"].(string), store.SlipVerdict{Simulated: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible("#receipt")); err != nil {
		t.Fatal(err)
	}
	if text, err := chromedp.Run(ctx, chromedp.Text("#slip")); err != nil || !strings.Contains(text, "Slip verified") || strings.Contains(text, "Send the slip") {
		t.Fatalf("after verification: %q (%v)", text, err)
	}
	shootSlip(ctx, t, "payment-slip-verified")
}

// shootSlip checks the page at both sizes and photographs it whole, into
// the test's artifacts and ShotsEnv's directory.
func shootSlip(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	for _, size := range screens {
		fitScreen(ctx, t, name, size)
		photograph(ctx, t, fmt.Sprintf("%s-%dx%d.png", name, size.w, size.h), true)
	}
}
