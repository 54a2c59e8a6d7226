package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.yaml.in/yaml/v3"

	"rentapi"
	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/webhook"
)

// get fetches a path with an Accept header and returns the status, the
// content type and the body.
func get(t *testing.T, base, path, accept string) (int, string, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", base+path, nil)
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// /docs shows every operation of the OpenAPI document, each at its
// operationId, and no operation the document does not have.
func TestReferenceHasEveryOperation(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]yaml.Node `yaml:"paths"`
	}
	if err := yaml.Unmarshal(api.Document(), &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	scopes := map[string]string{}
	for _, item := range doc.Paths {
		for method, n := range item {
			var op struct {
				OperationID string `yaml:"operationId"`
				Scope       string `yaml:"x-required-scope"`
			}
			if method == "parameters" {
				continue
			}
			if err := n.Decode(&op); err != nil {
				t.Fatal(err)
			}
			want = append(want, op.OperationID)
			scopes[op.OperationID] = op.Scope
		}
	}
	base, _ := service(t)
	status, ctype, index := get(t, base, "/docs/api", browserAccept)
	if status != 200 || !strings.HasPrefix(ctype, "text/html") {
		t.Fatalf("GET /docs/api: %d %s", status, ctype)
	}
	// Each resource's page, as the index links them.
	var got []string
	var body strings.Builder
	pages := map[string]bool{}
	for _, m := range regexp.MustCompile(`<h3><a href="(/docs/api/[a-z-]+)">`).FindAllStringSubmatch(index, -1) {
		pages[m[1]] = true
		status, _, page := get(t, base, m[1], browserAccept)
		if status != 200 {
			t.Fatalf("GET %s: %d", m[1], status)
		}
		for _, op := range regexp.MustCompile(`<article class="card op" id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
			got = append(got, op[1])
			if !strings.Contains(index, `href="`+m[1]+`#`+op[1]+`"`) {
				t.Errorf("%s is not in the index", op[1])
			}
			if !strings.Contains(page, `href="#`+op[1]+`"`) {
				t.Errorf("%s is not in its page's contents", op[1])
			}
		}
		body.WriteString(page)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("operations on the resource pages:\n%v\nin the document:\n%v", got, want)
	}
	all := body.String()
	for _, id := range want {
		if s := scopes[id]; s != "" {
			section := all[strings.Index(all, `id="`+id+`"`):]
			section = section[:strings.Index(section, "</article>")]
			if !strings.Contains(section, "<code>"+s+"</code>") {
				t.Errorf("%s does not name its scope %s", id, s)
			}
		}
	}
	for _, must := range []string{"Request body", "Example request", "Example response", "<code>name</code>", "required", "Idempotency-Key",
		"<summary>curl</summary>", "<summary>Go</summary>", "<summary>TypeScript</summary>", "c.CreateBill(ctx, &amp;params)", "client.listBills({ limit: 20 })"} {
		if !strings.Contains(all, must) {
			t.Errorf("the reference does not show %q", must)
		}
	}
	if strings.Contains(all+index, "<script") || regexp.MustCompile(`(src|href)="https?://`).MatchString(all+index) {
		t.Error("the reference loads something from elsewhere")
	}
	if status, _, _ := get(t, base, "/docs/api/nothing", browserAccept); status != 404 {
		t.Errorf("a resource that is none: %d", status)
	}
	// The quickstart keeps an anchor for every operation, for links to the
	// one-page reference it replaced.
	_, _, qs := get(t, base, "/docs", browserAccept)
	for _, id := range want {
		if !strings.Contains(qs, `<li id="`+id+`">`) {
			t.Errorf("/docs#%s lands nowhere", id)
		}
	}
}

// The quickstart shows the month in curl (the README's blocks), Go and
// TypeScript (the SDKs' examples), with the service's own address.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	base, _ := service(t)
	status, _, body := get(t, base, "/docs", browserAccept)
	if status != 200 {
		t.Fatalf("GET /docs: %d", status)
	}
	// This service's pages have no public URL: serve's default address.
	for _, want := range []string{"BASE=http://127.0.0.1:8080\nKEY=svc_test_…", "/v1/meter-readings", "/v1/test-helpers/payments", "c.CreateBill(ctx, &amp;rentapi.BillCreate{",
		"client.createBill({ room_id: room.id, month })", "rentapi listen", "เริ่มต้นใช้งาน", "Quickstart"} {
		if !strings.Contains(body, want) {
			t.Errorf("the quickstart does not show %q", want)
		}
	}
	if strings.Contains(body, "cmd/rentapi serve\n") {
		t.Error("the quickstart's month starts the service")
	}
}

