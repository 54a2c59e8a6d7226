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

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// sendAPI sends an API request with the key and returns its status and
// X-Request-ID.
func sendAPI(t *testing.T, base, key, method, path, body string) (int, string) {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	r, _ := http.NewRequest(method, base+path, rb)
	r.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("X-Request-ID")
}

var requestRow = regexp.MustCompile(`<a href="\?request_id=(req_[a-z0-9]+)">`)

// TestPortalRequests: the Requests page lists an application's API
// requests of the last 7 days, newest first, with the key's last four, the
// status and error code, filtered by mode, status class, path and request
// ID (an error body's request_id finds its row), a page at a time; no
// body is kept; another developer sees none of it; after 7 days the rows
// are gone.
func TestPortalRequests(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		p := newPortal(t, e)
		b := p.developer("requests-" + e.Name + "@example.com")
		app, key := newAppKey(t, b, rental.ScopePropertiesRead, rental.ScopePropertiesWrite, rental.ScopeRoomsRead, rental.ScopeBillsRead)
		page := "/portal/apps/" + app + "/requests"

		const marker = "Somchai-body-marker-0812345678"
		if st, _ := sendAPI(t, p.base, key, "GET", "/v1/account", ""); st != http.StatusOK {
			t.Fatalf("account: %d", st)
		}
		st, missing := sendAPI(t, p.base, key, "GET", "/v1/bills/bill_doesnotexist", "")
		if st != http.StatusNotFound || missing == "" {
			t.Fatalf("missing bill: %d %q", st, missing)
		}
		if st, _ := sendAPI(t, p.base, key, "POST", "/v1/properties", `{"name":"`+marker+`","electricity_rate":-1}`); st != http.StatusBadRequest {
			t.Fatalf("bad property: %d", st)
		}
		// Written after the answers, in a batch: wait for it.
		var body string
		for deadline := time.Now().Add(15 * time.Second); ; {
			pg := b.get(page)
			if pg.status != http.StatusOK {
				t.Fatalf("requests page: %d\n%s", pg.status, pg.body)
			}
			if body = pg.body; len(requestRow.FindAllString(body, -1)) >= 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the requests did not show in 15 s:\n%s", body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		for _, want := range []string{"<code>GET /v1/account</code>", "<code>GET /v1/bills/bill_doesnotexist</code>", "<code>resource_not_found</code>",
			"<code>POST /v1/properties</code>", "<code>invalid_parameter</code>", "<code>…" + key[len(key)-4:] + "</code>", ">404</span>", ">400</span>", ">200</span>"} {
			if !strings.Contains(body, want) {
				t.Errorf("the page does not show %q", want)
			}
		}
		if ids := requestRow.FindAllStringSubmatch(body, -1); ids[1][1] != missing || !strings.Contains(body[:strings.Index(body, missing)], "POST /v1/properties") {
			t.Errorf("not newest first: %v", ids)
		}
		if strings.Contains(body, marker) {
			t.Error("the page shows a request's body")
		}
		rows, err := e.DB.WritePool().QueryContext(t.Context(), `SELECT id, application_id, mode, account_id, method, path, code, key_last4 FROM request_log`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var f [8]string
			rows.Scan(&f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7])
			if strings.Contains(strings.Join(f[:], " "), marker) || strings.Contains(strings.Join(f[:], " "), key) {
				t.Errorf("the log keeps a body or the key: %v", f)
			}
		}
		rows.Close()

		filtered := func(query string) []string {
			t.Helper()
			pg := b.get(page + "?" + query)
			if pg.status != http.StatusOK {
				t.Fatalf("?%s: %d\n%s", query, pg.status, pg.body)
			}
			var paths []string
			for _, m := range regexp.MustCompile(`<code>([A-Z]+ /[^<]*)</code>`).FindAllStringSubmatch(pg.body, -1) {
				paths = append(paths, m[1])
			}
			return paths
		}
		for query, want := range map[string]string{
			"request_id=" + missing:    "GET /v1/bills/bill_doesnotexist",
			"status=4xx":               "POST /v1/properties,GET /v1/bills/bill_doesnotexist",
			"status=2xx":               "GET /v1/account",
			"path=/v1/bills":           "GET /v1/bills/bill_doesnotexist",
			"mode=test&status=4xx":     "POST /v1/properties,GET /v1/bills/bill_doesnotexist",
			"mode=live":                "",
			"status=5xx&path=/v1/bill": "",
		} {
			if got := strings.Join(filtered(query), ","); got != want {
				t.Errorf("?%s lists %q, want %q", query, got, want)
			}
		}
		if pg := b.get(page + "?mode=live"); !strings.Contains(pg.body, "No request matches these filters") {
			t.Errorf("an empty filtered list says nothing")
		}
		for _, bad := range []string{"status=6xx", "mode=both", "path=v1", "request_id=REQ-1", "older=x"} {
			if pg := b.get(page + "?" + bad); pg.status != http.StatusBadRequest {
				t.Errorf("?%s: %d, want 400", bad, pg.status)
			}
		}

		// A page at a time.
		for i := range 52 {
			sendAPI(t, p.base, key, "GET", fmt.Sprintf("/v1/rooms?limit=%d", i%100+1), "")
		}
		var first string
		for deadline := time.Now().Add(15 * time.Second); ; {
			first = b.get(page).body
			if strings.Count(first, "GET /v1/rooms") == 50 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		older := regexp.MustCompile(`<a class="button secondary" href="([^"]+)">`).FindStringSubmatch(first)
		if len(requestRow.FindAllString(first, -1)) != 50 || older == nil {
			t.Fatalf("the first page: %d rows, older link %v", len(requestRow.FindAllString(first, -1)), older)
		}
		second := b.get(page + strings.ReplaceAll(older[1], "&amp;", "&")).body
		if n := len(requestRow.FindAllString(second, -1)); n != 5 || strings.Count(second, "GET /v1/rooms") != 2 {
			t.Fatalf("the second page: %d rows, want 5 (2 of the rooms, then the first 3)\n%s", n, second)
		}

		// Another developer sees none of it.
		other := p.developer("requests-other-" + e.Name + "@example.com")
		if pg := other.get(page); pg.status != http.StatusNotFound {
			t.Errorf("another developer's view: %d", pg.status)
		}

		// After 7 days the rows are out of the page, then deleted.
		e.Clock.Advance(7*24*time.Hour + time.Minute)
		if pg := b.get(page); len(requestRow.FindAllString(pg.body, -1)) != 0 {
			t.Errorf("requests older than 7 days are listed")
		}
		if n, err := e.DB.PurgeRequests(t.Context()); err != nil || n < 55 {
			t.Errorf("purge: %d, %v", n, err)
		}
	})
}

