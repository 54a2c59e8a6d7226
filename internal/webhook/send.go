package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Timeout is how long a receiver has to answer, connection included.
const Timeout = 10 * time.Second

// MaxResponseBody is how much of a receiver's answer is kept in the log.
const MaxResponseBody = 4 << 10

// MaxIdleConnsPerHost is how many open connections to one receiver are
// kept for the next attempts: at least as many as the deliveries in flight
// at once by default (see jobs.Options.DeliveryWorkers), so a receiver taking a
// stream of deliveries is dialled once per worker, not once per attempt.
const MaxIdleConnsPerHost = 256

// MaxIdleConns bounds the open connections kept across all receivers, so
// that many quiet receivers do not each hold connections until they time
// out.
const MaxIdleConns = 1000

// UserAgent names the sender in every delivery.
const UserAgent = "SERVICE-Webhooks/1.0"

// Sign returns the hex HMAC-SHA256 of "<timestamp>.<body>" under secret: the
// value of one "sha256=" entry of X-SERVICE-Signature.
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// SignatureHeader is X-SERVICE-Signature for a body signed by each secret,
// newest first.
func SignatureHeader(secrets []string, timestamp int64, body []byte) string {
	parts := make([]string, len(secrets))
	for i, s := range secrets {
		parts[i] = "sha256=" + Sign(s, timestamp, body)
	}
	return strings.Join(parts, ",")
}

// Sender posts deliveries through the address guard.
type Sender struct {
	client *http.Client
}

// NewSender returns a sender whose connections pass g. resolver is nil for
// the system's; tests give one that asks their own DNS server.
func NewSender(g Guard, resolver *net.Resolver) *Sender {
	t := &http.Transport{
		Proxy:             nil, // a proxy would connect on our behalf, past the guard
		DialContext:       g.dialer(resolver).DialContext,
		ForceAttemptHTTP2: true,
		// Keep a connection open for each delivery in flight to a receiver,
		// so that a busy receiver is not dialled (and TLS-shaken) again for
		// every attempt; a receiver that answers slowly ties up one per
		// worker at most.
		MaxIdleConnsPerHost:   MaxIdleConnsPerHost,
		MaxIdleConns:          MaxIdleConns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   Timeout,
		ResponseHeaderTimeout: Timeout,
	}
	return &Sender{client: &http.Client{
		Transport: t,
		Timeout:   Timeout,
		// A redirect is an answer like any other non-2xx: a failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// NewLocalSender returns a sender that reaches any address: for `rentapi
// listen`, which a developer runs to forward their own events to their own
// machine (or a container beside it), never for the service's deliveries.
func NewLocalSender() *Sender {
	return &Sender{client: &http.Client{
		Transport:     &http.Transport{Proxy: nil, ResponseHeaderTimeout: Timeout},
		Timeout:       Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Delivery is one attempt to make: where, what, and who signs it.
type Delivery struct {
	URL        string
	Body       []byte
	EventID    string
	EventType  string
	DeliveryID string
	Attempt    int
	// Secrets sign the body, newest first; two during a rotation.
	Secrets []string
	// Now is the time of the attempt, for X-SERVICE-Timestamp.
	Now time.Time
}

// Result is what an attempt came to.
type Result struct {
	// StatusCode is the receiver's status, 0 when none came.
	StatusCode int
	Duration   time.Duration
	// Err says why no status came (refused address, timeout, TLS...).
	Err string
	// Body is the start of the receiver's answer, as valid UTF-8.
	Body string
}

// OK reports whether the receiver took the delivery: any 2xx.
func (r Result) OK() bool { return r.StatusCode >= 200 && r.StatusCode < 300 }

// Send makes one attempt. It never returns an error: everything that can go
// wrong is a failed attempt, described in the result.
func (s *Sender) Send(ctx context.Context, d Delivery) Result {
	ts := d.Now.Unix()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return Result{Err: "invalid URL"}
	}
	h := req.Header
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("User-Agent", UserAgent)
	h.Set("X-SERVICE-Event", d.EventType)
	h.Set("X-SERVICE-Event-ID", d.EventID)
	h.Set("X-SERVICE-Delivery-ID", d.DeliveryID)
	h.Set("X-SERVICE-Timestamp", strconv.FormatInt(ts, 10))
	h.Set("X-SERVICE-Signature", SignatureHeader(d.Secrets, ts, d.Body))
	h.Set("X-SERVICE-Attempt", strconv.Itoa(d.Attempt))
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return Result{Duration: time.Since(start), Err: describe(err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	return Result{StatusCode: resp.StatusCode, Duration: time.Since(start), Body: strings.ToValidUTF8(string(body), string(utf8.RuneError))}
}

// describe turns a transport error into a short reason for the log, without
// our own internals.
func describe(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, ErrRefused):
		return "refused: the host resolves to an address that is not on the public internet"
	case errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "timeout: no answer within 10 seconds"
	case errors.As(err, &dnsErr):
		return "DNS lookup failed: " + dnsErr.Err
	case strings.Contains(err.Error(), "x509:"):
		return "TLS certificate not accepted: " + err.Error()[strings.Index(err.Error(), "x509:"):]
	case strings.Contains(err.Error(), "tls:"):
		return "TLS handshake failed: " + err.Error()[strings.Index(err.Error(), "tls:"):]
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	default:
		return "connection failed"
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
