// Package web serves the pages people open in a browser, beside the JSON
// API: the payment page a tenant opens from a bill's link, with its
// PromptPay QR (the unguessable token in the URL is its only credential),
// and the signed-in areas: the developer portal, where developers manage
// applications, API keys and linked accounts, and the landlord's app. The
// pages have their own mux and browser protections (a strict
// Content-Security-Policy, no referrer, no framing, no caching,
// cross-origin request protection). Errors get the API's statuses
// (request.StatusOf) on a page of their own; the request's ID, log line and
// client address are internal/request's, as the API's are.
package web

import (
	"bytes"
	"context"
	"embed"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"rentapi/internal/bucket"
	"rentapi/internal/identity"
	"rentapi/internal/promptpay"
	"rentapi/internal/request"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

//go:embed assets
var assets embed.FS

//go:embed page.html
var pageHTML string

// Config is what the pages need from the process.
type Config struct {
	DB  *store.DB
	Log *slog.Logger
	// PublicURL is the service's address as browsers reach it (scheme and
	// host): https makes session cookies Secure and __Host- prefixed.
	PublicURL string
	// Buckets keeps the sign-in throttle's counts; shared by every process
	// when it is Redis. Defaults to this process's memory.
	Buckets bucket.Store
	// Now is the clock; defaults to the store's.
	Now func() time.Time
	// Secret is the server secret, the API's: the portal seals webhook
	// signing secrets with it as the API does, so the delivery jobs open
	// either. Without it the portal's webhook pages are not served.
	Secret *secret.Secret
	// Guard judges the webhook URLs developers register in the portal, as
	// the API's guard does.
	Guard webhook.Guard
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed about the client's address, as the API's are.
	TrustedProxies request.Proxies
	// Seller is printed on the developers' invoices as who they are from;
	// the name defaults to "rentapi".
	Seller Seller
}

// pages serves the payment pages.
type pages struct {
	db      *store.DB
	log     *slog.Logger
	page    *template.Template
	proxies request.Proxies
}

// API is the JSON API the pages are served beside, which says which paths
// are its own.
type API interface {
	http.Handler
	Handles(path string) bool
}

// New returns the handler of the whole service: the pages for browsers
// (the landing page, the documentation, the payment page, the developer
// portal, the landlord's app, the consent pages, their stylesheet) on their
// own mux, and the API beside them. Each mux is asked whether a path is its
// own (as tailscale's safeweb does); a path that is neither's goes to the
// API, which answers it in its envelope, unless a browser (Accept:
// text/html) asks: it gets a not-found page.
func New(cfg Config, next API) http.Handler {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &pages{db: cfg.DB, log: log, page: template.Must(template.New("page").Funcs(funcs).Parse(pageHTML)), proxies: cfg.TrustedProxies}
	s := &site{db: cfg.DB, log: log, now: cfg.Now, throttle: identity.Throttle{Buckets: cfg.Buckets},
		secure: strings.HasPrefix(cfg.PublicURL, "https://"), publicURL: strings.TrimRight(cfg.PublicURL, "/"), tpl: parseTemplates(),
		secret: cfg.Secret, guard: cfg.Guard, hashes: make(chan struct{}, maxHashing()), proxies: cfg.TrustedProxies, seller: cfg.Seller}
	if s.seller.Name == "" {
		s.seller.Name = "rentapi"
	}
	if s.now == nil {
		s.now = cfg.DB.Now
	}
	d, err := loadDocs()
	if err != nil {
		panic(err) // the embedded document and lists are tested: a programming error
	}
	s.docs = d
	if s.throttle.Buckets == nil {
		s.throttle.Buckets = bucket.NewMemory()
	}

	browser := request.NewMux()
	s.routes(browser, p)

	pay := p.logged(browser.ServeMux, protect(browser))
	notFound := p.logged(nil, protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fail(w, r, http.StatusNotFound, nil)
	})))
	nobodys := p.logged(nil, protect(http.HandlerFunc(s.notFound)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case next.Handles(r.URL.Path):
			next.ServeHTTP(w, r)
		case !browser.Handles(r.URL.Path) && wantsHTML(r):
			nobodys.ServeHTTP(w, r) // a browser at a path that is nobody's gets a page
		case !browser.Handles(r.URL.Path):
			next.ServeHTTP(w, r) // an API client gets the envelope's route_not_found
		case !request.CleanPath(r.URL.Path) || !utf8.ValidString(r.URL.Path) || strings.ContainsFunc(r.URL.Path, unicode.IsControl):
			// A page has one address: no redirect to it, and no odd bytes
			// reach a query.
			if strings.HasPrefix(r.URL.Path, "/pay/") {
				notFound.ServeHTTP(w, r)
			} else {
				nobodys.ServeHTTP(w, r)
			}
		default:
			pay.ServeHTTP(w, r)
		}
	})
}

