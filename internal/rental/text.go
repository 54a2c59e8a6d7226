package rental

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText is the one rule for a line of text a client sends: a name, an
// address, a room number, a company, a key's or an application's name.
// Every way in (the API, the web pages, the admin tool) checks it here, so
// a text refused by one is refused by all. The text is UTF-8 of minLen to
// maxLen characters; it holds no NUL, no other control character of C0 (a
// tab or a line break included), DEL or C1, and no Unicode format character
// (text-direction overrides and isolates, zero-width characters, soft
// hyphens, tags) or line and paragraph separator: what people cannot see
// must not change what they read, on a payment page, in a chat, or in an
// operator's terminal. A text that is not empty is not blank either.
// Anything else is 400 invalid_parameter naming param.
func CheckText(param, s string, minLen, maxLen int) error {
	return checkString(param, s, minLen, maxLen, false)
}

// CheckLines is CheckText for the texts that may run over several lines,
// a message to a tenant and a description: line breaks (LF, or CR LF) are
// allowed there, and nothing else of what CheckText refuses.
func CheckLines(param, s string, minLen, maxLen int) error {
	return checkString(param, s, minLen, maxLen, true)
}

// Hidden reports whether r is a character the text rule refuses in every
// text: a control character (line breaks included) or one people cannot
// see that changes how the text around it shows. Text stored before the
// rule, shown where it could act on a terminal or a page, has these shown
// as escapes instead.
func Hidden(r rune) bool {
	return unicode.IsControl(r) || invisible(r)
}

// checkText is CheckText of an optional field: present, it must not be
// null.
func checkText(param string, v Optional[string], minLen, maxLen int) error {
	if v.Null {
		return Invalid(param, "%s must be a string, not null.", param)
	}
	return CheckText(param, v.Value, minLen, maxLen)
}

// checkLines is CheckLines of an optional field.
func checkLines(param string, v Optional[string], minLen, maxLen int) error {
	if v.Null {
		return Invalid(param, "%s must be a string, not null.", param)
	}
	return CheckLines(param, v.Value, minLen, maxLen)
}

func checkString(param, s string, minLen, maxLen int, lines bool) error {
	if !utf8.ValidString(s) {
		return Invalid(param, "%s must be UTF-8 text.", param)
	}
	n := utf8.RuneCountInString(s)
	if n < minLen || n > maxLen {
		return Invalid(param, "%s must be %d to %d characters long.", param, minLen, maxLen)
	}
	for i, r := range s {
		switch {
		case lines && (r == '\n' || r == '\r' && strings.HasPrefix(s[i+1:], "\n")):
		case r == 0:
			return Invalid(param, "%s must not contain NUL characters.", param)
		case r == '\n' || r == '\r':
			if lines {
				return Invalid(param, "%s must break lines with LF or CR LF only.", param)
			}
			return Invalid(param, "%s must be a single line, without line breaks.", param)
		case unicode.IsControl(r):
			return Invalid(param, "%s must not contain control characters (U+%04X).", param, r)
		case invisible(r):
			return Invalid(param, "%s must not contain invisible formatting or text-direction characters (U+%04X).", param, r)
		}
	}
	if s != "" && strings.TrimSpace(s) == "" {
		return Invalid(param, "%s must not be blank.", param)
	}
	return nil
}

// invisible reports whether r is a character people cannot see that changes
// how the text around it shows: text-direction overrides and isolates,
// zero-width characters, and the other format characters (Unicode category
// Cf), and the line and paragraph separators. Names and addresses that
// tenants read on payment pages and in chat refuse them, so that a name
// cannot be made to look like another.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}
