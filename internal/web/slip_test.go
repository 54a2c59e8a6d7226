package web_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

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
