package web

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"rentapi"
	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/webhook"
)

// examples are the webhook receiver's signature checks, shown on
// /docs/webhooks; the README shows the same text, and a test compiles and
// runs the Go one.
//
//go:embed examples
var examples embed.FS

// docsArea is the documentation: public pages, with links to each other in
// the bar instead of a person's menu.
var docsArea = area{Base: "/docs", NameTH: "เอกสาร API", NameEN: "API documentation",
	Links: []navItem{{"/docs", "เริ่มต้น", "Quickstart"}, {"/docs/api", "อ้างอิง", "Reference"}, {"/docs/errors", "ข้อผิดพลาด", "Errors"},
		{"/docs/webhooks", "เว็บฮุก", "Webhooks"}, {"/docs/changelog", "การเปลี่ยนแปลง", "Changelog"}, {"/docs/search", "ค้นหา", "Search"}}}

// homeArea is the landing page and the not-found page of paths that are
// nobody's.
var homeArea = area{Base: "/", NameTH: "API จัดการหอพัก", NameEN: "Rental management API",
	Links: []navItem{{"/docs", "เอกสาร", "Docs"}, {"/portal", "นักพัฒนา", "Developers"}, {"/app", "เจ้าของหอพัก", "Landlords"}}}

// eventWhen says what makes each event type happen, for the webhooks page;
// a test holds it to rental.EventTypes.
var eventWhen = map[string]string{
	"property.created":       "A property was created (by the API or the landlord).",
	"property.updated":       "A property's details, rates or due day changed.",
	"property.deleted":       "A property was deleted.",
	"room.created":           "A room was created: by the landlord, an import, the API or a tenant registering via chat.",
	"room.updated":           "A room's number, rent, floor or status changed (a move-in or move-out changes its status).",
	"room.deleted":           "A room was deleted.",
	"tenant.created":         "A tenant moved into a room.",
	"tenant.updated":         "A tenant's details or chat settings changed.",
	"tenant.deleted":         "A tenant moved out.",
	"tenant.line_registered": "A tenant connected their chat account to the service's chat channel.",
	"settlement.created":     "A tenant moved out with POST /v1/rooms/{room_id}/tenant/move-out: the deposit set against the unpaid bills and deductions.",
	"settlement.closed":      "The landlord closed a settlement: the refund was returned or the amount due received.",
	"meter.reading.created":  "A month's meter reading was recorded for a room.",
	"meter.reading.updated":  "A month's meter reading was corrected.",
	"bill.created":           "A bill was created from a month's reading.",
	"bill.updated":           "A bill was recalculated or its status changed: issued, partly or fully paid.",
	"bill.overdue":           "An issued bill passed its due date unpaid.",
	"bill.deleted":           "A draft bill was deleted.",
	"payment.pending":        "A tenant opened the bill's payment page: a PromptPay QR is waiting to be paid.",
	"payment.paid":           "The payment provider confirmed the payment; sent exactly once per payment.",
	"payment.failed":         "A QR payment ended unpaid: expired or canceled (see data.object.status).",
	"slip.verified":          "The provider read a tenant's slip as a transfer to the landlord: its payment is recorded (payment.paid, bill.updated).",
	"slip.rejected":          "A tenant's slip was rejected: see data.object.rejection_reason.",
	"notification.sent":      "A chat message reached the tenant.",
	"notification.failed":    "The service stopped retrying a chat message.",
	"webhook.test":           "A test event was requested in the portal or with POST /v1/webhook-endpoints/{id}/test.",
	"account.linked":         "A landlord approved the application's connect link (live mode; only this application sees it).",
	"account.unlinked":       "The landlord or the developer disconnected the account from the application.",
}

// eventDoc is one event type on the webhooks page.
type eventDoc struct{ Type, When, Scope string }

// webhookDocs is what the webhooks page shows: every event type, the
// delivery headers, the signature checks and the retry schedule, from the
// values the service delivers with.
type webhookDocs struct {
	Events       []eventDoc
	UserAgent    string
	GoExample    string
	ShellExample string
	Retries      []string
	Attempts     int
	Jitter       int
	FailingDays  int
}

