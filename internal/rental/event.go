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
