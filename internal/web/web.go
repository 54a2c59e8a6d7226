// Package web serves the pages people open in a browser, beside the JSON
// API: the payment page a tenant opens from a bill's link, with its
// PromptPay QR and the form that sends the transfer slip (the unguessable
// token in the URL is its only credential), and its receipt; the
// signed-in areas: the developer portal, where developers manage
// applications, API keys and linked accounts, and the landlord's app, with the consent pages of connect links; and the landing
// page and the documentation (/docs), rendered from the API's OpenAPI
// document and its catalogue of error codes, which are all web takes from
// package api. The pages have their own mux and browser protections (a
// strict Content-Security-Policy, no referrer, no framing, no caching,
// cross-origin request protection); New puts that mux beside the API's,
// asking each which paths are its own. Every page route (routes.go) is one
// shape, a handler of a visit behind the guards it needs (handler.go), and
// every error is answered in one place (fail.go) with the API's statuses
// (request.StatusOf) on its area's page; the request's ID, log line and
// client address are internal/request's, as the API's are.
package web

import (
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
	// SlipsLive tells that a slip-verification provider is configured, as
	// the API's does: without one the payment page of a live bill refuses
	// slips (slips_not_available), as the API does.
	SlipsLive bool
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
	s := &site{db: cfg.DB, log: log, now: cfg.Now, throttle: identity.Throttle{Buckets: cfg.Buckets},
		secure: strings.HasPrefix(cfg.PublicURL, "https://"), publicURL: strings.TrimRight(cfg.PublicURL, "/"), tpl: parseTemplates(),
		pay:    template.Must(template.New("page").Funcs(funcs).Parse(pageHTML)),
		secret: cfg.Secret, guard: cfg.Guard, hashes: make(chan struct{}, maxHashing()), proxies: cfg.TrustedProxies, seller: cfg.Seller, slipsLive: cfg.SlipsLive}
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
	s.routes(browser)

	served := s.logged(browser.ServeMux, protect(browser))
	noPayment := s.logged(nil, protect(s.pages(payArea)(notFound)))
	noPage := s.logged(nil, protect(s.pages(homeArea)(nobodys)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case next.Handles(r.URL.Path):
			next.ServeHTTP(w, r)
		case !browser.Handles(r.URL.Path) && wantsHTML(r):
			noPage.ServeHTTP(w, r) // a browser at a path that is nobody's gets a page
		case !browser.Handles(r.URL.Path):
			next.ServeHTTP(w, r) // an API client gets the envelope's route_not_found
		case !request.CleanPath(r.URL.Path) || !utf8.ValidString(r.URL.Path) || strings.ContainsFunc(r.URL.Path, unicode.IsControl):
			// A page has one address: no redirect to it, and no odd bytes
			// reach a query.
			if strings.HasPrefix(r.URL.Path, payArea.Base+"/") {
				noPayment.ServeHTTP(w, r)
			} else {
				noPage.ServeHTTP(w, r)
			}
		default:
			served.ServeHTTP(w, r)
		}
	})
}

// logged gives each page request an ID and one log line, as the API does
// for its requests: the route pattern, never the path, whose token is the
// payment link's only credential.
//
// mux names the route; with none (a path with empty or dot segments, which
// a mux would name by its cleaned path, token and all) the route is "".
func (s *site) logged(mux *http.ServeMux, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line, r := request.Begin(w, r, r.Context())
		var route string
		if mux != nil {
			_, route = mux.Handler(r)
		}
		defer func() { line.Log(r.Context(), s.log, r, route, s.proxies) }()
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
