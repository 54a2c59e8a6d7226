package rental

import (
	"strings"
	"testing"
	"time"
)

// Every error of the request-level catalogue says exactly this: clients
// and the conformance suite read the code, the status (by kind), the
// param and the words, so they change only on purpose.
func TestRequestCatalogue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err        *Error
		kind       Kind
		code       string
		param      string
		message    string
		retryAfter int
	}{
		{BodyNotObject(), KindInvalid, "invalid_json", "", "The request body must be a JSON object.", 0},
		{BodyNotSingle(), KindInvalid, "invalid_json", "", "The request body must hold a single JSON object.", 0},
		{DuplicateKey("name"), KindInvalid, "invalid_json", "", "The request body has the key 'name' more than once in one object.", 0},
		{BodyUnreadable(), KindInvalid, "invalid_json", "", "The request body could not be read.", 0},
		{BodyNotUTF8(), KindInvalid, "invalid_json", "", "The request body is not valid UTF-8.", 0},
		{UnknownField("electricity.curent"), KindInvalid, "invalid_parameter", "electricity.curent", "Unknown field 'electricity.curent'.", 0},
		{FieldNotObject("electricity"), KindInvalid, "invalid_parameter", "electricity", "electricity must be an object.", 0},
		{FieldType("issue", "true or false"), KindInvalid, "invalid_parameter", "issue", "issue must be true or false.", 0},
		{FieldInteger("monthly_rent"), KindInvalid, "invalid_parameter", "monthly_rent", "monthly_rent must be an integer within range.", 0},
		{FieldTimestamp("paid_at"), KindInvalid, "invalid_parameter", "paid_at", "paid_at must be an ISO 8601 timestamp such as 2026-11-01T09:00:00Z.", 0},
		{NotOneOf("status", []string{"draft", "issued"}), KindInvalid, "invalid_parameter", "status", "status must be one of [draft issued].", 0},
		{UnknownQueryParameter("limt", []string{"limit", "cursor", "order"}), KindInvalid, "unknown_parameter", "limt", "Unknown query parameter 'limt'. Accepted: limit, cursor, order.", 0},
		{RepeatedQueryParameter("limit"), KindInvalid, "invalid_parameter", "limit", "Query parameter 'limit' was given more than once.", 0},
		{QueryNotText("room_id"), KindInvalid, "invalid_parameter", "room_id", "Query parameter 'room_id' must be text without control characters.", 0},
		{QueryTimestamp("created_after"), KindInvalid, "invalid_parameter", "created_after", "created_after must be an ISO 8601 timestamp such as 2026-11-01T00:00:00Z.", 0},
		{QueryID("room_id"), KindInvalid, "invalid_parameter", "room_id", "room_id must be an ID.", 0},
		{NoSuchObject("room_\xff1"), KindNotFound, "resource_not_found", "", "No such object: 'room_?1'.", 0},
		{BadCursor(), KindInvalid, "invalid_cursor", "cursor", "The cursor is invalid, or belongs to another list, filter or order.", 0},
		{RouteNotFound("GET", "/v1/rooms/x/y"), KindNotFound, "route_not_found", "", "Unrecognized request URL (GET /v1/rooms/x/y).", 0},
		{RouteNotClean("POST", "/v1//rooms"), KindNotFound, "route_not_found", "", "Unrecognized request URL (POST /v1//rooms): empty or dot segments in the path.", 0},
		{APIKeyInQuery(), KindInvalid, "api_key_in_query", "", "API keys must be sent in the Authorization header, never in the URL. Treat this key as exposed and roll it.", 0},
		{BadIdempotencyKey(), KindInvalid, "invalid_idempotency_key", "", "Idempotency-Key must be 1 to 255 printable ASCII characters.", 0},
		{IdempotencyInProgress(), KindConflict, "idempotency_in_progress", "", "A request with this Idempotency-Key is still running; retry after a second.", 0},
		{BadLineSignature(), KindUnauthenticated, "invalid_signature", "", "X-Line-Signature is not the base64 HMAC-SHA256 of the raw body with the channel secret.", 0},
		{BadProviderSignature(), KindUnauthenticated, "invalid_signature", "", "X-Provider-Signature does not match the X-Provider-Timestamp (Unix seconds) and the raw body for this provider.", 0},
		{RateLimited(25, 50, 30*time.Millisecond), KindRateLimited, "rate_limited", "", "Too many requests: the plan allows 25 per second (bursts of 50).", 1},
		{SendingLimited(60, 2500*time.Millisecond), KindRateLimited, "sending_limit", "", "Over the limit of 60 chat sends a minute for this account.", 3},
		{ChatUnavailable(), KindUnavailable, "chat_unavailable", "", "Chat messages cannot be sent: this service has no LINE channel configured. Test mode works without one.", 0},
		{Overloaded(), KindUnavailable, "service_unavailable", "", "The service is overloaded; retry after the time in Retry-After.", 1},
		{DatabaseUnreachable(), KindUnavailable, "service_unavailable", "", "The database is unreachable.", 5},
		{Internal(), KindInternal, "internal_error", "", "An internal error occurred. Quote the request ID if you contact support.", 0},
		{NoQRToSimulate(NoQRPaid), KindConflict, "bill_not_payable", "", "The payment page shows no QR for this bill (paid).", 0},
	}
	for _, c := range cases {
		e := c.err
		if e.Kind != c.kind || e.Code != c.code || e.Param != c.param || e.Message != c.message || e.RetryAfter != c.retryAfter {
			t.Errorf("%s: got %+v\nwant kind %d, param %q, %q, retry after %d", c.code, *e, c.kind, c.param, c.message, c.retryAfter)
		}
	}
	// Each call is a new value: an error a caller changes is its own.
	if a, b := Overloaded(), Overloaded(); a == b {
		t.Error("Overloaded returned the same *Error twice")
	}
}

