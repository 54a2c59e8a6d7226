package rental

import (
	"fmt"
	"strconv"
	"strings"
)

// A request's input the service cannot take: a body that is not one JSON
// object, a field of the wrong type or one the operation does not take, a
// query parameter that is unknown, repeated or not text, and the page
// parameters every list shares. The API reads the bytes; the words and
// codes of what is wrong with them are here, with every other error of the
// catalogue, so that the API, the pages and the error page say the same.

// BodyNotObject is 400 invalid_json: the body does not decode as a JSON
// object.
func BodyNotObject() *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_json", Message: "The request body must be a JSON object."}
}

// BodyNotSingle is 400 invalid_json: the body holds more after its object.
func BodyNotSingle() *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_json", Message: "The request body must hold a single JSON object."}
}

// DuplicateKey is 400 invalid_json: an object of the body has the key name
// twice. JSON decoders disagree on which value wins, so a body that says
// two things is refused rather than guessed at.
func DuplicateKey(name string) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_json", Message: fmt.Sprintf("The request body has the key '%s' more than once in one object.", name)}
}

// BodyUnreadable is 400 invalid_json: the connection failed while the body
// was read.
func BodyUnreadable() *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_json", Message: "The request body could not be read."}
}

// ItemNotObject is 400 invalid_json for one item of a batch (the batch's
// result names it by its index): the item is not a JSON object, as a body
// of the single request must be.
func ItemNotObject(list string) *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_json", Message: fmt.Sprintf("Each item of %s must be a JSON object.", list)}
}

// BodyNotUTF8 is 400 invalid_json: the body is not UTF-8 text.
func BodyNotUTF8() *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_json", Message: "The request body is not valid UTF-8."}
}

// UnknownField refuses a body field the operation does not take, by its
// path (a nested one as "electricity.current"): a misspelt field is an
// error, not a silently ignored one.
func UnknownField(name string) *Error {
	return Invalid(name, "Unknown field '%s'.", name)
}

// FieldNotObject refuses a field that must be a nested object.
func FieldNotObject(name string) *Error {
	return Invalid(name, "%s must be an object.", name)
}

// FieldType refuses a field of the wrong JSON type; kind says what it must
// be ("a string", "true or false").
func FieldType(name, kind string) *Error {
	return Invalid(name, "%s must be %s.", name, kind)
}

// FieldInteger refuses a field that is not a whole number within 64 bits
// (a fraction or an exponent included).
func FieldInteger(name string) *Error {
	return Invalid(name, "%s must be an integer within range.", name)
}

// FieldTimestamp refuses a body field that is not an RFC 3339 timestamp.
func FieldTimestamp(name string) *Error {
	return Invalid(name, "%s must be an ISO 8601 timestamp such as 2026-11-01T09:00:00Z.", name)
}

// NotOneOf refuses a field or query parameter outside its values.
func NotOneOf(name string, values []string) *Error {
	return Invalid(name, "%s must be one of %v.", name, values)
}

// UnknownQueryParameter is 400 unknown_parameter, naming the parameters the
// operation accepts.
func UnknownQueryParameter(name string, accepted []string) *Error {
	return &Error{Kind: KindInvalid, Code: "unknown_parameter", Param: name,
		Message: "Unknown query parameter '" + name + "'. Accepted: " + strings.Join(accepted, ", ") + "."}
}

// RepeatedQueryParameter refuses a query parameter given twice: which of
// two values counts would be a guess.
func RepeatedQueryParameter(name string) *Error {
	return Invalid(name, "Query parameter '%s' was given more than once.", name)
}

// QueryNotText refuses a query parameter that is not UTF-8 or holds control
// characters.
func QueryNotText(name string) *Error {
	return Invalid(name, "Query parameter '%s' must be text without control characters.", name)
}

// QueryTimestamp refuses a query parameter that is not an RFC 3339
// timestamp.
func QueryTimestamp(name string) *Error {
	return Invalid(name, "%s must be an ISO 8601 timestamp such as 2026-11-01T00:00:00Z.", name)
}

// QueryID refuses an ID filter that cannot be an ID.
func QueryID(name string) *Error {
	return Invalid(name, "%s must be an ID.", name)
}

// NoSuchObject is 404 resource_not_found for an ID in a path that cannot
// be one of the service's, before it reaches a query: the answer is the
// same as for an ID that is well formed but unknown. Bytes that are not
// UTF-8 are shown as '?'.
func NoSuchObject(id string) *Error {
	return &Error{Kind: KindNotFound, Code: "resource_not_found", Message: fmt.Sprintf("No such object: '%s'.", strings.ToValidUTF8(id, "?"))}
}

// The page sizes of every list: DefaultPageLimit without limit, at most
// MaxPageLimit.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

// PageLimit reads a list's limit parameter: an integer from 1 to
// MaxPageLimit.
func PageLimit(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > MaxPageLimit {
		return 0, Invalid("limit", "limit must be an integer from 1 to %d.", MaxPageLimit)
	}
	return n, nil
}

// PageOrder reads a list's order parameter, when given: asc (oldest
// first) or desc (newest first, the order without it).
func PageOrder(v string) (asc bool, err error) {
	switch v {
	case "asc":
		return true, nil
	case "desc":
		return false, nil
	}
	return false, Invalid("order", "order must be 'asc' or 'desc'.")
}

// BadCursor is 400 invalid_cursor: a list's cursor that was edited, is
// too long, or was issued for another list, filter, order or account.
func BadCursor() *Error {
	return &Error{Kind: KindInvalid, Code: "invalid_cursor", Param: "cursor",
		Message: "The cursor is invalid, or belongs to another list, filter or order."}
}
