package rental

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The rules of what people type into the pages (a posted form, the scopes
// ticked on it, the position of a page of a list) are the domain's, as the
// API's bodies are: the pages only read the values and pass them here, so
// a page and a request cannot be held to different rules.

// ErrUnreadableForm refuses a posted form that cannot be read: larger than
// a page's form may be, or not in the encoding it claims.
var ErrUnreadableForm = Errorf(KindInvalid, "invalid_form", "The form could not be read.")

// CheckFormText is nil when every value of a posted form is text: UTF-8
// without a NUL, which no field of a page holds and no store keeps.
func CheckFormText(fields map[string][]string) error {
	for _, values := range fields {
		for _, v := range values {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return Errorf(KindInvalid, "invalid_form", "The form holds text that is not UTF-8, or a NUL character.")
			}
		}
	}
	return nil
}

// ParseScopeChoices reads the scopes ticked on a form: each value exactly
// one scope's name, so that a forged form cannot slip in "all" or a list
// as ParseScopes would read them.
func ParseScopeChoices(values []string) (Scopes, error) {
	for _, v := range values {
		if !slices.Contains(AllScopes, Scope(v)) {
			return nil, Invalid("scopes", "Unknown scope '%s'.", v)
		}
	}
	return ParseScopes(strings.Join(values, " "))
}

// ParsePosition reads where a page of a list ends, "<created ms>.<id>" as
// a page's link to the next writes it: a count of milliseconds and an ID
// of ours. Anything else names no page (invalid, naming param).
func ParsePosition(param, s string) (createdAt int64, id string, err error) {
	ms, id, ok := strings.Cut(s, ".")
	n, perr := strconv.ParseInt(ms, 10, 64)
	if !ok || perr != nil || n < 0 || !WellFormedID(id) {
		return 0, "", Invalid(param, "The page asked for does not exist.")
	}
	return n, id, nil
}

// Busy refuses a request that waited its time for a scarce resource of
// the service (a password hash's memory, say) and found none free: 503,
// to be tried again in a second.
func Busy() *Error {
	e := Errorf(KindUnavailable, "service_unavailable", "The service is busy; try again in a moment.")
	e.RetryAfter = 1
	return e
}

// RequestQuery is what the portal's Requests page is asked to show: the
// requests of one mode, of one class of status, under one path, or one
// request by its ID; a zero field does not narrow.
type RequestQuery struct {
	Mode        Mode
	StatusClass int // 2 to 5: the answers 2xx to 5xx
	PathPrefix  string
	RequestID   string
}

// ParseRequestQuery reads the Requests page's filters as its form sends
// them (mode test|live, status 2xx-5xx, a path beginning with /, a
// request ID such as an error body's request_id).
func ParseRequestQuery(mode, status, path, requestID string) (RequestQuery, error) {
	var q RequestQuery
	switch Mode(mode) {
	case "", ModeTest, ModeLive:
		q.Mode = Mode(mode)
	default:
		return q, Invalid("mode", "Mode must be test or live.")
	}
	switch status {
	case "":
	case "2xx", "3xx", "4xx", "5xx":
		q.StatusClass = int(status[0] - '0')
	default:
		return q, Invalid("status", "Status must be 2xx, 3xx, 4xx or 5xx.")
	}
	if path != "" && (!strings.HasPrefix(path, "/") || len(path) > 200 || !utf8.ValidString(path)) {
		return q, Invalid("path", "A path begins with / and is at most 200 characters, such as /v1/bills.")
	}
	q.PathPrefix = path
	if requestID = strings.TrimSpace(requestID); requestID != "" && !WellFormedID(requestID) {
		return q, Invalid("request_id", "A request ID is written as the X-Request-ID header and an error's request_id give it, such as req_0123456789abcdefghijklmn.")
	}
	q.RequestID = requestID
	return q, nil
}

// RequestPosition is a row's place in the Requests page's order (newest
// first): its time in milliseconds, its place among its process's
// requests of that instant, and its request ID.
type RequestPosition struct {
	At  int64
	Seq int64
	ID  string
}

// ParseRequestPosition reads the Requests page's "older" link,
// "<ms>.<seq>_<id>" (ParsePosition's form, its ID the sequence number and
// the request's ID); anything else is no page.
func ParseRequestPosition(s string) (RequestPosition, error) {
	at, rest, err := ParsePosition("older", s)
	if err != nil {
		return RequestPosition{}, err
	}
	seq, id, _ := strings.Cut(rest, "_")
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || id == "" {
		return RequestPosition{}, Invalid("older", "The page asked for does not exist.")
	}
	return RequestPosition{At: at, Seq: n, ID: id}, nil
}

// ParseSearch reads a search of the docs: trimmed, at most 100
// characters of text.
func ParseSearch(q string) (string, error) {
	q = strings.TrimSpace(q)
	if utf8.RuneCountInString(q) > 100 || !utf8.ValidString(q) {
		return "", Invalid("q", "A search is at most 100 characters of text.")
	}
	return q, nil
}
