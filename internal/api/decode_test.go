package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A key given twice in one object is found at any depth; the same key in
// different objects, and strings that look like keys, are not duplicates.
func TestDuplicateKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body string
		dup  string
	}{
		{`{"name":"a","address":"b"}`, ""},
		{`{"name":"a","name":"b"}`, "name"},
		{`{"a":{"x":1},"b":{"x":1}}`, ""},
		{`{"electricity":{"current":1,"current":2}}`, "current"},
		{`{"a":[1,2,{"k":1,"k":2}]}`, "k"},
		{`{"a":[1,"a",{"a":1}],"b":"a"}`, ""},
		{`{"a":[[],[{}]],"b":{},"c":null}`, ""},
		{`{"a":[[],[{}]],"b":{},"a":null}`, "a"},
		{`{"enabled_events":["*","*"]}`, ""},
		{`{"a\u0062":1,"ab":2}`, "ab"},
		{`{"a":"x\"y","a":1}`, "a"},
		{`{"a":"x\\","b":{"a":1},"c":"\"a\":"}`, ""},
		{`{"é":1,"\u00e9":2}`, "é"},
		{`{"\/":1,"/":2}`, "/"},
		{"{" + keys(40) + `,"k7":0}`, "k7"},
		{"{" + keys(40) + "}", ""},
		{`[{"a":1},{"a":1}]`, ""},
		{`{"a":{"b":{"c":[{"d":1,"d":2}]}}}`, "d"},
	}
	for _, c := range cases {
		name, dup := duplicateKey([]byte(c.body))
		if dup != (c.dup != "") || name != c.dup {
			t.Errorf("%s: %q %v, want %q", c.body, name, dup, c.dup)
		}
	}
}

// keys is n distinct members "k0":0, "k1":1, ….
func keys(n int) string {
	m := make([]string, n)
	for i := range m {
		m[i] = fmt.Sprintf(`"k%d":%d`, i, i)
	}
	return strings.Join(m, ",")
}

