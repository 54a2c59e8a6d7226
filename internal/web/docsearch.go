package web

import (
	"html"
	"html/template"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"rentapi"
	"rentapi/internal/api"
	"rentapi/internal/rental"
)

// The documentation's own pages beyond the reference: the quickstart
// (/docs), the reference's index (/docs/api) and a page per resource
// (/docs/api/{resource}), and the search (/docs/search), all made once at
// start from the OpenAPI document, the error codes, the webhooks page's
// events, the changelog and the README.

// quickstart is /docs: the month in curl (the README's blocks, which a
// test runs), Go and TypeScript (the SDKs' examples, which their tests
// run), and every operation's entry, anchored at its operationId, so a
// link to an operation of the old one-page reference still lands.
type quickstart struct {
	Base, Curl, Go, TypeScript string
	// Key fills the examples in: a new test key, on the page that shows
	// it once; "" on /docs.
	Key   string
	Tags  []refTag
	Query string
}

// newQuickstart reads the month's three versions.
func newQuickstart(ref *reference) (quickstart, error) {
	goMonth, err := examples.ReadFile("examples/month_go.txt")
	if err != nil {
		return quickstart{}, err
	}
	tsMonth, err := examples.ReadFile("examples/month_ts.txt")
	if err != nil {
		return quickstart{}, err
	}
	return quickstart{Curl: readmeMonth(rentapi.Readme), Go: string(goMonth), TypeScript: string(tsMonth), Tags: ref.Tags}, nil
}

// readmeMonth is the README's month in curl: the shell blocks of its "Run
// it" section after the two that start the service and set BASE and KEY
// (the quickstart sets those itself).
func readmeMonth(readme string) string {
	_, section, _ := strings.Cut(readme, "\n## Run it\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for _, m := range shBlock.FindAllStringSubmatch(section, -1) {
		if strings.Contains(m[1], "cmd/rentapi serve") || strings.HasPrefix(m[1], "BASE=") {
			continue
		}
		blocks = append(blocks, strings.TrimRight(m[1], "\n"))
	}
	return strings.Join(blocks, "\n\n")
}

var shBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")

// resourcePage is one resource's page of the reference.
type resourcePage struct {
	Tag   refTag
	Query string
}

// apiIndex is /docs/api.
type apiIndex struct {
	Ref   *reference
	Query string
}

// searchEntry is one thing the search finds: an operation, a field, an
// error code, an event type or a guide's section.
type searchEntry struct {
	Kind, KindTH, Title, URL string
	Snippet                  string
	// text is what a query is matched against, lower-cased.
	text string
}

// searchPage is /docs/search's answer.
type searchPage struct {
	Query   string
	Results []searchEntry
	More    bool
}

// maxResults is how many results a search shows.
const maxResults = 50

