package request

import (
	"net/http"
	"testing"
)

// A mux says which paths are its own from its patterns: the exact paths of
// one-segment ones, everything under the first segment of longer ones,
// whatever the method; empty and dot segments as sent.
func TestMuxHandles(t *testing.T) {
	m := NewMux()
	ok := func(http.ResponseWriter, *http.Request) {}
	m.HandleFunc("GET /{$}", ok)
	m.HandleFunc("GET /healthz", ok)
	m.HandleFunc("GET /v1/bills/{bill_id}", ok)
	m.HandleFunc("POST /provider/v1/confirmations/{provider}", ok)
	m.HandleFunc("/pay/", ok)
	m.HandleFunc("GET  /portal", ok)
	m.Claim("/v1")
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/", true},
		{"/healthz", true},
		{"/healthz/", false},
		{"/healthz/x", false},
		{"/v1", true},
		{"/v1/", true},
		{"/v1/nothing-here", true},
		{"/v1//bills", true},
		{"/provider/anything", true},
		{"/provider", false},
		{"/pay/tok", true},
		{"/pay", false},
		{"/portal", true},
		{"/portal/x", false},
		{"/portalx", false},
		{"//v1/bills", false},
		{"/nothing-here", false},
		{"", false},
		{"*", false},
	} {
		if got := m.Handles(c.path); got != c.want {
			t.Errorf("Handles(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

// A pattern that would claim every path, or name a host, is refused when
// the mux is built.
func TestMuxRefusesWildPatterns(t *testing.T) {
	for _, p := range []string{"GET /{tenant}/bills", "example.com/v1/", "GET {x}"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q was taken", p)
				}
			}()
			NewMux().HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
		}()
	}
}