// A list takes 1 to 100 items a page, 20 without limit, and an order of
// asc or desc.
func TestPageParameters(t *testing.T) {
	t.Parallel()
	limits := []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1, true}, {"20", 20, true}, {"100", 100, true},
		{"0", 0, false}, {"101", 0, false}, {"-1", 0, false}, {"", 0, false}, {"ten", 0, false}, {"1.5", 0, false}, {" 5", 0, false},
	}
	for _, c := range limits {
		n, err := PageLimit(c.in)
		if c.ok && (err != nil || n != c.want) || !c.ok && code(err) != "invalid_parameter" {
			t.Errorf("limit %q: %d %v", c.in, n, err)
		}
		if e, ok := AsError(err); ok && (e.Param != "limit" || e.Message != "limit must be an integer from 1 to 100.") {
			t.Errorf("limit %q: %+v", c.in, e)
		}
	}
	if DefaultPageLimit != 20 {
		t.Errorf("default page %d, want 20", DefaultPageLimit)
	}
	orders := []struct {
		in       string
		asc, bad bool
	}{{"asc", true, false}, {"desc", false, false}, {"", false, true}, {"ASC", false, true}, {"ascending", false, true}}
	for _, c := range orders {
		asc, err := PageOrder(c.in)
		if asc != c.asc || (err != nil) != c.bad {
			t.Errorf("order %q: %v %v", c.in, asc, err)
		}
		if e, ok := AsError(err); ok && (e.Param != "order" || e.Message != "order must be 'asc' or 'desc'.") {
			t.Errorf("order %q: %+v", c.in, e)
		}
	}
}

// An Idempotency-Key is 1 to 255 printable ASCII characters.
func TestCheckIdempotencyKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key string
		ok  bool
	}{
		{"a", true}, {"0b5f8c1e-2f6a-4b9e-9a47-7f3c2d1e0a9b", true}, {strings.Repeat("k", 255), true}, {"with space ~", true},
		{"", false}, {strings.Repeat("k", 256), false}, {"tab\there", false}, {"กุญแจ", false}, {"del\x7f", false},
	}
	for _, c := range cases {
		err := CheckIdempotencyKey(c.key)
		if c.ok != (err == nil) || !c.ok && code(err) != "invalid_idempotency_key" {
			t.Errorf("%q: %v", c.key, err)
		}
	}
}

// Retry-After is whole seconds, rounded up, at least one.
func TestRetryAfterSeconds(t *testing.T) {
	t.Parallel()
	for wait, want := range map[time.Duration]int{0: 1, -time.Second: 1, time.Millisecond: 1, time.Second: 1,
		1001 * time.Millisecond: 2, 59 * time.Second: 59, 59500 * time.Millisecond: 60} {
		if got := RetryAfterSeconds(wait); got != want {
			t.Errorf("%s: %d, want %d", wait, got, want)
		}
	}
}

// The event list filters by an exact type or a prefix ending in .*.
func TestEventTypeFilter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"bill.created", "bill.created", true},
		{"bill.*", "bill.", true},
		{"meter.reading.created", "meter.reading.created", true},
		{"meter.reading.*", "meter.reading.", true},
		{"no_such.type", "no_such.type", true}, // names no event: matches nothing
		{"a.b.c.d", "a.b.c.d", true},
		{"a.b.c.d.e", "", false},
		{"*", "", false},
		{"bill*", "", false},
		{"bill.", "", false},
		{"Bill.created", "", false},
		{"", "", false},
		{"bill.created.*.x", "", false},
		{strings.Repeat("x", 41), "", false},
	}
	for _, c := range cases {
		got, err := EventTypeFilter(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
		if e, ok := AsError(err); ok && (e.Param != "type" || e.Message != "type must be an event type such as bill.created, or a prefix such as bill.*.") {
			t.Errorf("%q: %+v", c.in, e)
		}
	}
}

// POST /v1/notifications takes the three notice types; a message goes
// through /v1/messages.
func TestCheckNotificationType(t *testing.T) {
	t.Parallel()
	for typ, ok := range map[string]bool{NotifyNewBill: true, NotifyPaymentReminder: true, NotifyPaymentReceipt: true,
		NotifyMessage: false, "": false, "New_Bill": false, "receipt": false} {
		err := CheckNotificationType(typ)
		if ok != (err == nil) {
			t.Errorf("%q: %v", typ, err)
		}
		if e, bad := AsError(err); bad && (e.Param != "type" || e.Message != "type must be one of new_bill, payment_reminder, payment_receipt.") {
			t.Errorf("%q: %+v", typ, e)
		}
	}
}

// Test helpers answer test keys only.
func TestCheckTestHelper(t *testing.T) {
	t.Parallel()
	if err := CheckTestHelper(ModeTest); err != nil {
		t.Errorf("test mode: %v", err)
	}
	e, _ := AsError(CheckTestHelper(ModeLive))
	if e == nil || e.Kind != KindForbidden || e.Code != "test_mode_only" || e.Message != "Test helpers work only with test keys (svc_test_...)." {
		t.Errorf("live mode: %+v", e)
	}
}
