// Package api is the JSON HTTP interface under /v1 and the OpenAPI document
// that describes it (openapi.go serves it; errcodes.go lists every error
// code it documents), with the probes and the two signed entry points that
// are no part of the developers' API: a payment provider's confirmations
// and the LINE webhook (whose events chat takes). NewServer (server.go)
// builds it; routes.go lists every route on one screen. Every operation runs through one adapter (endpoint.go)
// that authenticates, selects the account, checks scope, limits the rate,
// makes writes idempotent and transactional (idempotency.go), and renders the
// response once; handlers only decode, call the store and return a value or
// an error. errors.go renders every error in the envelope, with the status
// internal/request maps it to (the pages use the same); errors about the
// request as HTTP carried it (method, sizes, media type, timing) are the
// API's own, not the domain's, and name their own status; every other
// error, a body or query the API cannot read included, is one of rental's
// (rental/input.go, rental/refusal.go), which the API only picks. What every
// request shares with the pages' (its ID, log line, status writer, clean
// path, client address) is internal/request's.
package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"rentapi/internal/bucket"
	"rentapi/internal/chat"
	"rentapi/internal/metric"
	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

// Config is what the API needs from its process.
type Config struct {
	DB     *store.DB
	Secret *secret.Secret
	Log    *slog.Logger
	// Now is the clock; defaults to the store's, so tests move both at once.
	Now func() time.Time
	// MaxInFlight bounds the API requests served at once, a quarter of
	// them for any one developer; more wait up to OverloadWait and then get
	// 503. Defaults: 256 and 10 s.
	MaxInFlight  int
	OverloadWait time.Duration
	// BodyTimeout is how long a client has to send a write's body (408
	// after it); default 10 s.
	BodyTimeout time.Duration
	// NoRateLimits turns the per-second limits off, for capacity
	// benchmarks only; quotas still apply.
	NoRateLimits bool
	// NoKeptAnswers keeps no answers of reads by their version tag (see
	// answers), for the benchmark that measures what keeping them saves.
	NoKeptAnswers bool
	// NoRequestLog keeps no log of requests for the portal, for the
	// benchmark that measures what the log costs.
	NoRequestLog bool
	// Buckets keeps the rate limits; when nil, they are kept in Redis at
	// RedisURL (so that several processes share them; RedisPrefix
	// namespaces the keys there), or in this process's memory. When the
	// store fails, this process's own buckets stand in (fallback).
	Buckets     bucket.Store
	RedisURL    string
	RedisPrefix string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For is
	// believed about the client's address.
	TrustedProxies request.Proxies
	// Guard checks webhook URLs when they are registered; the job client's
	// sender checks them again on every connection.
	Guard webhook.Guard
	// PublicURL is the service's address as tenants' phones reach it
	// (scheme and host, no trailing slash): payment pages live under it.
	PublicURL string
	// Providers are the payment providers whose signed confirmations are
	// taken, each with its own secret.
	Providers map[string]string
	// Metrics counts requests and refusals for the operator; nil counts
	// nothing.
	Metrics *metric.Set
	// ChatLive tells that a LINE channel is configured; without one, live
	// sends are 503 chat_unavailable (test mode never calls LINE).
	ChatLive bool
	// LINE replies to tenants registering through the service's LINE
	// webhook, whose signatures LineChannelSecret checks; without the
	// secret the webhook refuses everything.
	LINE              *chat.Client
	LineChannelSecret string
	// SlipsLive tells that a slip-verification provider is configured;
	// without one, live slips are 409 slips_not_available (test mode's
	// provider is simulated).
	SlipsLive bool
}

// Server serves the API. It holds no request state between requests other
// than the in-memory rate limiters.
type Server struct {
	// ending closes when the server shuts down (EndStreams): open event
	// streams end then, rather than hold the shutdown until its timeout.
	ending    chan struct{}
	endStream func()
	proxies   request.Proxies
	noting    chan struct{} // key-use writes under way (noteKeyUse)
	db        *store.DB
	secret    *secret.Secret
	log       *slog.Logger
	now       func() time.Time
	mux       *request.Mux
	patterns  []string
	gate      *gate
	bodyWait  time.Duration
	limits    *limits
	meter     *meter
	// requests is the portal's request log; nil when NoRequestLog.
	requests *requestLog
	doc      *document
	guard    webhook.Guard
	// publicURL is where payment pages are; providers sign confirmations.
	publicURL string
	providers map[string]string
	// known are the patterns on the mux: the only route labels there are.
	known   map[string]bool
	metrics *metric.Set
	// chatLive is Config.ChatLive; the rest is the LINE webhook's: the
	// secret its signatures are checked with, and the inbox that takes its
	// events.
	chatLive   bool
	slipsLive  bool
	lineSecret string
	lineInbox  *chat.Inbox
	// running is the Idempotency-Keys of writes under way here.
	running running
	// bodies are the buffers handlers' answers are rendered into (see
	// renderInto).
	bodies sync.Pool
	// kept is the answers of reads kept by their version tag; nil keeps
	// none.
	kept *answers
	// today is the calendar day of the last request's quota (see todayAt).
	today atomic.Pointer[rental.Today]
}

