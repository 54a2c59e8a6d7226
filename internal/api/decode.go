package api

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"rentapi/internal/rental"
)

// fields is a JSON object from a body, decoded one named field at a time so
// that every error names the field (error.param), with its path for
// nested objects ("electricity.current").
type fields struct {
	m      map[string]json.RawMessage
	prefix string
}

// parseObject decodes a body that must be a JSON object; an empty body is
// an empty object. Unknown fields are refused, naming the first.
func parseObject(body []byte, allowed ...string) (fields, error) {
	f := fields{m: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(body)) == 0 {
		return f, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&f.m); err != nil || f.m == nil {
		return f, rental.BodyNotObject()
	}
	if dec.More() {
		return f, rental.BodyNotSingle()
	}
	if name, dup := duplicateKey(body); dup {
		return f, rental.DuplicateKey(name)
	}
	return f, f.only(allowed)
}

// parseItem decodes an item of an array in a body that parseObject read
// (and found no key given twice in), which must be a JSON object, like a
// body of its own; list names the array.
func parseItem(item json.RawMessage, list string, allowed ...string) (fields, error) {
	f := fields{m: map[string]json.RawMessage{}}
	if json.Unmarshal(item, &f.m) != nil || f.m == nil {
		return f, rental.ItemNotObject(list)
	}
	return f, f.only(allowed)
}

// duplicateKey finds a key given twice in one object, at any depth, in a
// body that already decoded: JSON decoders disagree on which of two values
// wins, so a body that says two things is refused rather than guessed at.
// It scans the body's bytes once (a batch of 500 readings went through
// encoding/json's tokens in 11 ms): a key is compared as its bytes when it
// is plain ASCII, else as encoding/json decodes it ("a\u0062" is "ab").
// An object's keys are kept in a list, and in a map once it is long, so a
// body of many keys costs no more than linear time.
func duplicateKey(body []byte) (string, bool) {
	type object struct {
		keys []string
		seen map[string]bool // once keys is long
	}
	var stack []*object // open containers; nil for an array
	wantKey := false
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			stack = append(stack, &object{})
			wantKey = true
		case '[':
			stack = append(stack, nil)
			wantKey = false
		case '}', ']':
			if len(stack) <= 1 {
				return "", false // the body's value ends
			}
			stack = stack[:len(stack)-1]
			wantKey = false
		case ',':
			wantKey = len(stack) > 0 && stack[len(stack)-1] != nil
		case '"':
			end, plain := i+1, true
			for ; end < len(body) && body[end] != '"'; end++ {
				if c := body[end]; c == '\\' {
					end++
					plain = false
				} else if c >= 0x80 {
					plain = false
				}
			}
			if end >= len(body) {
				return "", false
			}
			if wantKey {
				var name string
				if plain {
					name = string(body[i+1 : end])
				} else if json.Unmarshal(body[i:end+1], &name) != nil {
					return "", false
				}
				o := stack[len(stack)-1]
				if o.seen[name] || (o.seen == nil && slices.Contains(o.keys, name)) {
					return name, true
				}
				if o.seen != nil {
					o.seen[name] = true
				} else if o.keys = append(o.keys, name); len(o.keys) > 16 {
					o.seen = make(map[string]bool, 2*len(o.keys))
					for _, k := range o.keys {
						o.seen[k] = true
					}
				}
				wantKey = false
			}
			i = end
		}
	}
	return "", false
}

func (f fields) only(allowed []string) error {
	names := make([]string, 0, len(f.m))
	for name := range f.m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return rental.UnknownField(f.prefix + name)
		}
	}
	return nil
}

func (f fields) raw(name string) (json.RawMessage, bool, bool) {
	v, ok := f.m[name]
	if !ok {
		return nil, false, false
	}
	return v, true, string(v) == "null"
}

// object reads a nested object field with its own allowed fields.
func (f fields) object(name string, allowed ...string) (fields, bool, error) {
	v, set, null := f.raw(name)
	sub := fields{m: map[string]json.RawMessage{}, prefix: f.prefix + name + "."}
	if !set {
		return sub, false, nil
	}
	if null || json.Unmarshal(v, &sub.m) != nil || sub.m == nil {
		return sub, true, rental.FieldNotObject(f.prefix + name)
	}
	return sub, true, sub.only(allowed)
}

