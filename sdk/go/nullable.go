package rentapi

import (
	"bytes"
	"encoding/json"
)

// Nullable is a field of a request that can be left out, set, or set to
// null, three different things to the API: a PATCH leaves out what it does
// not change, and null removes a value (a property's late_fee, a room's
// floor). Its zero value is left out.
type Nullable[T any] struct {
	value T
	set   bool
	null  bool
}

// Value is a Nullable set to v.
func Value[T any](v T) Nullable[T] { return Nullable[T]{value: v, set: true} }

// Null is a Nullable set to null.
func Null[T any]() Nullable[T] { return Nullable[T]{set: true, null: true} }

// Get returns the value and whether there is one (set and not null).
func (n Nullable[T]) Get() (T, bool) { return n.value, n.set && !n.null }

// IsZero says the field is left out; encoding/json's omitzero asks it.
func (n Nullable[T]) IsZero() bool { return !n.set }

// MarshalJSON writes the value, or null.
func (n Nullable[T]) MarshalJSON() ([]byte, error) {
	if n.null || !n.set {
		return []byte("null"), nil
	}
	return json.Marshal(n.value)
}

// UnmarshalJSON reads a value or null.
func (n *Nullable[T]) UnmarshalJSON(b []byte) error {
	n.set = true
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		var zero T
		n.value, n.null = zero, true
		return nil
	}
	n.null = false
	return json.Unmarshal(b, &n.value)
}

// Ptr returns a pointer to v, for the optional fields of a request:
// rentapi.Ptr(int64(350000)).
func Ptr[T any](v T) *T { return &v }
