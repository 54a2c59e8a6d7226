package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"rentapi/internal/rental"
)

// docBase is where each error code is explained; doc_url adds the code.
const docBase = "https://docs.rentapi.dev/errors#"

// statusOf is the one mapping from error kind to HTTP status.
func statusOf(k rental.Kind) int {
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
	case rental.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case rental.KindTimeout:
		return http.StatusRequestTimeout
	case rental.KindConflict:
		return http.StatusConflict
	case rental.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case rental.KindHeaderTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case rental.KindUnsupportedMedia:
		return http.StatusUnsupportedMediaType
	case rental.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case rental.KindRateLimited:
		return http.StatusTooManyRequests
	case rental.KindUnavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// errorBody is the envelope every error is sent in.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	RequestID  string `json:"request_id"`
	DocURL     string `json:"doc_url"`
	Param      string `json:"param,omitempty"`
	Scope      string `json:"scope,omitempty"`
	ResourceID string `json:"resource_id,omitempty"`
}

// response is a response rendered to bytes once: sent, and (for idempotent
// writes) stored and replayed as is.
type response struct {
	status int
	header http.Header
	body   []byte
}

// write sends the response.
func (resp response) write(w http.ResponseWriter) {
	for k, v := range resp.header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.status)
	if len(resp.body) > 0 {
		w.Write(resp.body)
	}
}

// renderJSON renders a success body; a nil body means no content.
func renderJSON(status int, v any) response {
	if v == nil {
		return response{status: status, header: http.Header{}}
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("api: response does not encode: " + err.Error()) // a programming error, caught by the recover middleware
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return response{status: status, header: h, body: append(b, '\n')}
}

// renderError renders any error in the envelope. Errors that are not a
// rental.Error are internal: the log gets the detail, the client a generic
// message with the request ID to quote. An unavailable service is logged
// too, with the cause the store wraps (the database refusing connections,
// say), which the client does not see. The code goes in the request's info,
// for its log line and the refusal metrics.
func renderError(ctx context.Context, log *slog.Logger, err error) response {
	e, ok := rental.AsError(err)
	switch {
	case !ok || e.Kind == rental.KindInternal:
		log.ErrorContext(ctx, "internal error", "request_id", requestID(ctx), "error", err.Error())
		e = rental.Errorf(rental.KindInternal, "internal_error", "An internal error occurred. Quote the request ID if you contact support.")
	case e.Kind == rental.KindUnavailable:
		log.WarnContext(ctx, "unavailable", "request_id", requestID(ctx), "error", err.Error())
	}
	info(ctx).code = e.Code
	b, _ := json.Marshal(errorBody{Error: errorDetail{
		Code: e.Code, Message: e.Message, RequestID: requestID(ctx), DocURL: docBase + e.Code,
		Param: e.Param, Scope: e.Scope, ResourceID: e.ResourceID,
	}})
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	return response{status: statusOf(e.Kind), header: h, body: append(b, '\n')}
}

// writeError renders and sends an error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	renderError(r.Context(), s.log, err).write(w)
}
