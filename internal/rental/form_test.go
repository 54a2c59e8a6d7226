package rental

import (
	"slices"
	"strings"
	"testing"
)

// A posted form is text: UTF-8 without a NUL, in every value of every
// field.
func TestCheckFormText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fields map[string][]string
		ok     bool
	}{
		{"none", nil, true},
		{"thai and english", map[string][]string{"name": {"หอพักสุขใจ", "Sukjai"}}, true},
		{"empty value", map[string][]string{"name": {""}}, true},
		{"not utf-8", map[string][]string{"name": {"ok", "\xff\xfe"}}, false},
		{"nul", map[string][]string{"a": {"x"}, "b": {"a\x00b"}}, false},
	}
	for _, c := range cases {
		err := CheckFormText(c.fields)
		if c.ok != (err == nil) {
			t.Errorf("%s: %v, want ok %v", c.name, err, c.ok)
		}
		if e, isErr := AsError(err); err != nil && (!isErr || e.Kind != KindInvalid || e.Code != "invalid_form") {
			t.Errorf("%s: %v, want invalid_form", c.name, err)
		}
	}
	if ErrUnreadableForm.Kind != KindInvalid || ErrUnreadableForm.Code != "invalid_form" {
		t.Errorf("ErrUnreadableForm = %+v", ErrUnreadableForm)
	}
}

// A ticked box is exactly one scope: no "all", no list in one value.
func TestParseScopeChoices(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		values []string
		want   Scopes
		param  string
	}{
		{"none", nil, nil, ""},
		{"two, sorted", []string{string(ScopeBillsRead), string(ScopePropertiesRead)}, Scopes{ScopePropertiesRead, ScopeBillsRead}, ""},
		{"repeated", []string{string(ScopeBillsRead), string(ScopeBillsRead)}, Scopes{ScopeBillsRead}, ""},
		{"all", []string{"all"}, nil, "scopes"},
		{"a list in one box", []string{string(ScopeBillsRead) + " " + string(ScopeRoomsRead)}, nil, "scopes"},
		{"unknown", []string{"bills:delete"}, nil, "scopes"},
	}
	for _, c := range cases {
		got, err := ParseScopeChoices(c.values)
		if c.param != "" {
			if e, ok := AsError(err); !ok || e.Code != "invalid_parameter" || e.Param != c.param {
				t.Errorf("%s: %v, want invalid_parameter of %s", c.name, err, c.param)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// A page's position is "<ms>.<id>"; anything else is no page.
func TestParsePosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		ms   int64
		id   string
		good bool
	}{
		{"1767225600000.whd_abc123", 1767225600000, "whd_abc123", true},
		{"0.x", 0, "x", true},
		{"", 0, "", false},
		{"1767225600000", 0, "", false},
		{"1767225600000.", 0, "", false},
		{".whd_abc", 0, "", false},
		{"-1.whd_abc", 0, "", false},
		{"12x.whd_abc", 0, "", false},
		{"1.WHD_ABC", 0, "", false},
		{"1.whd-abc", 0, "", false},
		{"1.whd_abc.def", 0, "", false},
		{"99999999999999999999.whd_abc", 0, "", false},
	}
	for _, c := range cases {
		ms, id, err := ParsePosition("older", c.in)
		if !c.good {
			if e, ok := AsError(err); !ok || e.Kind != KindInvalid || e.Param != "older" {
				t.Errorf("%q: %d %q %v, want invalid older", c.in, ms, id, err)
			}
			continue
		}
		if err != nil || ms != c.ms || id != c.id {
			t.Errorf("%q: %d %q %v, want %d %q", c.in, ms, id, err, c.ms, c.id)
		}
	}
}

// Busy is a 503 to try again in a second; each is its own value.
func TestBusy(t *testing.T) {
	t.Parallel()
	a, b := Busy(), Busy()
	if a.Kind != KindUnavailable || a.Code != "service_unavailable" || a.RetryAfter != 1 {
		t.Errorf("Busy() = %+v", a)
	}
	if a == b {
		t.Error("Busy returns one shared value")
	}
}

// The Requests page's "older" is "<ms>.<seq>_<id>"; anything else is no
// page.
func TestParseRequestPosition(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   string
		want RequestPosition
		good bool
	}{
		{"1767225600000.1795000000000001_req_abc", RequestPosition{1767225600000, 1795000000000001, "req_abc"}, true},
		{"0.0_x", RequestPosition{0, 0, "x"}, true},
		{"", RequestPosition{}, false},
		{"1767225600000.req_abc", RequestPosition{}, false},
		{"1767225600000.12_", RequestPosition{}, false},
		{"1767225600000.12", RequestPosition{}, false},
		{"1767225600000.x12_req_abc", RequestPosition{}, false},
		{"-1.12_req_abc", RequestPosition{}, false},
	}
	for _, c := range cases {
		got, err := ParseRequestPosition(c.in)
		if !c.good {
			if e, ok := AsError(err); !ok || e.Kind != KindInvalid || e.Param != "older" {
				t.Errorf("%q: %+v %v, want invalid older", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
}

// A docs search is trimmed text of at most 100 characters.
func TestParseSearch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		good     bool
	}{
		{"  bills ", "bills", true},
		{"", "", true},
		{strings.Repeat("บ", 100), strings.Repeat("บ", 100), true},
		{strings.Repeat("บ", 101), "", false},
		{"bad \xff", "", false},
	} {
		got, err := ParseSearch(c.in)
		if !c.good {
			if e, ok := AsError(err); !ok || e.Kind != KindInvalid || e.Param != "q" {
				t.Errorf("%q: %q %v, want invalid q", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %q %v, want %q", c.in, got, err, c.want)
		}
	}
}
