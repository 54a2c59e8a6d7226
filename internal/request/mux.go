package request

import (
	"net/http"
	"strings"
)

// Mux is a ServeMux that can say which paths are its own, so that the API
// and the pages, each on its own mux, are put beside each other by asking
// each whether it handles a path (as tailscale's safeweb does) rather than
// by lists of the other's prefixes kept by hand.
//
// A mux owns the exact paths of its one-segment patterns ("/healthz",
// "/portal", "/" for "/{$}") and everything under the first segment of its
// longer ones ("/v1/…" for "GET /v1/bills/{bill_id}"), whatever the
// method: its own 404 and 405 answer the rest there. Claim adds an exact
// path that no pattern matches.
type Mux struct {
	*http.ServeMux
	leaves map[string]bool
	trees  map[string]bool
}

// NewMux returns an empty mux.
func NewMux() *Mux {
	return &Mux{ServeMux: http.NewServeMux(), leaves: map[string]bool{}, trees: map[string]bool{}}
}

// Handle registers h for pattern ("[METHOD ]/path", no host) and claims
// the pattern's paths.
func (m *Mux) Handle(pattern string, h http.Handler) {
	m.claim(pattern)
	m.ServeMux.Handle(pattern, h)
}

// HandleFunc registers f for pattern, as Handle does.
func (m *Mux) HandleFunc(pattern string, f func(http.ResponseWriter, *http.Request)) {
	m.Handle(pattern, http.HandlerFunc(f))
}

// Claim makes an exact path ("/v1") this mux's though no pattern matches
// it: its own not-found answers it, as it answers the paths under it.
func (m *Mux) Claim(path string) {
	if strings.Count(path, "/") != 1 || !strings.HasPrefix(path, "/") {
		panic("request: only a one-segment path can be claimed: " + path) // a programming error
	}
	m.leaves[path[1:]] = true
}

func (m *Mux) claim(pattern string) {
	p := pattern
	if _, after, ok := strings.Cut(pattern, " "); ok {
		p = strings.TrimLeft(after, " \t")
	}
	if !strings.HasPrefix(p, "/") {
		panic("request: a pattern with a host, or none with a path: " + pattern) // a programming error
	}
	first, _, deeper := strings.Cut(p[1:], "/")
	switch {
	case first == "{$}" && !deeper:
		m.leaves[""] = true
	case strings.HasPrefix(first, "{"):
		panic("request: a pattern whose first segment is a wildcard claims every path: " + pattern)
	case deeper:
		m.trees[first] = true
	default:
		m.leaves[first] = true
	}
}

// Handles reports whether the path is this mux's: one of its one-segment
// patterns' paths, or under the first segment of one of its longer ones.
// Empty and dot segments are judged as sent, not cleaned.
func (m *Mux) Handles(path string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	first, _, deeper := strings.Cut(path[1:], "/")
	if deeper {
		return m.trees[first]
	}
	return m.leaves[first]
}
