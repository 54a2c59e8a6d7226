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
	"unicode/utf8"

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
	if !json.Valid(body) {
		// Not one JSON value: two of them, or not JSON at all.
		dec := json.NewDecoder(bytes.NewReader(body))
		if dec.Decode(new(json.RawMessage)) == nil && dec.More() {
			return f, rental.BodyNotSingle()
		}
		return f, rental.BodyNotObject()
	}
	var ok bool
	if f.m, ok = members(body); !ok {
		return f, rental.BodyNotObject()
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
	m, ok := members(item)
	f := fields{m: m}
	if !ok {
		return f, rental.ItemNotObject(list)
	}
	return f, f.only(allowed)
}

// members splits v, a JSON value within a body parseObject read, into an
// object's members; false when v is not an object. The body's decoder has
// checked every byte of it, so the members are found by skipping over
// values, not by decoding them again: each level of a body used to be
// checked anew, and a batch of 500 readings took 10 ms to read. Keys given
// twice were refused with the body (duplicateKey).
func members(v []byte) (map[string]json.RawMessage, bool) {
	i := skipSpace(v, 0)
	if i == len(v) || v[i] != '{' {
		return map[string]json.RawMessage{}, false
	}
	m := make(map[string]json.RawMessage, 8)
	for i = skipSpace(v, i+1); i < len(v) && v[i] != '}'; i = skipSpace(v, i+1) {
		end := stringEnd(v, i) + 1 // the key
		name, ok := unquote(v[i:end])
		if !ok {
			return map[string]json.RawMessage{}, false
		}
		i = skipSpace(v, end)
		i = skipSpace(v, i+1) // past the colon
		end = skipValue(v, i)
		m[name] = v[i:end]
		if i = skipSpace(v, end); i < len(v) && v[i] == '}' {
			break
		}
	}
	return m, true
}

// elements splits v, a JSON value within a body parseObject read, into an
// array's elements; false when v is not an array. See members.
func elements(v []byte) ([]json.RawMessage, bool) {
	i := skipSpace(v, 0)
	if i == len(v) || v[i] != '[' {
		return nil, false
	}
	items := []json.RawMessage{}
	for i = skipSpace(v, i+1); i < len(v) && v[i] != ']'; i = skipSpace(v, i+1) {
		end := skipValue(v, i)
		items = append(items, v[i:end])
		if i = skipSpace(v, end); i < len(v) && v[i] == ']' {
			break
		}
	}
	return items, true
}

// skipSpace is the index of the first byte from i on that is not JSON's
// white space.
func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// skipValue is the index just past the valid JSON value that starts at i.
func skipValue(v []byte, i int) int {
	depth := 0
	for ; i < len(v); i++ {
		switch v[i] {
		case '"':
			if i = stringEnd(v, i); depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 { // the end of the container the value was in
				return i
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// stringEnd is the index of the quote that ends the JSON string whose
// opening quote is at i (len(v) when none does).
func stringEnd(v []byte, i int) int {
	for i++; i < len(v) && v[i] != '"'; i++ {
		if v[i] == '\\' {
			i++
		}
	}
	return min(i, len(v))
}

// unquote is the text of q, a JSON string with its quotes, from a body
// that decoded: its bytes when it holds no escape and is valid UTF-8 (the
// decoder found no control character in it), else as encoding/json decodes
// it ("a\u0062" is "ab", a byte that is not UTF-8 is U+FFFD).
func unquote(q []byte) (string, bool) {
	if s := q[1 : len(q)-1]; bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s), true
	}
	var s string
	return s, json.Unmarshal(q, &s) == nil
}

// duplicateKey finds a key given twice in one object, at any depth, in a
// body that already decoded: JSON decoders disagree on which of two values
// wins, so a body that says two things is refused rather than guessed at.
// It scans the body's bytes once (a batch of 500 readings went through
// encoding/json's tokens in 11 ms): a key is compared as unquote reads it.
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
			end := stringEnd(body, i)
			if end >= len(body) {
				return "", false
			}
			if wantKey {
				name, ok := unquote(body[i : end+1])
				if !ok {
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
	var ok bool
	if sub.m, ok = members(v); null || !ok {
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
	if v, set, _ := f.raw(name); set && len(v) >= 2 && v[0] == '"' {
		if s, ok := unquote(v); ok {
			return rental.Optional[string]{Set: true, Value: s}, nil
		}
	}
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
	items, ok := elements(v)
	if !ok {
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
