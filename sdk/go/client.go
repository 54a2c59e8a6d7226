// Package rentapi is the Go client of the rental-management API: every
// operation of the OpenAPI document as a method of Client, with the
// document's objects as Go types (api.go, generated from it).
//
// The client does what the API asks of a careful caller, so the code
// using it need not: every write carries an Idempotency-Key made once and
// sent again on each retry; a 429 or 503 is retried after its Retry-After,
// and a network error or 500 with exponential backoff and jitter; lists
// are Go iterators that follow the pages' cursors; an error answer is an
// *Error with the API's code, the field at fault and the request's ID.
//
// It uses the standard library alone.
package rentapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Version is this client's version, sent in its User-Agent.
const Version = "0.1.0"

// DefaultBaseURL is where `rentapi serve` listens unless told otherwise.
const DefaultBaseURL = "http://127.0.0.1:8080"

// Client calls the API with one key. It is safe for concurrent use.
type Client struct {
	key        string
	baseURL    string
	account    string
	http       *http.Client
	maxRetries int
	// backoff is the first wait after a network error or a 500; each
	// retry doubles it, up to maxBackoff.
	backoff    time.Duration
	maxBackoff time.Duration
	// maxRetryAfter is the longest Retry-After waited for; a longer one
	// (a monthly quota's, until the 1st) is returned as the error.
	maxRetryAfter time.Duration
}

// Option sets up a Client.
type Option func(*Client)

// WithBaseURL is the service's address, such as https://api.example.com;
// DefaultBaseURL when not given.
func WithBaseURL(u string) Option {
	return func(c *Client) { c.baseURL = strings.TrimRight(u, "/") }
}

// WithAccount sends SERVICE-Account with every request: the account an
// unbound live key acts on (a landlord who linked the application).
func WithAccount(accountID string) Option { return func(c *Client) { c.account = accountID } }

// WithHTTPClient sends requests with h instead of a client of its own
// (with a 60-second timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithMaxRetries is how many times a request is sent again after a
// network error, a 500, a 429 or a 503 (3 when not given; 0 never
// retries).
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = max(n, 0) } }

// NewClient returns a client that calls the API with key (svc_test_… in
// the sandbox, svc_live_… for real accounts).
func NewClient(key string, opts ...Option) *Client {
	c := &Client{
		key:           key,
		baseURL:       DefaultBaseURL,
		http:          &http.Client{Timeout: 60 * time.Second},
		maxRetries:    3,
		backoff:       time.Second,
		maxBackoff:    time.Minute,
		maxRetryAfter: time.Minute,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// RequestOption changes one call.
type RequestOption func(*request)

// WithIdempotencyKey sends key as the write's Idempotency-Key instead of
// one the client makes: keep it with the work it stands for (an invoice
// number, a job's ID) so a write that a crash cut short is not done twice
// when the program runs it again.
func WithIdempotencyKey(key string) RequestOption { return func(r *request) { r.idempotencyKey = key } }

// ForAccount sends SERVICE-Account for this call alone.
func ForAccount(accountID string) RequestOption { return func(r *request) { r.account = accountID } }

type request struct {
	idempotencyKey string
	account        string
}

// call sends a request and decodes the answer's data into out. It says
// whether the answer had a body (a 204 has none).
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body, out any, opts []RequestOption) (bool, error) {
	a, err := c.do(ctx, method, path, query, body, opts)
	if err != nil || len(a.body) == 0 || out == nil {
		return err == nil && len(a.body) > 0, err
	}
	env := struct {
		Data any `json:"data"`
	}{Data: out}
	if err := json.Unmarshal(a.body, &env); err != nil {
		return false, fmt.Errorf("rentapi: decoding the answer to %s %s: %w", method, path, err)
	}
	return true, nil
}

// do sends a request until it succeeds, fails for good or runs out of
// retries, and returns the successful answer.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, opts []RequestOption) (*answer, error) {
	r := request{account: c.account}
	for _, o := range opts {
		o(&r)
	}
	var payload []byte
	if body != nil || method == http.MethodPost || method == http.MethodPatch {
		var err error
		if body == nil {
			body = struct{}{}
		}
		if payload, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("rentapi: encoding the request: %w", err)
		}
	}
	// One key for every attempt: a retry of a write that did land is
	// answered with the first answer, not done again.
	if method != http.MethodGet && r.idempotencyKey == "" {
		r.idempotencyKey = newIdempotencyKey()
	}
	u := c.baseURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	for attempt := 0; ; attempt++ {
		a, err := c.send(ctx, method, u, payload, r)
		var wait time.Duration
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			wait = c.backoffFor(attempt)
		case a.status < 300:
			return a, nil
		default:
			apiErr := a.err()
			if !apiErr.retryable() {
				return nil, apiErr
			}
			err = apiErr
			switch {
			case apiErr.Code == "idempotency_in_progress":
				wait = time.Second
			case apiErr.RetryAfter > c.maxRetryAfter:
				return nil, apiErr
			case apiErr.RetryAfter > 0:
				wait = apiErr.RetryAfter
			default:
				wait = c.backoffFor(attempt)
			}
		}
		if attempt >= c.maxRetries {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// body is a write's parameters as call sends them: a nil *T is no
// parameters, sent as {} (a nil pointer in an interface is not nil).
func body[T any](params *T) any {
	if params == nil {
		return nil
	}
	return params
}

// answer is a response read whole.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (c *Client) send(ctx context.Context, method, u string, payload []byte, r request) (*answer, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("rentapi: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "rentapi-go/"+Version)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", r.idempotencyKey)
	}
	if r.account != "" {
		req.Header.Set("SERVICE-Account", r.account)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rentapi: %s %s: %w", method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("rentapi: %s %s: reading the answer: %w", method, req.URL.Path, err)
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// backoffFor is the wait before retry attempt+1 after a network error or a
// 500: the backoff doubled each time up to its cap, with full jitter over
// its upper half so that many clients do not retry in step.
func (c *Client) backoffFor(attempt int) time.Duration {
	d := c.backoff << min(attempt, 16)
	if d <= 0 || d > c.maxBackoff {
		d = c.maxBackoff
	}
	return d/2 + time.Duration(mathrand.Int64N(int64(d/2)+1))
}

// newIdempotencyKey is a random key for a write the caller gave none.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "rentapi-go-" + hex.EncodeToString(b[:])
}