// newSearchIndex lists everything the search finds, in the order results
// of equal rank are shown: operations, fields, error codes, events,
// guides.
func newSearchIndex(ref *reference, hooks webhookDocs, cl *changelog) []searchEntry {
	var out []searchEntry
	add := func(kind, th, title, url, snippet string, more ...string) {
		text := strings.ToLower(strings.Join(append([]string{title, snippet}, more...), " "))
		out = append(out, searchEntry{Kind: kind, KindTH: th, Title: title, URL: url, Snippet: clip(snippet), text: text})
	}
	for _, t := range ref.Tags {
		for _, op := range t.Ops {
			add("Operation", "operation", op.Method+" "+op.Path+" · "+op.Summary, op.Page, plain(op.Description), op.ID, t.Name, op.Scope)
		}
	}
	for _, t := range ref.Tags {
		for _, op := range t.Ops {
			for _, f := range op.Params {
				add("Field", "ฟิลด์", f.Name+" ("+f.In+") · "+op.Summary, op.Page, plain(f.Description), op.ID)
			}
			if op.Body != nil {
				for _, f := range op.Body.Fields {
					add("Field", "ฟิลด์", f.Name+" · "+op.Summary, op.Page, plain(f.Description), op.ID)
				}
			}
		}
	}
	for _, c := range api.ErrorCodes() {
		add("Error code", "รหัสข้อผิดพลาด", c.Code, api.ErrorDocsPath+"#"+c.Code, c.When, c.Do)
	}
	for _, e := range hooks.Events {
		add("Event", "เหตุการณ์", e.Type, "/docs/webhooks#events", e.When, e.Scope)
	}
	for _, g := range []struct{ th, en, url, text string }{
		{"เริ่มต้น: คีย์ทดสอบ", "Quickstart: a test key", "/docs#key", "sandbox test key portal serve account"},
		{"เริ่มต้น: หนึ่งเดือน", "Quickstart: a room's month", "/docs#month", "reading bill charge discount late fee payment link promptpay receipt curl go typescript sdk idempotency"},
		{"เริ่มต้น: เหตุการณ์บนเครื่อง", "Quickstart: events on your machine", "/docs#events", "rentapi listen forward stream webhook local"},
		{"Webhooks: ลายมือชื่อ", "Webhooks: verifying signatures", "/docs/webhooks#verify", "signature hmac sha256 timestamp secret rotation verify"},
		{"Webhooks: การลองใหม่", "Webhooks: retries", "/docs/webhooks#retries", "retry schedule disabled failing endpoint"},
		{"ข้อผิดพลาด: การลองใหม่", "Errors: retry rules", "/docs/errors#retries", "retry-after backoff 429 503 500 idempotency"},
	} {
		add("Guide", "คู่มือ", g.th+" · "+g.en, g.url, "", g.text)
	}
	for _, s := range cl.Sections {
		for _, c := range s.Changes {
			add("Changelog", "การเปลี่ยนแปลง", s.Date, "/docs/changelog#"+s.Date, plain(c))
		}
	}
	return out
}

// search finds the entries holding every word of the query, those whose
// title holds them first.
func search(index []searchEntry, query string) ([]searchEntry, bool) {
	words := strings.Fields(strings.ToLower(query))
	if len(words) == 0 {
		return nil, false
	}
	var title, rest []searchEntry
	for _, e := range index {
		if !containsAll(e.text, words) {
			continue
		}
		if containsAll(strings.ToLower(e.Title), words) {
			title = append(title, e)
		} else {
			rest = append(rest, e)
		}
	}
	all := append(title, rest...)
	if len(all) > maxResults {
		return all[:maxResults], true
	}
	return all, false
}

func containsAll(text string, words []string) bool {
	return !slices.ContainsFunc(words, func(w string) bool { return !strings.Contains(text, w) })
}

// plain is rendered Markdown as text, for snippets and matching.
func plain(h template.HTML) string {
	return strings.Join(strings.Fields(html.UnescapeString(htmlTags.ReplaceAllString(string(h), " "))), " ")
}

var htmlTags = regexp.MustCompile(`<[^>]*>`)

// clip is a snippet's first 200 characters.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 200 {
		return s
	}
	r := []rune(s)
	return string(r[:200]) + "…"
}

// handleQuickstart is /docs, with the service's own address in its
// examples.
func (s *site) handleQuickstart(w http.ResponseWriter, r *http.Request, v *visit) error {
	q := s.docs.quickstart
	q.Base = s.quickstartBase()
	return s.render(w, r, http.StatusOK, "docs_quickstart", page{Area: v.area, Wide: true, Data: q})
}

// quickstartBase is the service's address in the examples: its public
// URL, or serve's default.
func (s *site) quickstartBase() string {
	if s.publicURL == "" {
		return "http://127.0.0.1:8080"
	}
	return s.publicURL
}

// handleResource is one resource's page of the reference.
func (s *site) handleResource(w http.ResponseWriter, r *http.Request, v *visit) error {
	for _, t := range s.docs.ref.Tags {
		if t.Slug == r.PathValue("resource") {
			return s.render(w, r, http.StatusOK, "docs_resource", page{Area: v.area, Wide: true, Data: resourcePage{Tag: t}})
		}
	}
	return rental.NotFound("page", "")
}

// handleSearch is /docs/search?q=: at most 100 characters.
func (s *site) handleSearch(w http.ResponseWriter, r *http.Request, v *visit) error {
	q, err := rental.ParseSearch(r.URL.Query().Get("q"))
	if err != nil {
		return err
	}
	res, more := search(s.docs.index, q)
	return s.render(w, r, http.StatusOK, "docs_search", page{Area: v.area, Wide: true, Data: searchPage{Query: q, Results: res, More: more}})
}
