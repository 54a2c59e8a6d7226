package rental

import (
	"errors"
	"fmt"
)

// Kind classifies an Error by what the client should do about it; the API
// turns each kind into one HTTP status in a single place.
type Kind int

// The kinds of error. Each maps to exactly one HTTP status.
const (
	KindInternal        Kind = iota // 500: our fault; details go to the log only
	KindInvalid                     // 400: the request is malformed or a value is out of range
	KindUnauthenticated             // 401: no usable API key
	KindPaymentRequired             // 402: the developer's invoice is overdue (live mode)
	KindForbidden                   // 403: authenticated but not allowed
	KindNotFound                    // 404: no such object in this account, or no such route
	KindConflict                    // 409: the object's state forbids the request
	KindRateLimited                 // 429: slow down; RetryAfter says for how long
	KindUnavailable                 // 503: overloaded or the database is unreachable
)

// Error is the single error type of the domain. Code is the stable,
// machine-readable value clients branch on; Message is for people. The other
// fields carry the detail some codes promise (the offending parameter, the
// missing scope, the existing object, when to retry).
type Error struct {
	Kind       Kind
	Code       string
	Message    string
	Param      string
	Scope      string
	ResourceID string
	RetryAfter int // seconds; set for KindRateLimited and KindUnavailable
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Code, e.Message, e.Param)
	}
	return e.Code + ": " + e.Message
}

// Errorf builds an Error of the given kind and code with a formatted message.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid reports a bad value of a named field or query parameter.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_parameter", Message: fmt.Sprintf(format, args...), Param: param}
}

// Missing reports a required field or parameter that was not sent.
func Missing(param string) *Error {
	return &Error{Kind: KindInvalid, Code: "parameter_missing", Message: fmt.Sprintf("Missing required parameter: %s.", param), Param: param}
}

// NotFound reports an object that does not exist in the caller's account. An
// object of another account gets the same answer, so IDs reveal nothing.
func NotFound(what, id string) *Error {
	return &Error{Kind: KindNotFound, Code: "resource_not_found", Message: fmt.Sprintf("No such %s: '%s'.", what, id)}
}

// Exists reports an object that is already there (409 resource_exists),
// naming it when its ID is known.
func Exists(resourceID, format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Code: "resource_exists", Message: fmt.Sprintf(format, args...), ResourceID: resourceID}
}

// Conflict reports a request the object's state forbids (409 with code).
func Conflict(code, format string, args ...any) *Error {
	return &Error{Kind: KindConflict, Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error inside err, if there is one.
func AsError(err error) (*Error, bool) {
	if err == nil { // as often as not, and errors.As makes e escape
		return nil, false
	}
	if e, ok := err.(*Error); ok {
		return e, true
	}
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// IsNotFound reports whether err says that an object does not exist.
func IsNotFound(err error) bool {
	e, ok := AsError(err)
	return ok && e.Kind == KindNotFound
}
