package rental

import (
	"regexp"
	"strings"
)

// eventTypePattern is an event type (up to four dotted words), or a type
// prefix ending in ".*".
var eventTypePattern = regexp.MustCompile(`^[a-z_]{1,40}(\.[a-z_]{1,40}){0,3}(\.\*)?$`)

// EventTypeFilter reads the type filter of the event list: an exact type
// such as bill.created, or a prefix such as bill.* that matches every type
// under it. It returns the filter: the exact type, or the prefix with its
// dot and without the star. A type that names no event matches nothing.
func EventTypeFilter(typ string) (string, error) {
	if !eventTypePattern.MatchString(typ) {
		return "", Invalid("type", "type must be an event type such as bill.created, or a prefix such as bill.*.")
	}
	return strings.TrimSuffix(typ, "*"), nil
}

// maxStreamTypes bounds the types one stream's filter lists.
const maxStreamTypes = 20

// StreamTypeFilter reads the event stream's type filter: the values of
// its type parameters, each one type or prefix (as EventTypeFilter) or
// several separated by commas. It returns the filters, none when no type
// was given (every type the reader may see).
func StreamTypeFilter(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			f, err := EventTypeFilter(strings.TrimSpace(t))
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	if len(out) > maxStreamTypes {
		return nil, Invalid("type", "type lists at most %d event types or prefixes.", maxStreamTypes)
	}
	return out, nil
}

// ErrTooManyStreams is 429 rate_limited for a stream beyond the 5 an
// application may hold open in a mode.
var ErrTooManyStreams = &Error{Kind: KindRateLimited, Code: "rate_limited", RetryAfter: 15,
	Message: "This application has 5 event streams open in this mode already; close one, or wait for one to end."}

// UnknownLastEvent is 400 invalid_parameter for a stream resuming after an
// event the reader cannot see (another account's, one past retention, or
// none at all).
func UnknownLastEvent(id string) *Error {
	return Invalid("Last-Event-ID", "Last-Event-ID %s is not an event of this account within the last 30 days; reconnect without it to start from now.", id)
}