// Error is an answer of the API other than a success: the error body's
// fields, with the status and the wait the answer asked for.
type Error struct {
	// StatusCode is the HTTP status, such as 404.
	StatusCode int
	// Code is the API's stable code, such as resource_not_found: branch
	// on it.
	Code string
	// Message is for people; it may change, so never parse it.
	Message string
	// Param is the field, query parameter or header at fault, when one is.
	Param string
	// Scope is the scope the key lacks, for insufficient_scope.
	Scope string
	// ResourceID names the object concerned, such as the existing one of
	// a conflict.
	ResourceID string
	// RequestID is the request's ID: quote it when asking for help.
	RequestID string
	// DocURL is the error page's section on Code.
	DocURL string
	// RetryAfter is the wait the answer asked for (429, 503), or 0.
	RetryAfter time.Duration
}

// Error says the status, code and message, and the request's ID.
func (e *Error) Error() string {
	s := fmt.Sprintf("rentapi: %d %s: %s", e.StatusCode, e.Code, e.Message)
	if e.Param != "" {
		s += " (" + e.Param + ")"
	}
	if e.RequestID != "" {
		s += " [" + e.RequestID + "]"
	}
	return s
}

// retryable says whether the same request may succeed later.
func (e *Error) retryable() bool {
	switch e.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusInternalServerError:
		return e.Code != "monthly_quota_exceeded"
	case http.StatusConflict:
		return e.Code == "idempotency_in_progress"
	}
	return false
}

// err reads an error answer; one that is not the API's envelope (a proxy's
// page) still gives its status.
func (a *answer) err() *Error {
	var body struct {
		Error struct {
			Code       string `json:"code"`
			Message    string `json:"message"`
			Param      string `json:"param"`
			Scope      string `json:"scope"`
			ResourceID string `json:"resource_id"`
			RequestID  string `json:"request_id"`
			DocURL     string `json:"doc_url"`
		} `json:"error"`
	}
	e := &Error{StatusCode: a.status, RequestID: a.header.Get("X-Request-ID")}
	if json.Unmarshal(a.body, &body) == nil && body.Error.Code != "" {
		b := body.Error
		e.Code, e.Message, e.Param, e.Scope, e.ResourceID, e.DocURL = b.Code, b.Message, b.Param, b.Scope, b.ResourceID, b.DocURL
		if b.RequestID != "" {
			e.RequestID = b.RequestID
		}
	} else {
		e.Code, e.Message = "unexpected_response", strings.TrimSpace(http.StatusText(a.status)+" "+string(a.body[:min(len(a.body), 200)]))
	}
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err == nil && s >= 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	return e
}

// IsCode says whether err is an *Error with code, such as
// IsCode(err, "resource_not_found").
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
