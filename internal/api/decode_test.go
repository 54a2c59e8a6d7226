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
