package api

import "testing"

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
	}
	for _, c := range cases {
		name, dup := duplicateKey([]byte(c.body))
		if dup != (c.dup != "") || name != c.dup {
			t.Errorf("%s: %q %v, want %q", c.body, name, dup, c.dup)
		}
	}
}