// logged gives each page request an ID and one log line, as the API does
// for its requests: the route pattern, never the path, whose token is the
// payment link's only credential.
//
// mux names the route; with none (a path with empty or dot segments, which
// a mux would name by its cleaned path, token and all) the route is "".
func (p *pages) logged(mux *http.ServeMux, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line, r := request.Begin(w, r)
		var route string
		if mux != nil {
			_, route = mux.Handler(r)
		}
		defer func() { p.log.InfoContext(r.Context(), "request", line.Attrs(r, route, p.proxies)...) }()
		h.ServeHTTP(line.W, r)
	})
}

// protect adds the browser protections every page and asset gets.
func protect(h http.Handler) http.Handler {
	h = http.NewCrossOriginProtection().Handler(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer") // the token must not leave in a Referer
		hd.Set("Cache-Control", "no-store")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cross-Origin-Resource-Policy", "same-origin")
		hd.Set("X-Robots-Tag", "noindex, nofollow")
		h.ServeHTTP(w, r)
	})
}

// handlePage is a tenant opening the payment page: it opens (or reopens)
// the payment, and shows the bill with the QR or why there is none.
func (p *pages) handlePage(w http.ResponseWriter, r *http.Request) {
	var co *store.Checkout
	err := p.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
		co, err = tx.OpenPayment(r.Context(), r.PathValue("token"))
		return err
	})
	if err != nil {
		p.fail(w, r, request.StatusOf(err), err)
		return
	}
	var buf bytes.Buffer
	if err := p.page.Execute(&buf, newView(co)); err != nil {
		p.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// handleHead answers a HEAD of a payment page with the page's status and
// type but opens no payment: only a tenant's GET starts a QR's 15 minutes.
func (p *pages) handleHead(w http.ResponseWriter, r *http.Request) {
	if err := p.db.Read().PaymentLinkExists(r.Context(), r.PathValue("token")); err != nil {
		p.fail(w, r, request.StatusOf(err), err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
}

// handleQR serves the QR image of a pending payment of the link.
func (p *pages) handleQR(w http.ResponseWriter, r *http.Request) {
	payment, ok := strings.CutSuffix(r.PathValue("payment"), ".png")
	if !ok {
		p.fail(w, r, http.StatusNotFound, nil)
		return
	}
	payload, err := p.db.Read().PendingQR(r.Context(), r.PathValue("token"), payment, p.db.Now())
	if err != nil {
		p.fail(w, r, request.StatusOf(err), err)
		return
	}
	png, err := promptpay.PNG(payload, 320)
	if err != nil {
		p.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(png)
}

// fail answers with a short bilingual error page; the cause goes to the log.
func (p *pages) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if err != nil && status >= 500 {
		p.log.ErrorContext(context.WithoutCancel(r.Context()), "payment page", "request_id", request.ID(r.Context()),
			"path_token_len", len(r.PathValue("token")), "error", err.Error())
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	var buf bytes.Buffer
	p.page.Execute(&buf, view{Error: status})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
