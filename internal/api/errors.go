package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"rentapi/internal/rental"
	"rentapi/internal/request"
)

// ErrorDocsPath is the page that explains every error code, served by the
// pages beside the API: doc_url is the public URL, this path and
// "#<code>".
const ErrorDocsPath = "/docs/errors"

// requestError is an answer about the request as HTTP carried it (its
// method, header and body size, media type, timing, idempotency key),
// which the domain knows nothing of: it names its own status.
type requestError struct {
	status int
	err    rental.Error
}

func (e *requestError) Error() string { return e.err.Error() }

// HTTPStatus is the request error's own status, which request.StatusOf
// answers with.
func (e *requestError) HTTPStatus() int { return e.status }

// requestErrorf builds a request error with its status, code and message.
func requestErrorf(status int, code, format string, args ...any) *requestError {
	return &requestError{status: status, err: rental.Error{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// errorBody is the envelope every error is sent in.
type errorBody struct {
	Error *errorDetail `json:"error"`
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
	// header holds the answer's headers other than the two of every read,
	// which json and etag say: a map of a response's own for those was a
	// twentieth of what a read allocated. Nil until one is set (see set).
	header http.Header
	// json says the body is JSON (Content-Type: application/json).
	json bool
	// etag is the answer's ETag, if it has one.
	etag string
	body []byte
	// buf, if set, holds body, and goes back to its pool once the
	// response is sent (see release).
	buf *bodyBuffer
	// stream, if set, is the answer instead of body: an event stream,
	// which writes itself (see Server.serve).
	stream *eventStream
}

// bodyBuffer is a buffer success bodies are rendered into, and pool the
// pool it returns to. A page of bills runs to kilobytes: rendered into a
// fresh slice each time, bodies were much of what a read allocated.
type bodyBuffer struct {
	bytes.Buffer
	pool *sync.Pool
}

// maxPooledBody bounds the buffers kept for reuse: a rare large body is
// not held on to.
const maxPooledBody = 64 << 10

// release gives the response's buffer back to its pool: the response was
// sent without error, and nothing reads its body again. (After a failed
// write an HTTP/2 connection may still hold it.)
//
// The bytes are zeroed first: were a body ever used after its release, it
// would show as zeros at once, never as another request's answer (another
// landlord's data).
func (resp response) release() {
	if b := resp.buf; b != nil && b.Cap() <= maxPooledBody {
		clear(b.Bytes())
		b.Reset()
		b.pool.Put(b)
	}
}

// write sends the response; an error means the body may not have been
// taken whole (the client went away), and must not be released.
func (resp response) write(ctx context.Context, w http.ResponseWriter) error {
	h := w.Header()
	for k, v := range resp.header {
		h[k] = v
	}
	if resp.json {
		h.Set("Content-Type", "application/json")
	}
	if resp.etag != "" {
		h.Set(etagHeader, resp.etag)
	}
	if len(resp.body) > 0 {
		// Known length: the body goes out in one piece, not chunked.
		h.Set("Content-Length", strconv.Itoa(len(resp.body)))
	}
	_, err := request.Whole(ctx, w, resp.status, info(ctx).late, resp.body)
	return err
}

// set sets one of resp's headers.
func (resp *response) set(name, value string) {
	if resp.header == nil {
		resp.header = http.Header{}
	}
	resp.header.Set(name, value)
}

// contentType is the Content-Type resp is answered with.
func (resp response) contentType() string {
	if resp.json {
		return "application/json"
	}
	return resp.header.Get("Content-Type")
}

// renderJSON renders a success body; a nil body means no content.
func renderJSON(status int, v any) response {
	return renderInto(nil, status, v)
}

// renderInto is renderJSON into a buffer from pool, if not nil: the
// response must be released once sent.
func renderInto(pool *sync.Pool, status int, v any) response {
	resp := response{status: status}
	if v == nil {
		return resp
	}
	var buf *bodyBuffer
	if pool != nil {
		buf = pool.Get().(*bodyBuffer)
		resp.buf = buf
	} else {
		buf = &bodyBuffer{}
	}
	// The encoder ends the body with a newline, as curl users expect.
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		panic("api: response does not encode: " + err.Error()) // a programming error, caught by the recover middleware
	}
	resp.json = true
	resp.body = buf.Bytes()
	return resp
}

// renderError renders any error in the envelope. Errors that are not a
// rental.Error are internal: the log gets the detail, the client a generic
// message with the request ID to quote. An unavailable service is logged
// too, with the cause the store wraps (the database refusing connections,
// say), which the client does not see. The code goes in the request's info,
// for its log line and the refusal metrics.
func (s *Server) renderError(ctx context.Context, err error) response {
	log := s.log
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The client hung up: nobody reads this answer, and it is no fault
		// of ours. Logged and counted as a client abort, not a 500.
		info(ctx).code = "client_closed_request"
		log.InfoContext(ctx, "client abort", "request_id", requestID(ctx), "error", err.Error())
		return response{status: request.StatusClientClosed}
	}
	status := request.StatusOf(err)
	e, _ := rental.AsError(err)
	if re, isRequest := errors.AsType[*requestError](err); isRequest {
		e = &re.err
	}
	switch {
	case status == http.StatusInternalServerError:
		log.ErrorContext(ctx, "internal error", "request_id", requestID(ctx), "error", err.Error())
		e = rental.Internal()
	case e.Kind == rental.KindUnavailable:
		log.WarnContext(ctx, "unavailable", "request_id", requestID(ctx), "error", err.Error())
	}
	info(ctx).code = e.Code
	b, _ := json.Marshal(errorBody{Error: s.errorDetail(ctx, e)})
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	return response{status: status, header: h, body: append(b, '\n')}
}

// errorDetail is the error of the envelope for e: of an error response,
// and of each refused item of a batch.
func (s *Server) errorDetail(ctx context.Context, e *rental.Error) *errorDetail {
	return &errorDetail{
		Code: e.Code, Message: e.Message, RequestID: requestID(ctx), DocURL: s.publicURL + ErrorDocsPath + "#" + e.Code,
		Param: e.Param, Scope: e.Scope, ResourceID: e.ResourceID,
	}
}

// writeError renders and sends an error.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.renderError(r.Context(), err).write(r.Context(), w)
}