// duplicateKey finds what a walk over encoding/json's tokens finds, for
// any body encoding/json decodes.
func FuzzDuplicateKey(f *testing.F) {
	for _, seed := range []string{`{"a":1,"a":2}`, `{"a":[{"b":1},{"b":1,"c":{"b":2,"b":3}}]}`, `{"x\u0041":1,"xA":2}`,
		`{"s":"}{\"","s2":"]["}`, `{"\ud83d\ude00":1,"😀":2}`, `[1,{"a":{}},{"a":[]}]`, "{" + keys(20) + `,"k19":1}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v any
		if json.Unmarshal(body, &v) != nil {
			return
		}
		name, dup := duplicateKey(body)
		wantName, wantDup := duplicateKeyByTokens(body)
		if dup != wantDup || name != wantName {
			t.Fatalf("%s: %q %v; the tokens say %q %v", body, name, dup, wantName, wantDup)
		}
	})
}

// duplicateKeyByTokens is duplicateKey by encoding/json's tokens: slower,
// and plainly right.
func duplicateKeyByTokens(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var stack []map[string]bool // nil for an array
	wantKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		if n := len(stack); n > 0 && stack[n-1] != nil && wantKey {
			if name, ok := tok.(string); ok {
				if stack[n-1][name] {
					return name, true
				}
				stack[n-1][name], wantKey = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack, wantKey = append(stack, map[string]bool{}), true
			continue
		case json.Delim('['):
			stack = append(stack, nil)
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		wantKey = len(stack) > 0 && stack[len(stack)-1] != nil
	}
}

// A batch of 500 readings, scanned for a duplicate key by duplicateKey
// and, as the baseline in the same run, by encoding/json's tokens.
func BenchmarkDuplicateKey(b *testing.B) {
	items := make([]string, 500)
	for i := range items {
		items[i] = fmt.Sprintf(`{"room_id":"room_%024d","month":"2026-10","electricity":{"current":%d},"water":{"current":%d}}`, i, 1000+i, 50+i)
	}
	body := []byte(`{"readings":[` + strings.Join(items, ",") + `]}`)
	for name, find := range map[string]func([]byte) (string, bool){"scan": duplicateKey, "tokens": duplicateKeyByTokens} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, dup := find(body); dup {
					b.Fatal("a duplicate")
				}
			}
		})
	}
}

// A batch of 500 readings as createReadings decodes it: the body, its
// array, and each item's fields (issue 32's batch).
func BenchmarkDecodeBatch(b *testing.B) {
	items := make([]string, 500)
	for i := range items {
		items[i] = fmt.Sprintf(`{"room_id":"room_%024d","month":"2026-10","electricity":{"previous":1000,"current":%d},"water":{"previous":100,"current":%d}}`, i, 1000+i, 50+i)
	}
	body := []byte(`{"readings":[` + strings.Join(items, ",") + `]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		f, err := parseObject(body, "readings")
		if err != nil {
			b.Fatal(err)
		}
		raw, _, _ := f.raw("readings")
		list, ok := elements(raw)
		if !ok || len(list) != 500 {
			b.Fatal("not the array")
		}
		for _, item := range list {
			f, err := parseItem(item, "readings", readingFields...)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := readingInput(f); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// members and elements split a checked body exactly as encoding/json does,
// whatever its white space, escapes and nesting; values that are not an
// object (or not an array) are told apart.
func TestMembersAndElements(t *testing.T) {
	t.Parallel()
	objects := []string{
		`{}`, ` { } `, `{"a":1}`, "{\n\t\"a\" :\r 1 ,\n \"b\" : [ 1 , 2 ] }",
		`{"a\u0062":"x","c\\d":"y\"z"}`, `{"a":"}]\"[{","b":{"c":[{"d":"]"}]},"e":null}`,
		`{"a":-1.5e3,"b":true,"c":false,"d":"\u00e9","e":[[],[{}]]}`, `{"ไทย":"บ้าน"}`,
	}
	for _, s := range objects {
		want := map[string]json.RawMessage{}
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(s, err)
		}
		got, ok := members([]byte(s))
		if !ok || len(got) != len(want) {
			t.Fatalf("members(%s) = %q, %v; want %q", s, got, ok, want)
		}
		for k, v := range want {
			if !bytes.Equal(bytes.TrimSpace(got[k]), bytes.TrimSpace(v)) {
				t.Errorf("members(%s)[%q] = %s, want %s", s, k, got[k], v)
			}
		}
	}
	arrays := []string{`[]`, ` [ ] `, `[1]`, "[ 1 ,\n\"a,]\" , {\"x\":[2]} , [ ] , null ]", `["\\",{"a":"\\\""}]`}
	for _, s := range arrays {
		var want []json.RawMessage
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(s, err)
		}
		got, ok := elements([]byte(s))
		if !ok || len(got) != len(want) {
			t.Fatalf("elements(%s) = %q, %v; want %q", s, got, ok, want)
		}
		for i := range want {
			if !bytes.Equal(bytes.TrimSpace(got[i]), bytes.TrimSpace(want[i])) {
				t.Errorf("elements(%s)[%d] = %s, want %s", s, i, got[i], want[i])
			}
		}
	}
	for _, s := range []string{`null`, `1`, `"{}"`, `[{}]`, ` true`} {
		if _, ok := members([]byte(s)); ok {
			t.Errorf("members(%s) took it for an object", s)
		}
	}
	for _, s := range []string{`null`, `1`, `"[]"`, `{"a":[]}`} {
		if _, ok := elements([]byte(s)); ok {
			t.Errorf("elements(%s) took it for an array", s)
		}
	}
}

// A string field reads as encoding/json reads it: escapes decoded, and
// bytes that are not UTF-8 replaced.
func TestStringFields(t *testing.T) {
	t.Parallel()
	body := []byte("{\"a\":\"plain ไทย\",\"b\":\"a\\u0062\\n\\\"\",\"c\":\"bad \xff byte\",\"d\":\"\",\"e\":3}")
	f, err := parseObject(body, "a", "b", "c", "d", "e")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		got, err := f.string(name)
		if err != nil || !got.Set || got.Value != want[name] {
			t.Errorf("%s: %q %v, want %q", name, got.Value, err, want[name])
		}
	}
	if _, err := f.string("e"); err == nil {
		t.Error("a number read as a string")
	}
}