// NewServer builds the API server.
func NewServer(cfg Config) (*Server, error) {
	s := &Server{db: cfg.DB, secret: cfg.Secret, log: cfg.Log, now: cfg.Now, mux: request.NewMux(), guard: cfg.Guard,
		publicURL: strings.TrimRight(cfg.PublicURL, "/"), providers: cfg.Providers, known: map[string]bool{}, metrics: cfg.Metrics,
		chatLive: cfg.ChatLive, slipsLive: cfg.SlipsLive, lineSecret: cfg.LineChannelSecret, proxies: cfg.TrustedProxies,
		ending: make(chan struct{})}
	s.endStream = sync.OnceFunc(func() { close(s.ending) })
	if s.publicURL == "" {
		return nil, errors.New("api: the public URL of payment pages is not set")
	}
	s.bodies.New = func() any { return &bodyBuffer{pool: &s.bodies} }
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = cfg.DB.Now
	}
	s.lineInbox = &chat.Inbox{DB: cfg.DB, Client: cfg.LINE, Log: s.log, SlipsLive: cfg.SlipsLive}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 256
	}
	if cfg.OverloadWait <= 0 {
		cfg.OverloadWait = 10 * time.Second
	}
	s.gate = newGate(cfg.MaxInFlight, cfg.OverloadWait)
	s.noting = make(chan struct{}, 4)
	s.bodyWait = cmp.Or(cfg.BodyTimeout, 10*time.Second)
	buckets := cfg.Buckets
	if buckets == nil {
		var err error
		if buckets, err = bucket.Open(context.Background(), cfg.RedisURL, cfg.RedisPrefix+"rentapi:"); err != nil {
			return nil, fmt.Errorf("api: redis: %w", err)
		}
	}
	s.limits = &limits{store: &fallback{shared: buckets, local: bucket.NewMemory(), log: s.log, metrics: s.metrics}, log: s.log, off: cfg.NoRateLimits}
	s.meter = newMeter(cfg.DB, s.log)
	if !cfg.NoKeptAnswers {
		s.kept = newAnswers(keptAnswersBytes)
	}
	build() // the digest tags are made with, now rather than at the first read
	if !cfg.NoRequestLog {
		s.requests = &requestLog{db: cfg.DB, log: s.log}
	}
	doc, err := loadDocument()
	if err != nil {
		return nil, err
	}
	s.doc = doc
	s.routes()
	if err := s.metrics.WatchInFlight(s.inFlight); err != nil {
		return nil, fmt.Errorf("api: metrics: %w", err)
	}
	return s, nil
}

// inFlight is the number of API requests holding a place in the overload
// gate, for the metrics.
func (s *Server) inFlight() int { return s.gate.inFlight() }

// Handles reports whether a path is the API's, which it answers in JSON
// whatever the client accepts: a route's, under any method, or any under
// /v1 and its other prefixes. The pages are put beside the API by asking
// it.
func (s *Server) Handles(path string) bool { return s.mux.Handles(path) }