// The page that shows a new test key, once, has the quickstart's month
// with that key and the service's address filled in; a later look shows
// neither the key nor the filled-in month.
func TestQuickstartWithTheNewKey(t *testing.T) {
	t.Parallel()
	p := newPortal(t, storetest.SQLite(t))
	b := p.developer("quickstart@example.com")
	f := url.Values{"name": {"Dorm Books"}, "company": {"Baan Soft"}, "scope": {"bills:read", "bills:write"}}
	pg := b.post("/portal/apps/new", f)
	shown := b.get(pg.location)
	key := secretText.FindStringSubmatch(shown.body)
	if key == nil {
		t.Fatalf("no key shown:\n%s", shown.body)
	}
	for _, want := range []string{`id="quickstart"`, "BASE=" + p.base + "\nKEY=" + key[1], "RENTAPI_KEY=" + key[1] + " RENTAPI_BASE_URL=" + p.base,
		"/v1/meter-readings", "c.CreateBill(ctx, &amp;rentapi.BillCreate{", "client.createBill("} {
		if !strings.Contains(shown.body, want) {
			t.Errorf("the new key's page does not show %q", want)
		}
	}
	again := b.get(pg.location)
	if again.status != http.StatusGone || strings.Contains(again.body, key[1]) || strings.Contains(again.body, `id="quickstart"`) {
		t.Errorf("a second look: %d, the key or the quickstart still there", again.status)
	}
}
