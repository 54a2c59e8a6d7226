// Package request is what every HTTP request to the service shares, the
// API's and the pages' alike: its ID (in X-Request-ID, the context and the
// log), its one log line, the writer that remembers the status for that
// line, the clean-path rule (a mux would redirect an unclean path to
// another route), the client's address behind trusted proxies
// (proxies.go), the status a domain error is answered with, the Mux
// both serve on (mux.go), which says which paths are its own, so that the
// two are put side by side by asking rather than by lists of prefixes, and
// the listener whose connections send an answer in one write (whole.go). It
// lives apart from both so that neither borrows the other's plumbing, and
// a change to a request's log line or to who is believed about an address
// is made once.
package request

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"rentapi/internal/rental"
)

// StatusClientClosed is the status a request's log line and metrics get
// when the client hung up before the answer (nginx's 499): it is never sent.
const StatusClientClosed = 499

// Line is one request under way: its ID, its start and the writer that
// remembers its status, everything its log line needs but the route and
// what the caller adds.
type Line struct {
	ID    string
	Start time.Time
	W     *StatusWriter
}

// Begin gives a request its ID (in the X-Request-ID header and the
// context, where ID finds it) and starts its log line. ctx is r's context
// with what the caller adds to it, or r's context: a request is copied
// once for both. The request and the writer returned are the ones to
// serve it with.
func Begin(w http.ResponseWriter, r *http.Request, ctx context.Context) (*Line, *http.Request) {
	l := &Line{ID: rental.NewID(rental.PrefixRequest), Start: time.Now()}
	w.Header().Set(IDHeader, l.ID)
	l.W = &StatusWriter{ResponseWriter: w}
	return l, r.WithContext(context.WithValue(ctx, idKey{}, l.ID))
}

// Log writes the request's one log line to log, at Info: its ID, method,
// route (the pattern, never the path, which can hold a payment link's
// token), status, duration and the client's address, then extra. The
// record is handed to log's handler as built, with no caller's program
// counter (the service's handlers do not print the source): slog.Logger
// would walk the stack for it and box each attribute, about a twentieth
// of a read's CPU for a line that is the same on every request.
func (l *Line) Log(ctx context.Context, log *slog.Logger, r *http.Request, route string, proxies Proxies, extra ...slog.Attr) {
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", l.ID), slog.String("method", LogMethod(r.Method)), slog.String("route", route),
		slog.Int("status", l.W.Sent()), slog.Int64("duration_ms", time.Since(l.Start).Milliseconds()), slog.String("remote", proxies.ClientIP(r)))
	rec.AddAttrs(extra...)
	_ = h.Handle(ctx, rec) // a log line that cannot be written is not the request's failure
}

// IDHeader is the header that carries a request's ID (X-Request-ID in the
// docs; a header's name is the same in any case), spelled as Go keeps a
// header's name: spelled otherwise, it is converted into a new string on
// every request.
const IDHeader = "X-Request-Id"

type idKey struct{}

// ID is the ID Begin gave the request of ctx, quoted in its log lines and
// its error answers; "" outside one.
func ID(ctx context.Context) string {
	id, _ := ctx.Value(idKey{}).(string)
	return id
}

// StatusWriter remembers the status written, for the log line and the
// meter.
type StatusWriter struct {
	http.ResponseWriter
	// Status is the status written; 0 until one is.
	Status int
	// OnStatus, if set, is called once, before the status is sent.
	OnStatus func(int)
}

// WriteHeader remembers the first status and sends it.
func (w *StatusWriter) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
		if w.OnStatus != nil {
			w.OnStatus(code)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write sends a 200 first if no status was written, as net/http does.
func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (read deadlines).
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Sent is the status the client got: the one written, or net/http's 200
// when nothing was.
func (w *StatusWriter) Sent() int {
	if w.Status == 0 {
		return http.StatusOK
	}
	return w.Status
}

// CleanPath reports whether p is absolute with no empty, "." or ".."
// segments, which ServeMux would answer with a redirect: a path is exactly
// a route or none, never sent on to another.
func CleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}

// LogMethod is the request's method for a log line: a made-up method is a
// token a client chose freely, and could carry anything.
func LogMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// KindStatus is the one mapping from a domain error's kind to HTTP status.
func KindStatus(k rental.Kind) int {
	switch k {
	case rental.KindInvalid:
		return http.StatusBadRequest
	case rental.KindUnauthenticated:
		return http.StatusUnauthorized
	case rental.KindPaymentRequired:
		return http.StatusPaymentRequired
	case rental.KindForbidden:
		return http.StatusForbidden
	case rental.KindNotFound:
		return http.StatusNotFound
	case rental.KindConflict:
		return http.StatusConflict
	case rental.KindRateLimited:
		return http.StatusTooManyRequests
	case rental.KindUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// statusError is an error that names its own status.
type statusError interface {
	error
	HTTPStatus() int
}

// StatusOf is the HTTP status of any error: the status of an error that
// names its own (the API's errors about the request as HTTP carried it), a
// domain error's by its kind, 500 for anything else. The pages answer with
// the same statuses as the API.
func StatusOf(err error) int {
	if s, ok := errors.AsType[statusError](err); ok {
		return s.HTTPStatus()
	}
	if e, ok := rental.AsError(err); ok {
		return KindStatus(e.Kind)
	}
	return http.StatusInternalServerError
}
