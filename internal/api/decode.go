package api

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"

	"rentapi/internal/rental"
)

// fields is a JSON object body, decoded one named field at a time so that
// every error can name the field (error.param).
type fields map[string]json.RawMessage

// parseObject decodes a body that must be a JSON object; an empty body is
// an empty object. Unknown fields are refused, naming the first.
func parseObject(body []byte, allowed ...string) (fields, error) {
	f := fields{}
	if len(bytes.TrimSpace(body)) == 0 {
		return f, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&f); err != nil || f == nil {
		return nil, rental.Errorf(rental.KindInvalid, "invalid_json", "The request body must be a JSON object.")
	}
	if dec.More() {
		return nil, rental.Errorf(rental.KindInvalid, "invalid_json", "The request body must hold a single JSON object.")
	}
	names := make([]string, 0, len(f))
	for name := range f {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return nil, rental.Invalid(name, "Unknown field '%s'.", name)
		}
	}
	return f, nil
}

func (f fields) raw(name string) (json.RawMessage, bool, bool) {
	v, ok := f[name]
	if !ok {
		return nil, false, false
	}
	return v, true, string(v) == "null"
}

// string reads a string field.
func (f fields) string(name string) (rental.Optional[string], error) {
	v, set, null := f.raw(name)
	out := rental.Optional[string]{Set: set, Null: null}
	if !set || null {
		return out, nil
	}
	if err := json.Unmarshal(v, &out.Value); err != nil {
		return out, rental.Invalid(name, "%s must be a string.", name)
	}
	return out, nil
}

var integerLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// int reads an integer field; a fraction or exponent is refused.
func (f fields) int(name string) (rental.Optional[int64], error) {
	v, set, null := f.raw(name)
	out := rental.Optional[int64]{Set: set, Null: null}
	if !set || null {
		return out, nil
	}
	if !integerLiteral.Match(v) {
		return out, rental.Invalid(name, "%s must be an integer.", name)
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return out, rental.Invalid(name, "%s is out of range.", name)
	}
	out.Value = n
	return out, nil
}

// read decodes each field with its reader and stops at the first error.
func read(steps ...func() error) error {
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// into returns a step that stores a decoded field in dst.
func into[T any](dst *rental.Optional[T], get func(string) (rental.Optional[T], error), name string) func() error {
	return func() error {
		v, err := get(name)
		*dst = v
		return err
	}
}
