package rental

import "testing"

// Names and addresses that tenants see refuse what would let one look like
// another: text-direction overrides and isolates, zero-width and other
// invisible format characters; Thai, accents and emoji stay welcome.
func TestCheckText(t *testing.T) {
	cases := []struct {
		in string
		ok bool
	}{
		{"Baan Suk Dormitory", true},
		{"บ้านสุข อพาร์ทเมนท์", true},
		{"Café Ñandú 🏠", true},
		{"99 Soi Sukhumvit 71\nBangkok", true},
		{"Baan \u202eyrotimroD", false}, // right-to-left override
		{"Baan \u202dSuk", false},       // left-to-right override
		{"Baan \u2066Suk\u2069", false}, // isolates
		{"Baan\u200fSuk", false},        // right-to-left mark
		{"Baan\u200bSuk", false},        // zero-width space
		{"Baan\u200dSuk", false},        // zero-width joiner
		{"Baan\u2060Suk", false},        // word joiner
		{"\ufeffBaan Suk", false},       // byte order mark
		{"Baan\u00adSuk", false},        // soft hyphen
		{"Baan\u061cSuk", false},        // Arabic letter mark
		{"Baan\U000e0041Suk", false},    // tag character
		{"Baan\u2028Suk", false},        // line separator
		{"Baan\x00Suk", false},
		{"   ", false},
	}
	for _, c := range cases {
		err := checkText("name", Of(c.in), 1, 200)
		if (err == nil) != c.ok {
			t.Errorf("%q: %v", c.in, err)
		}
		if err != nil {
			if e, _ := AsError(err); e.Code != "invalid_parameter" || e.Param != "name" {
				t.Errorf("%q: %+v", c.in, e)
			}
		}
	}
}
