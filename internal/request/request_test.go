package request

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"rentapi/internal/rental"
)

// A path is a route's only if a mux would not redirect it elsewhere.
func TestCleanPath(t *testing.T) {
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/", true},
		{"/v1/properties", true},
		{"/portal/", true},
		{"", false},
		{"*", false},
		{"v1/properties", false},
		{"//v1/account", false},
		{"/v1//properties", false},
		{"/v1/./properties", false},
		{"/v1/properties/../account", false},
		{"/pay/tok/.", false},
	} {
		if got := CleanPath(c.path); got != c.want {
			t.Errorf("CleanPath(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}

// A made-up method never reaches a log line as sent.
func TestLogMethod(t *testing.T) {
	for _, c := range []struct{ method, want string }{
		{"GET", "GET"}, {"POST", "POST"}, {"DELETE", "DELETE"}, {"OPTIONS", "OPTIONS"},
		{"get", "other"}, {"BREW", "other"}, {"GET\nforged: line", "other"},
	} {
		if got := LogMethod(c.method); got != c.want {
			t.Errorf("LogMethod(%q) = %q, want %q", c.method, got, c.want)
		}
	}
}

// ownStatus is an error that names its own status, as the API's request
// errors do.
type ownStatus struct{ status int }

func (e ownStatus) Error() string   { return fmt.Sprint(e.status) }
func (e ownStatus) HTTPStatus() int { return e.status }

// Every error gets one status, the pages' and the API's alike.
func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{rental.Invalid("name", "too long"), http.StatusBadRequest},
		{rental.Errorf(rental.KindUnauthenticated, "invalid_api_key", "x"), http.StatusUnauthorized},
		{rental.Errorf(rental.KindPaymentRequired, "invoice_overdue", "x"), http.StatusPaymentRequired},
		{rental.Errorf(rental.KindForbidden, "insufficient_scope", "x"), http.StatusForbidden},
		{rental.NotFound("bill", "bill_1"), http.StatusNotFound},
		{rental.Errorf(rental.KindConflict, "x", "x"), http.StatusConflict},
		{rental.Errorf(rental.KindRateLimited, "x", "x"), http.StatusTooManyRequests},
		{rental.Errorf(rental.KindUnavailable, "x", "x"), http.StatusServiceUnavailable},
		{rental.Errorf(rental.KindInternal, "x", "x"), http.StatusInternalServerError},
		{fmt.Errorf("loading: %w", rental.NotFound("bill", "")), http.StatusNotFound},
		{ownStatus{http.StatusRequestTimeout}, http.StatusRequestTimeout},
		{fmt.Errorf("reading: %w", ownStatus{http.StatusRequestEntityTooLarge}), http.StatusRequestEntityTooLarge},
		{errors.New("disk full"), http.StatusInternalServerError},
		{context.Canceled, http.StatusInternalServerError},
	} {
		if got := StatusOf(c.err); got != c.want {
			t.Errorf("StatusOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// Begin names the request in its header and context, and its line's
// status is the one sent: net/http's 200 when nothing was written.
func TestBegin(t *testing.T) {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/pay/tok", nil)
	line, r := Begin(rec, req, req.Context())
	if line.ID == "" || rec.Header().Get("X-Request-ID") != line.ID || ID(r.Context()) != line.ID {
		t.Fatalf("ID %q, header %q, context %q", line.ID, rec.Header().Get("X-Request-ID"), ID(r.Context()))
	}
	if ID(context.Background()) != "" {
		t.Error("an ID outside a request")
	}
	if line.W.Sent() != http.StatusOK {
		t.Errorf("nothing written: %d", line.W.Sent())
	}
	var seen []int
	line.W.OnStatus = func(s int) { seen = append(seen, s) }
	line.W.WriteHeader(http.StatusTeapot)
	line.W.WriteHeader(http.StatusOK)
	if line.W.Sent() != http.StatusTeapot || len(seen) != 1 || rec.Code != http.StatusTeapot {
		t.Errorf("sent %d, seen %v, recorded %d", line.W.Sent(), seen, rec.Code)
	}
	var buf bytes.Buffer
	line.Log(r.Context(), slog.New(slog.NewJSONHandler(&buf, nil)), r, "GET /pay/{token}", nil, slog.String("code", "teapot"))
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	want := map[string]any{"level": "INFO", "msg": "request", "request_id": line.ID, "method": "GET", "route": "GET /pay/{token}",
		"status": float64(http.StatusTeapot), "remote": "192.0.2.1", "code": "teapot"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	if _, ok := got["duration_ms"].(float64); !ok || got["time"] == nil || got["source"] != nil {
		t.Errorf("log line %s: want a duration and a time, and no source", buf.String())
	}
	// A logger above Info writes nothing.
	buf.Reset()
	line.Log(r.Context(), slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})), r, "GET /", nil)
	if buf.Len() != 0 {
		t.Errorf("logged above its level: %s", buf.String())
	}
}