// The search finds operations, fields, error codes, events and guides,
// those named by the query first; a long query is refused with a page.
func TestDocsSearch(t *testing.T) {
	t.Parallel()
	base, _ := service(t)
	find := func(q string) string {
		t.Helper()
		status, _, body := get(t, base, "/docs/search?q="+url.QueryEscape(q), browserAccept)
		if status != 200 {
			t.Fatalf("search %q: %d", q, status)
		}
		return body
	}
	first := regexp.MustCompile(`<article class="card result">\s*<p class="row"><span class="tag">[^<]*<span lang="en">([^<]+)</span></span> <a href="([^"]+)">`)
	for q, want := range map[string][2]string{
		"createBill":           {"Operation", "/docs/api/bills#createBill"},
		"invalid_parameter":    {"Error code", "/docs/errors#invalid_parameter"},
		"payment.paid":         {"Event", "/docs/webhooks#events"},
		"grace_days":           {"Field", "/docs/api/properties#"},
		"verifying signatures": {"Guide", "/docs/webhooks#verify"},
		"POST /v1/bills":       {"Operation", "/docs/api/bills#"},
	} {
		m := first.FindStringSubmatch(find(q))
		if m == nil || m[1] != want[0] || !strings.HasPrefix(m[2], want[1]) {
			t.Errorf("search %q: first result %v, want a %s at %s", q, m, want[0], want[1])
		}
	}
	if body := find("late fee"); strings.Contains(body, "&amp;#39;") || strings.Contains(body, "&amp;lt;") {
		t.Error("a snippet is escaped twice")
	}
	if body := find("zzzz-nothing"); !strings.Contains(body, "Nothing found") {
		t.Error("an empty result says nothing")
	}
	if status, _, _ := get(t, base, "/docs/search?q="+strings.Repeat("a", 101), browserAccept); status != 400 {
		t.Errorf("a 101-character search: %d", status)
	}
}

// The error page has a section for every code of api.ErrorCodes, and the
// retry rules.
func TestErrorPageHasEveryCode(t *testing.T) {
	t.Parallel()
	base, _ := service(t)
	status, _, body := get(t, base, api.ErrorDocsPath, "")
	if status != 200 {
		t.Fatalf("GET %s: %d", api.ErrorDocsPath, status)
	}
	for _, c := range api.ErrorCodes() {
		if !strings.Contains(body, `id="`+c.Code+`"`) {
			t.Errorf("no section #%s", c.Code)
		}
	}
	for _, must := range []string{"Retry-After", "backoff", "Idempotency-Key", "idempotency_in_progress"} {
		if !strings.Contains(body, must) {
			t.Errorf("the page does not say %q", must)
		}
	}
}

