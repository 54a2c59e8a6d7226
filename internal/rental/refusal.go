package rental

import (
	"fmt"
	"math"
	"time"
)

// The service's refusals of a request as a whole, before or beside any
// resource's rule: no such route, a key in the URL, a malformed or busy
// Idempotency-Key, an unsigned inbound call, a limit reached, the service
// overloaded or its database or chat channel away, and the one answer of
// an internal failure. The API decides when; what each says is here, in
// the one catalogue of errors.

// RouteNotFound is 404 route_not_found: the path is none of the API's.
func RouteNotFound(method, path string) *Error {
	return &Error{Kind: KindNotFound, Code: "route_not_found", Message: fmt.Sprintf("Unrecognized request URL (%s %s).", method, path)}
}

// RouteNotClean is 404 route_not_found for a path with empty or dot
// segments: it is never redirected to the cleaned path, which could send a
// write to another route.
func RouteNotClean(method, path string) *Error {
	return &Error{Kind: KindNotFound, Code: "route_not_found", Message: fmt.Sprintf("Unrecognized request URL (%s %s): empty or dot segments in the path.", method, path)}
}

// APIKeyInQuery is 400 api_key_in_query: a key in a URL ends up in logs
// and histories, so it is refused, and the caller told to roll it.
func APIKeyInQuery() *Error {
	return &Error{Kind: KindInvalid, Code: "api_key_in_query",
		Message: "API keys must be sent in the Authorization header, never in the URL. Treat this key as exposed and roll it."}
}

// MaxIdempotencyKeyLen is the longest Idempotency-Key.
const MaxIdempotencyKeyLen = 255

// CheckIdempotencyKey accepts an Idempotency-Key of 1 to 255 printable
// ASCII characters (a UUID, say): anything else is 400
// invalid_idempotency_key.
func CheckIdempotencyKey(key string) error {
	if len(key) == 0 || len(key) > MaxIdempotencyKeyLen || !printableASCII(key) {
		return BadIdempotencyKey()
	}
	return nil
}

// BadIdempotencyKey is 400 invalid_idempotency_key: a key that
// CheckIdempotencyKey refuses, or the header given twice.
func BadIdempotencyKey() *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_idempotency_key", Message: "Idempotency-Key must be 1 to 255 printable ASCII characters."}
}

// IdempotencyInProgress is 409 idempotency_in_progress: another request
// with the same Idempotency-Key is still running; the retry gets its
// answer once it is done.
func IdempotencyInProgress() *Error {
	return &Error{Kind: KindConflict, Code: "idempotency_in_progress",
		Message: "A request with this Idempotency-Key is still running; retry after a second."}
}

// BadLineSignature is 401 invalid_signature on the LINE webhook: the
// request is not signed with the channel secret, so nothing else of it is
// judged.
func BadLineSignature() *Error {
	return &Error{Kind: KindUnauthenticated, Code: "invalid_signature",
		Message: "X-Line-Signature is not the base64 HMAC-SHA256 of the raw body with the channel secret."}
}

// RetryAfterSeconds is a wait as the whole seconds of Retry-After: rounded
// up, and at least one, so that a client retrying on time is not refused
// again.
func RetryAfterSeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

// RateLimited is 429 rate_limited: the developer's plan allows rate
// requests a second in bursts of burst, and the next is free after wait.
func RateLimited(rate, burst int, wait time.Duration) *Error {
	return &Error{Kind: KindRateLimited, Code: "rate_limited", RetryAfter: RetryAfterSeconds(wait),
		Message: fmt.Sprintf("Too many requests: the plan allows %d per second (bursts of %d).", rate, burst)}
}

// SendingLimited is 429 sending_limit: the account sent rate chat messages
// within a minute, and the next is free after wait.
func SendingLimited(rate int, wait time.Duration) *Error {
	return &Error{Kind: KindRateLimited, Code: "sending_limit", RetryAfter: RetryAfterSeconds(wait),
		Message: fmt.Sprintf("Over the limit of %d chat sends a minute for this account.", rate)}
}

// ChatUnavailable is 503 chat_unavailable: a live send while the service
// has no LINE channel configured could never leave, so it is not queued.
func ChatUnavailable() *Error {
	return &Error{Kind: KindUnavailable, Code: "chat_unavailable",
		Message: "Chat messages cannot be sent: this service has no LINE channel configured. Test mode works without one."}
}

// Overloaded is 503 service_unavailable: no place for the request within
// the wait; a second later there may be one.
func Overloaded() *Error {
	return &Error{Kind: KindUnavailable, Code: "service_unavailable", RetryAfter: 1,
		Message: "The service is overloaded; retry after the time in Retry-After."}
}

// DatabaseUnreachable is 503 service_unavailable from the readiness check:
// the database does not answer, so the process takes no traffic for now.
func DatabaseUnreachable() *Error {
	return &Error{Kind: KindUnavailable, Code: "service_unavailable", RetryAfter: 5, Message: "The database is unreachable."}
}

// Internal is 500 internal_error, the one answer of every failure that is
// the service's own: the detail goes to the log, never to the client.
func Internal() *Error {
	return &Error{Kind: KindInternal, Code: "internal_error", Message: "An internal error occurred. Quote the request ID if you contact support."}
}

// printableASCII reports whether s is only printable ASCII characters, as
// idempotency keys and providers' transaction IDs must be.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
