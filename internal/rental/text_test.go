package rental

import "testing"

// Names and addresses that tenants see refuse what would let one look like
// another: text-direction overrides and isolates, zero-width and other
// invisible format characters; Thai, accents and emoji stay welcome. The
// one text rule (additions.md) refuses NUL, every other control character
// of C0 and C1, and blank text in every text a client sends; line breaks
// only in the multi-line ones (messages and descriptions, CheckLines).
func TestCheckText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in string
		// line is the answer for a one-line text (CheckText), lines for a
		// multi-line one (CheckLines).
		line, lines bool
	}{
		{"Baan Suk Dormitory", true, true},
		{"บ้านสุข อพาร์ทเมนท์", true, true},
		{"Café Ñandú 🏠", true, true},
		{"99 Soi Sukhumvit 71\nBangkok", false, true},
		{"Dear tenant,\r\nthe water is off today.\r\n", false, true},
		{"  leading and trailing spaces  ", true, true},
		{"Baan \u202eyrotimroD", false, false}, // right-to-left override
		{"Baan \u202dSuk", false, false},       // left-to-right override
		{"Baan \u2066Suk\u2069", false, false}, // isolates
		{"Baan\u200fSuk", false, false},        // right-to-left mark
		{"Baan\u200bSuk", false, false},        // zero-width space
		{"Baan\u200dSuk", false, false},        // zero-width joiner
		{"Baan\u2060Suk", false, false},        // word joiner
		{"\ufeffBaan Suk", false, false},       // byte order mark
		{"Baan\u00adSuk", false, false},        // soft hyphen
		{"Baan\u061cSuk", false, false},        // Arabic letter mark
		{"Baan\U000e0041Suk", false, false},    // tag character
		{"Baan\u2028Suk", false, false},        // line separator
		{"Baan\u2029Suk", false, false},        // paragraph separator
		{"Baan\x00Suk", false, false},          // NUL
		{"a\u0000b", false, false},             // NUL, as JSON's \u0000 decodes
		{"Baan\tSuk", false, false},            // tab: a C0 control
		{"Baan\x1b[31mSuk", false, false},      // escape: a terminal's colour
		{"Baan\x07Suk", false, false},          // bell
		{"Baan\rSuk", false, false},            // a lone carriage return
		{"Baan Suk\r", false, false},           // one at the end
		{"Baan\x7fSuk", false, false},          // DEL
		{"Baan\u0085Suk", false, false},        // next line: C1
		{"Baan\u009b31mSuk", false, false},     // control sequence introducer: C1
		{"Baan\u0080Suk", false, false},        // C1's first
		{"Baan\u009fSuk", false, false},        // C1's last
		{"Baan\xffSuk", false, false},          // not UTF-8
		{"   ", false, false},
		{"\u3000\u00a0", false, false}, // blank in wider spaces
		{"\n\n", false, false},         // blank lines
		{"", false, false},
	}
	for _, c := range cases {
		for _, check := range []struct {
			name string
			f    func(param, s string, minLen, maxLen int) error
			ok   bool
		}{{"CheckText", CheckText, c.line}, {"CheckLines", CheckLines, c.lines}} {
			err := check.f("name", c.in, 1, 200)
			if (err == nil) != check.ok {
				t.Errorf("%s(%q): %v", check.name, c.in, err)
			}
			if err != nil {
				if e, _ := AsError(err); e.Code != "invalid_parameter" || e.Param != "name" {
					t.Errorf("%s(%q): %+v", check.name, c.in, e)
				}
			}
		}
	}
	// An optional text may be empty, but not blank; and never null.
	for in, ok := range map[string]bool{"": true, " ": false, "\t": false, "x": true} {
		if err := CheckLines("description", in, 0, 10); (err == nil) != ok {
			t.Errorf("CheckLines(%q, 0 to 10): %v", in, err)
		}
	}
	if err := checkText("name", Optional[string]{Set: true, Null: true}, 0, 10); err == nil {
		t.Error("checkText took null")
	}
	// Too long is counted in characters, not bytes.
	if err := CheckText("name", "บ้านสุข", 1, 7); err != nil {
		t.Errorf("seven Thai characters: %v", err)
	}
	if err := CheckText("name", "บ้านสุขๆ", 1, 7); err == nil {
		t.Error("eight characters took as seven")
	}
}

// Every message and description check refuses what the rule refuses, as
// the API's 400 invalid_parameter naming the field.
func TestTextRuleEverywhere(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"a\u0000b", "   ", "a\u202eb", "a\u0085b", "a\x1b[2Jb"} {
		checks := map[string]error{
			"text":                    CheckMessageText(bad),
			"key name":                CheckKeyName(bad),
			"person name":             CheckPersonName(bad),
			"application name":        ApplicationSettings{Name: bad, Company: "Co", Scopes: Scopes{ScopeBillsRead}}.Check(),
			"application company":     ApplicationSettings{Name: "App", Company: bad, Scopes: Scopes{ScopeBillsRead}}.Check(),
			"application description": ApplicationSettings{Name: "App", Company: "Co", Description: bad, Scopes: Scopes{ScopeBillsRead}}.Check(),
		}
		for what, err := range checks {
			if e, ok := AsError(err); !ok || e.Code != "invalid_parameter" {
				t.Errorf("%s %q: %v", what, bad, err)
			}
		}
	}
	if err := CheckMessageText("Water is off today.\nSorry!"); err != nil {
		t.Errorf("a message of two lines: %v", err)
	}
}