// Every doc_url the API answers with is <public-url>/docs/errors#<code>,
// and that page has the anchor.
func TestDocURLsResolve(t *testing.T) {
	t.Parallel()
	base, key := service(t)
	pages := map[string]string{}
	for _, c := range []struct{ key, method, path, code string }{
		{"svc_test_" + strings.Repeat("A", 40), "GET", "/v1/account", "invalid_api_key"},
		{key, "GET", "/v1/propertiez", "route_not_found"},
		{key, "GET", "/v1/properties?page=2", "unknown_parameter"},
		{key, "GET", "/v1/properties?limit=1000", "invalid_parameter"},
		{key, "GET", "/v1/properties/prop_000000000000000000000000", "resource_not_found"},
		{key, "PUT", "/v1/account", "method_not_allowed"},
		{"", "GET", "/v1/account?api_key=" + key, "api_key_in_query"},
	} {
		r, _ := http.NewRequest(c.method, base+c.path, nil)
		if c.key != "" {
			r.Header.Set("Authorization", "Bearer "+c.key)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			Error struct {
				Code   string `json:"code"`
				DocURL string `json:"doc_url"`
			} `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if env.Error.Code != c.code {
			t.Errorf("%s %s: code %q, want %s", c.method, c.path, env.Error.Code, c.code)
			continue
		}
		u, err := url.Parse(env.Error.DocURL)
		if err != nil || env.Error.DocURL != base+api.ErrorDocsPath+"#"+c.code {
			t.Errorf("%s: doc_url %q, want %s", c.code, env.Error.DocURL, base+api.ErrorDocsPath+"#"+c.code)
			continue
		}
		page, ok := pages[u.Path]
		if !ok {
			var status int
			status, _, page = get(t, base, u.Path, browserAccept)
			if status != 200 {
				t.Fatalf("%s: %d", u.Path, status)
			}
			pages[u.Path] = page
		}
		if !strings.Contains(page, `id="`+u.Fragment+`"`) {
			t.Errorf("%s has no anchor #%s", u.Path, u.Fragment)
		}
	}
}

// / is a landing page; a path that is nobody's is a page for a browser and
// the envelope for an API client; /v1 is always JSON.
func TestLandingAndNotFound(t *testing.T) {
	t.Parallel()
	base, _ := service(t)
	status, ctype, body := get(t, base, "/", "")
	if status != 200 || !strings.HasPrefix(ctype, "text/html") {
		t.Fatalf("GET /: %d %s", status, ctype)
	}
	for _, link := range []string{`href="/docs"`, `href="/portal"`, `href="/app"`, `href="/openapi.json"`} {
		if !strings.Contains(body, link) {
			t.Errorf("the landing page has no %s", link)
		}
	}
	for _, c := range []struct {
		path, accept string
		html         bool
	}{
		{"/nothing-here", browserAccept, true},
		{"/docs/nothing-here", browserAccept, true},
		{"/docs/nothing-here", "application/json", true}, // under a page's prefix: the pages answer
		{"/nothing-here", "application/json", false},
		{"/nothing-here", "", false},
		{"/nothing-here", "text/html;q=0, application/json", false},
		{"/v1/nothing-here", browserAccept, false},
		{"/v1", browserAccept, false},
		{"/provider/v1/nothing", browserAccept, false},
	} {
		status, ctype, body := get(t, base, c.path, c.accept)
		if status != http.StatusNotFound {
			t.Errorf("%s (Accept %q): %d", c.path, c.accept, status)
		}
		switch {
		case c.html && (!strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, "This page does not exist")):
			t.Errorf("%s (Accept %q): %s, not the not-found page", c.path, c.accept, ctype)
		case !c.html && (!strings.HasPrefix(ctype, "application/json") || !strings.Contains(body, `"route_not_found"`)):
			t.Errorf("%s (Accept %q): %s %s, not the envelope", c.path, c.accept, ctype, body)
		}
	}
	for _, p := range []string{"/healthz", "/openapi.json"} {
		if status, ctype, _ := get(t, base, p, browserAccept); status != 200 || strings.HasPrefix(ctype, "text/html") {
			t.Errorf("%s for a browser: %d %s", p, status, ctype)
		}
	}
}

// The webhooks page lists every event type, the headers, both signature
// examples and the retry schedule.
func TestWebhookPage(t *testing.T) {
	t.Parallel()
	base, _ := service(t)
	status, _, body := get(t, base, "/docs/webhooks", browserAccept)
	if status != 200 {
		t.Fatalf("GET /docs/webhooks: %d", status)
	}
	for _, typ := range rental.EventTypes {
		if !strings.Contains(body, `id="`+typ+`"`) {
			t.Errorf("event type %s is not on the page", typ)
		}
	}
	for _, must := range []string{"X-SERVICE-Signature", "X-SERVICE-Timestamp", "X-SERVICE-Event-ID", "X-SERVICE-Attempt", "hmac.Equal",
		"openssl dgst", "1 min, 5 min, 30 min, 2 h, 6 h, 12 h, 24 h", "8 attempts"} {
		if !strings.Contains(body, must) && !strings.Contains(body, strings.ReplaceAll(must, "&", "&amp;")) {
			t.Errorf("the page does not say %q", must)
		}
	}
}

// /docs/changelog shows CHANGELOG.md, the file in the repository itself
// (embedded in the binary): every date as a section, every change's words,
// with code spans as code; the reference links to it, as every docs page's
// bar does.
func TestChangelogPage(t *testing.T) {
	t.Parallel()
	md, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(md) != rentapi.Changelog {
		t.Fatal("the embedded changelog is not CHANGELOG.md")
	}
	base, _ := service(t)
	status, ctype, body := get(t, base, "/docs/changelog", browserAccept)
	if status != 200 || !strings.HasPrefix(ctype, "text/html") {
		t.Fatalf("GET /docs/changelog: %d %s", status, ctype)
	}
	text := html.UnescapeString(strings.Join(strings.Fields(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(body, " ")), " "))
	var dates, items []string
	var item []string
	for _, line := range append(strings.Split(string(md), "\n"), "") {
		if len(item) > 0 && !strings.HasPrefix(line, "  ") {
			items = append(items, strings.Join(strings.Fields(strings.Join(item, " ")), " "))
			item = nil
		}
		switch {
		case strings.HasPrefix(line, "## "):
			dates = append(dates, strings.TrimPrefix(line, "## "))
		case strings.HasPrefix(line, "- "):
			item = []string{line[2:]}
		case strings.HasPrefix(line, "  ") && item != nil:
			item = append(item, line)
		}
	}
	if len(dates) < 3 || len(items) < 10 || !slices.Contains(dates, "2026-11-25") {
		t.Fatalf("CHANGELOG.md: dates %v, %d changes", dates, len(items))
	}
	for _, d := range dates {
		if !strings.Contains(body, `id="`+d+`"`) {
			t.Errorf("date %s has no section", d)
		}
	}
	for _, it := range items {
		plain := strings.NewReplacer("`", "", "**", "").Replace(it)
		// Tags become spaces: a code span followed by a comma reads "x ,".
		if !strings.Contains(strings.ReplaceAll(text, " ", ""), strings.ReplaceAll(plain, " ", "")) {
			t.Errorf("the page does not show %q", plain)
		}
	}
	if !strings.Contains(body, "<code>GET /v1/payment-links/{payment_link_id}</code>") ||
		!strings.Contains(body, `<a href="/docs/errors#invalid_url"><code>invalid_url</code></a>`) {
		t.Error("code spans are not code, or an error code is not linked to its section")
	}
	for _, p := range []string{"/docs", "/docs/errors", "/docs/webhooks"} {
		if _, _, page := get(t, base, p, browserAccept); !strings.Contains(page, `href="/docs/changelog"`) {
			t.Errorf("%s does not link the changelog", p)
		}
	}
}

// readmeBlock is the first fenced block of the language in the README's
// "Receiving webhooks" section.
func readmeBlock(t *testing.T, lang string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Receiving webhooks\n")
	if !ok {
		t.Fatal("README has no Receiving webhooks section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```"+lang+"\n")
	if !ok {
		t.Fatalf("README's Receiving webhooks has no %s block", lang)
	}
	block, _, _ = strings.Cut(block, "\n```\n")
	return block + "\n"
}

// The Go example of the webhooks page (and the README, which shows the same
// text) compiles, passes vet, accepts a delivery signed as the service
// signs it, with one or two secrets, and refuses a forged or stale one. The
// shell example says the same where bash and openssl are installed.
func TestWebhookExamples(t *testing.T) {
	t.Parallel()
	goSrc, err := os.ReadFile("examples/verify.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	sh, err := os.ReadFile("examples/verify.sh")
	if err != nil {
		t.Fatal(err)
	}
	if got := readmeBlock(t, "go"); got != string(goSrc) {
		t.Errorf("README's Go example differs from examples/verify.go.txt:\n%s", got)
	}
	if got := readmeBlock(t, "sh"); got != string(sh) {
		t.Errorf("README's shell example differs from examples/verify.sh:\n%s", got)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the example with")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example\n\ngo 1.25\n",
		"verify.go": "package example\n\nimport (\n\t\"crypto/hmac\"\n\t\"crypto/sha256\"\n\t\"encoding/hex\"\n\t\"errors\"\n\t\"io\"\n\t\"net/http\"\n" +
			"\t\"strconv\"\n\t\"strings\"\n\t\"time\"\n)\n\n" + string(goSrc),
		"verify_test.go": verifyExampleTest,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"vet", "."}, {"test", "-count=1", "."}} {
		cmd := exec.CommandContext(t.Context(), goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s of the example: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	bash, errB := exec.LookPath("bash")
	_, errO := exec.LookPath("openssl")
	if errB != nil || errO != nil {
		t.Log("no bash or openssl: the shell example is not run")
		return
	}
	body := `{"id":"evt_1","object":"event"}`
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Unix()
	const secret = "whsec_example"
	for _, c := range []struct {
		sig  string
		pass bool
	}{
		{webhook.SignatureHeader([]string{secret}, ts, []byte(body)), true},
		{webhook.SignatureHeader([]string{"whsec_new", secret}, ts, []byte(body)), true},
		{webhook.SignatureHeader([]string{"whsec_other"}, ts, []byte(body)), false},
	} {
		cmd := exec.CommandContext(t.Context(), bash, "-c", string(sh))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TS="+strconv.FormatInt(ts, 10), "SIG="+c.sig, "WHSEC="+secret)
		out, err := cmd.CombinedOutput()
		if (err == nil) != c.pass || c.pass != strings.Contains(string(out), "verified") {
			t.Errorf("shell example with %s: %v %s", c.sig, err, out)
		}
	}
}

// verifyExampleTest runs the Go example against deliveries signed as the
// service signs them.
const verifyExampleTest = `package example

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sig(secret string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "." + body))
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := ` + "`" + `{"id":"evt_1","object":"event"}` + "`" + `
	now := time.Now().Unix()
	for _, c := range []struct {
		ts   int64
		sig  string
		pass bool
	}{
		{now, sig("whsec_a", now, body), true},
		{now, sig("whsec_new", now, body) + "," + sig("whsec_a", now, body), true},
		{now, sig("whsec_b", now, body), false},
		{now - 600, sig("whsec_a", now-600, body), false},
	} {
		r := httptest.NewRequest("POST", "/hook", strings.NewReader(body))
		r.Header.Set("X-SERVICE-Timestamp", strconv.FormatInt(c.ts, 10))
		r.Header.Set("X-SERVICE-Signature", c.sig)
		got, err := verify(r, "whsec_a")
		if (err == nil) != c.pass || (c.pass && string(got) != body) {
			t.Errorf("%s at %d: %q %v", c.sig, c.ts, got, err)
		}
	}
}
`

// The landing page and the documentation in Chromium, on a phone and a
// laptop: styled, nothing wider than the window, photographed (the long
// pages at a few places, a full-page picture of them being too large for
// the browser).
func TestDocsInChromium(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	base, _ := service(t)
	ctx := browse(t, path, 1280, 800, 120*time.Second)
	for _, p := range []struct {
		path, name, wait string
		places           []string // for a long page: where to take pictures
	}{
		{"/", "home", "ul.home", nil},
		{"/docs", "docs-quickstart", "#month", []string{"", "#month"}},
		{"/docs/api", "docs-api", ".toc-grid", nil},
		{"/docs/api/bills", "docs-bills", "#createBill", []string{"", "#createBill"}},
		{"/docs/search?q=late+fee", "docs-search", "main", nil},
		{"/docs/errors", "docs-errors", "#idempotency_in_progress", []string{"", "#retries", "#invalid_parameter"}},
		{"/docs/webhooks", "docs-webhooks", "#verify", []string{"", "#headers", "#verify", "#retries"}},
		{"/docs/changelog", "docs-changelog", "main section.card", nil},
		{"/nothing-here", "not-found", "main", nil},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+p.path), chromedp.WaitVisible(p.wait)); err != nil {
			t.Fatalf("%s: %v", p.path, err)
		}
		if p.places == nil {
			shoot(ctx, t, p.name)
			continue
		}
		shootPlaces(ctx, t, p.name, p.places)
	}
}

// shootPlaces checks a long page at the phone's and the laptop's width as
// shoot does, and photographs the window at each place: the top ("") or
// an element scrolled to the top of the window.
func shootPlaces(ctx context.Context, t *testing.T, name string, places []string) {
	t.Helper()
	for _, size := range screens {
		fitScreen(ctx, t, name, size)
		for _, place := range places {
			if !photosKept() {
				break
			}
			scroll := `window.scrollTo(0, 0)`
			if place != "" {
				scroll = `document.querySelector(` + strconv.Quote(place) + `).scrollIntoView()`
			}
			if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](scroll+`; true`)); err != nil {
				t.Fatal(err)
			}
			label := strings.TrimPrefix(place, "#")
			if label == "" {
				label = "top"
			}
			photograph(ctx, t, fmt.Sprintf("%s-%s-%dx%d.png", name, label, size.w, size.h), false)
		}
	}
}