// newWebhookDocs reads the webhooks page's content from the values the
// deliveries use; an event type without a description is an error.
func newWebhookDocs() (webhookDocs, error) {
	d := webhookDocs{UserAgent: webhook.UserAgent, Attempts: rental.MaxAttempts, Jitter: int(rental.RetryJitter * 100),
		FailingDays: int(rental.FailingFor / (24 * time.Hour))}
	if len(eventWhen) != len(rental.EventTypes) {
		return d, fmt.Errorf("web: %d event types described, %d exist", len(eventWhen), len(rental.EventTypes))
	}
	for _, typ := range rental.EventTypes {
		when, ok := eventWhen[typ]
		if !ok {
			return d, fmt.Errorf("web: event type %s is not described", typ)
		}
		scope := "none beyond the link"
		for _, es := range rental.EventScopes {
			if strings.HasPrefix(typ, es.Prefix) && es.Scope != "" {
				scope = string(es.Scope)
				break
			}
		}
		d.Events = append(d.Events, eventDoc{Type: typ, When: when, Scope: scope})
	}
	for _, gap := range rental.RetryGaps {
		d.Retries = append(d.Retries, duration(gap))
	}
	goSrc, err := examples.ReadFile("examples/verify.go.txt")
	if err != nil {
		return d, err
	}
	sh, err := examples.ReadFile("examples/verify.sh")
	if err != nil {
		return d, err
	}
	d.GoExample, d.ShellExample = string(goSrc), string(sh)
	return d, nil
}

// duration writes a retry gap as people do: "5 min", "2 h".
func duration(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%d h", d/time.Hour)
	}
	return fmt.Sprintf("%d min", d/time.Minute)
}

// errorGroup is the codes of one status on the error page.
type errorGroup struct {
	Status int
	Title  string
	Codes  []errorDoc
}

// errorDoc is one code's section of the error page.
type errorDoc struct {
	api.ErrorCode
	WhenHTML, DoHTML template.HTML
	Surfaces         []string
}

// surfaceName says where a code is answered, for people.
var surfaceName = map[string]string{
	api.WhereAPI:      "the API (JSON envelope)",
	api.WhereProvider: "payment provider confirmations",
	api.WhereConnect:  "the connect redirect (error=…)",
	api.WherePages:    "the service's own pages",
}

// newErrorGroups groups api.ErrorCodes by status for the error page.
func newErrorGroups() []errorGroup {
	codes := map[string]bool{}
	for _, c := range api.ErrorCodes() {
		codes[c.Code] = true
	}
	var out []errorGroup
	for _, c := range api.ErrorCodes() {
		if len(out) == 0 || out[len(out)-1].Status != c.Status {
			title := "Connect redirect"
			if c.Status != 0 {
				title = fmt.Sprintf("%d %s", c.Status, http.StatusText(c.Status))
			}
			out = append(out, errorGroup{Status: c.Status, Title: title})
		}
		d := errorDoc{ErrorCode: c, WhenHTML: renderMarkdown(c.When, codes), DoHTML: renderMarkdown(c.Do, codes)}
		for _, w := range c.Where {
			d.Surfaces = append(d.Surfaces, surfaceName[w])
		}
		out[len(out)-1].Codes = append(out[len(out)-1].Codes, d)
	}
	return out
}

// docs holds the documentation pages' content, read once at start.
type docs struct {
	ref        *reference
	errors     []errorGroup
	webhooks   webhookDocs
	changelog  *changelog
	quickstart quickstart
	index      []searchEntry
}

// loadDocs reads the documentation once per process: it is the same for
// every handler New makes.
var loadDocs = sync.OnceValues(newDocs)

// newDocs reads the reference, the error codes and the webhooks page.
func newDocs() (*docs, error) {
	ref, err := newReference(api.Document())
	if err != nil {
		return nil, err
	}
	hooks, err := newWebhookDocs()
	if err != nil {
		return nil, err
	}
	cl, err := newChangelog(rentapi.Changelog)
	if err != nil {
		return nil, err
	}
	qs, err := newQuickstart(ref)
	if err != nil {
		return nil, err
	}
	return &docs{ref: ref, errors: newErrorGroups(), webhooks: hooks, changelog: cl, quickstart: qs, index: newSearchIndex(ref, hooks, cl)}, nil
}

// handleDoc serves a page of the documentation, as wide as a desktop
// lets it be, from its template and what it shows.
func (s *site) handleDoc(name string, data any) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		return s.render(w, r, http.StatusOK, name, page{Area: v.area, Wide: true, Data: data})
	}
}

// handleHome serves the landing page.
func (s *site) handleHome(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, http.StatusOK, "home", page{Area: v.area})
}

// wantsHTML reports whether the client asked for a page: browsers put
// text/html in Accept; API clients ask for JSON or anything.
func wantsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		media, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(media), "text/html") {
			continue
		}
		refused := false
		for _, p := range strings.Split(params, ";") {
			if k, v, _ := strings.Cut(strings.TrimSpace(p), "="); strings.EqualFold(k, "q") {
				q, err := strconv.ParseFloat(v, 64)
				refused = err == nil && q == 0
			}
		}
		if !refused {
			return true
		}
	}
	return false
}