// ServeHTTP gives every request an ID, logs it, counts it in the metrics,
// recovers a panic into a 500, and answers unknown routes and methods in the
// error envelope.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	info := &requestInfo{}
	line, r := request.Begin(w, r, context.WithValue(r.Context(), requestInfoKey{}, info))
	sw := line.W
	h, pattern := s.mux.Handler(r)
	route := metric.Unmatched
	if s.known[pattern] {
		route = pattern
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.ErrorContext(r.Context(), "panic", "request_id", line.ID, "panic", p)
			if sw.Status == 0 {
				s.writeError(sw, r, rental.Internal())
			}
		}
		status, elapsed := sw.Sent(), time.Since(line.Start)
		s.metrics.Request(route, status, info.mode, elapsed)
		attrs := append(make([]slog.Attr, 0, 5), slog.String("path", logPath(r.URL.Path)),
			slog.String("application_id", info.applicationID), slog.String("account_id", info.accountID), slog.String("mode", info.mode))
		if status >= 400 {
			attrs = append(attrs, slog.String("code", info.code))
			if route != readyRoute { // an unready database is no refusal of a client
				s.metrics.Refused(info.code)
			}
		}
		line.Log(r.Context(), s.log, r, route, s.proxies, attrs...)
		if info.applicationID != "" {
			s.requests.add(store.LoggedRequest{ID: line.ID, ApplicationID: info.applicationID, Mode: info.mode, AccountID: info.accountID,
				Method: request.LogMethod(r.Method), Path: loggedPath(r.URL.Path), Status: status, Code: info.code, Latency: elapsed,
				KeyLast4: info.keyLast4, At: s.now()})
		}
	}()
	if requestHeaderSize(r) > maxHeaderBytes {
		s.writeError(sw, r, requestErrorf(http.StatusRequestHeaderFieldsTooLarge, "request_header_too_large",
			"The request's headers are over the limit of %d KB.", maxHeaderBytes>>10))
		return
	}
	if !request.CleanPath(r.URL.Path) {
		// The mux would redirect to the cleaned path, sending a write to
		// another route: an API path is exactly a route or none.
		s.writeError(sw, r, rental.RouteNotClean(r.Method, r.URL.Path))
		return
	}
	info.query = r.URL.Query()
	if keyInURL(info.query) {
		s.writeError(sw, r, rental.APIKeyInQuery())
		return
	}
	if pattern == "" {
		probe := &request.StatusWriter{ResponseWriter: discardWriter{h: http.Header{}}}
		h.ServeHTTP(probe, r)
		if probe.Status == http.StatusMethodNotAllowed {
			sw.Header().Set("Allow", probe.Header().Get("Allow"))
			s.writeError(sw, r, requestErrorf(http.StatusMethodNotAllowed, "method_not_allowed",
				"%s is not allowed on %s; allowed: %s.", r.Method, r.URL.Path, probe.Header().Get("Allow")))
			return
		}
		s.writeError(sw, r, rental.RouteNotFound(r.Method, r.URL.Path))
		return
	}
	s.mux.ServeHTTP(sw, r)
}

// maxHeaderBytes bounds a request's line and headers (431 beyond). The HTTP
// server reads up to 1 MB of them, so that everything in between gets an
// answer in the envelope.
const maxHeaderBytes = 64 << 10

// requestHeaderSize is about what the request line and headers took on the
// wire.
func requestHeaderSize(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + len(r.Host) + 4
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + len(v) + 4
		}
	}
	return n
}

// requestInfo is what the request's log line needs to know, filled in as the
// request is authenticated.
type requestInfo struct {
	applicationID string
	// keyLast4 is the key's, once it is recognised.
	keyLast4  string
	accountID string
	// mode is the key's, once it is recognised.
	mode string
	// code is the error code of the last error rendered, the one answered.
	code string
	// query is the request's query, parsed once: keyInURL looks for a key
	// in it, and checkQuery checks it against the endpoint's parameters
	// (two parses were a twelfth of what a read allocated).
	query url.Values
	// late are header fields of the answer that request.Whole writes (the
	// quota's, in live mode; see response.write), in lateFields.
	late       []request.Field
	lateFields [3]request.Field
}

type requestInfoKey struct{}

func info(ctx context.Context) *requestInfo {
	if i, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return i
	}
	return &requestInfo{}
}

// requestID is the request's ID, which request.Begin gave it.
func requestID(ctx context.Context) string { return request.ID(ctx) }

// discardWriter lets the mux's own 404/405 answer be inspected, not sent.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}

// logPath is the path for the log, with any segment that holds something
// shaped like an API key or webhook secret blanked: a client that pastes a
// key into a URL must not put it in our logs as well.
func logPath(p string) string {
	if !strings.Contains(p, rental.KeyPrefixTest) && !strings.Contains(p, rental.KeyPrefixLive) && !strings.Contains(p, rental.SecretPrefix) {
		return p
	}
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if strings.Contains(seg, rental.KeyPrefixTest) || strings.Contains(seg, rental.KeyPrefixLive) || strings.Contains(seg, rental.SecretPrefix) {
			segs[i] = "[redacted]"
		}
	}
	return strings.Join(segs, "/")
}

// EndStreams ends every open event stream (GET /v1/events/stream): a
// server shutting down calls it (http.Server.RegisterOnShutdown), since
// net/http waits for streams as for any request, and their clients
// reconnect, with Last-Event-ID, to a process still serving.
func (s *Server) EndStreams() { s.endStream() }