// decode reads a field of any JSON type into an Optional, with a message
// naming the expected type when it does not fit.
func decode[T any](f fields, name, kind string) (rental.Optional[T], error) {
	v, set, null := f.raw(name)
	out := rental.Optional[T]{Set: set, Null: null}
	if !set || null {
		return out, nil
	}
	if err := json.Unmarshal(v, &out.Value); err != nil {
		return out, rental.FieldType(f.prefix+name, kind)
	}
	return out, nil
}

func (f fields) string(name string) (rental.Optional[string], error) {
	return decode[string](f, name, "a string")
}

func (f fields) bool(name string) (rental.Optional[bool], error) {
	return decode[bool](f, name, "true or false")
}

var integerLiteral = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

// int reads an integer field; a fraction or exponent is refused.
func (f fields) int(name string) (rental.Optional[int64], error) {
	v, set, null := f.raw(name)
	out := rental.Optional[int64]{Set: set, Null: null}
	if !set || null {
		return out, nil
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if !integerLiteral.Match(v) || err != nil {
		return out, rental.FieldInteger(f.prefix + name)
	}
	out.Value = n
	return out, nil
}

// ints reads a list of integers.
func (f fields) ints(name string) (rental.Optional[[]int64], error) {
	v, set, null := f.raw(name)
	out := rental.Optional[[]int64]{Set: set, Null: null}
	if !set || null {
		return out, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(v, &items) != nil || items == nil {
		return out, rental.FieldType(f.prefix+name, "a list of integers")
	}
	out.Value = make([]int64, len(items))
	for i, it := range items {
		n, err := strconv.ParseInt(string(it), 10, 64)
		if !integerLiteral.Match(it) || err != nil {
			return out, rental.FieldType(f.prefix+name, "a list of integers")
		}
		out.Value[i] = n
	}
	return out, nil
}

// quantity reads a meter value: a number with at most three decimals.
func (f fields) quantity(name string) (rental.Optional[rental.Quantity], error) {
	v, set, null := f.raw(name)
	out := rental.Optional[rental.Quantity]{Set: set, Null: null}
	if !set || null {
		return out, nil
	}
	q, err := rental.ParseQuantity(f.prefix+name, string(v))
	out.Value = q
	return out, err
}

// time reads an ISO 8601 timestamp.
func (f fields) time(name string) (rental.Optional[rental.Time], error) {
	s, err := f.string(name)
	out := rental.Optional[rental.Time]{Set: s.Set, Null: s.Null}
	if err != nil || !s.Set || s.Null {
		return out, err
	}
	t, err := time.Parse(time.RFC3339, s.Value)
	if err != nil {
		return out, rental.FieldTimestamp(f.prefix + name)
	}
	out.Value = rental.Time{Time: t.UTC()}
	return out, nil
}

// read runs decoding steps and stops at the first error.
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

// required returns the string value of a required field.
func required(f fields, name string) (string, error) {
	v, err := f.string(name)
	if err != nil {
		return "", err
	}
	if !v.Set || v.Null || v.Value == "" {
		return "", rental.Missing(f.prefix + name)
	}
	return v.Value, nil
}

// requiredID reads a required ID field; one that cannot be an ID of ours
// names no object (404).
func requiredID(f fields, name, what string) (string, error) {
	id, err := required(f, name)
	if err == nil && !validID(id) {
		return "", rental.NotFound(what, strings.ToValidUTF8(id, "?"))
	}
	return id, err
}

// Query parameters of lists.

func queryEnum(q url.Values, name string, values ...string) (string, error) {
	v := q.Get(name)
	if q.Has(name) && !slices.Contains(values, v) {
		return "", rental.NotOneOf(name, values)
	}
	return v, nil
}

// queryBool reads a true|false filter: nil when not given.
func queryBool(q url.Values, name string) (*bool, error) {
	v, err := queryEnum(q, name, "true", "false")
	if err != nil || v == "" {
		return nil, err
	}
	b := v == "true"
	return &b, nil
}

func queryMonth(q url.Values, name string) (string, error) {
	if !q.Has(name) {
		return "", nil
	}
	return rental.ParseMonth(name, q.Get(name))
}

func queryTime(q url.Values, name string) (*int64, error) {
	if !q.Has(name) {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, q.Get(name))
	if err != nil {
		return nil, rental.QueryTimestamp(name)
	}
	ms := t.UnixMilli()
	return &ms, nil
}

// queryID reads an ID filter; any string up to 64 characters (an unknown ID
// simply matches nothing).
func queryID(q url.Values, name string) (string, error) {
	if q.Has(name) && !validID(q.Get(name)) {
		return "", rental.QueryID(name)
	}
	return q.Get(name), nil
}
