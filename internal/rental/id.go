package rental

import (
	"crypto/rand"
	"strings"
	"time"
)

// ID prefixes, one per kind of object; a prefix tells a reader (and a log
// search) what an ID names.
const (
	PrefixDeveloper   = "dev"
	PrefixApplication = "app"
	PrefixAccount     = "acct"
	PrefixLandlord    = "ll"
	PrefixAPIKey      = "key"
	PrefixProperty    = "prop"
	PrefixRoom        = "room"
	PrefixEvent       = "evt"
	PrefixRequest     = "req"
)

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewID returns prefix + "_" + 24 characters of [a-z0-9] from crypto/rand:
// about 124 bits, so IDs can be handed out without coordination.
func NewID(prefix string) string {
	return prefix + "_" + randomString(24, idAlphabet)
}

// WellFormedID reports whether s has the shape of an ID of ours (1 to 64
// lower-case letters, digits and underscores): anything else cannot name an
// object, and is answered as not found without asking the database.
func WellFormedID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ValidID reports whether s has the shape NewID gives IDs of the prefix,
// so that a mistyped ID is told apart from an unknown one before anything
// is looked up.
func ValidID(prefix, s string) bool {
	body, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(body) != 24 {
		return false
	}
	for i := 0; i < len(body); i++ {
		if !strings.ContainsRune(idAlphabet, rune(body[i])) {
			return false
		}
	}
	return true
}

// randomString draws n characters of alphabet uniformly (rejection sampling,
// so no character is more likely than another).
func randomString(n int, alphabet string) string {
	var b strings.Builder
	b.Grow(n)
	limit := 256 - 256%len(alphabet)
	buf := make([]byte, n+n/2)
	for b.Len() < n {
		rand.Read(buf) // never fails (crypto/rand panics rather than return an error)
		for _, c := range buf {
			if int(c) < limit && b.Len() < n {
				b.WriteByte(alphabet[int(c)%len(alphabet)])
			}
		}
	}
	return b.String()
}

// Time is an instant as the API shows it: ISO 8601 in UTC with second
// precision and a Z suffix. The full precision is kept inside, because
// pagination orders by it.
type Time struct {
	textJSON // first: a zero-size last field would pad Time by a word
	time.Time
}

// textJSON hides time.Time's MarshalJSON: two methods of that name at one
// depth cancel out, so Time is no json.Marshaler and encoding/json writes
// its MarshalText as a string. A Marshaler's output is scanned again to
// check it, a large part of encoding a page of bills (BenchmarkEncodeBills
// measures it).
type textJSON struct{}

// MarshalJSON is never called: it only makes Time's ambiguous.
func (textJSON) MarshalJSON() ([]byte, error) { panic("unreachable") }

// TimeLayout is the one format of timestamps in requests and responses.
const TimeLayout = "2006-01-02T15:04:05Z"

// MarshalText writes the instant in TimeLayout (encoding/json quotes
// it). Digit by digit: a page of bills has a hundred timestamps, and
// time's general formatter reads the layout each time.
func (t Time) MarshalText() ([]byte, error) {
	u := t.UTC()
	year, month, day := u.Date()
	if year < 0 || year > 9999 {
		return u.AppendFormat(nil, TimeLayout), nil
	}
	hour, minute, second := u.Clock()
	two := func(b []byte, n int) []byte { return append(b, byte('0'+n/10), byte('0'+n%10)) }
	b := make([]byte, 0, len(TimeLayout))
	b = two(two(b, year/100), year%100)
	b = two(append(b, '-'), int(month))
	b = two(append(b, '-'), day)
	b = two(append(b, 'T'), hour)
	b = two(append(b, ':'), minute)
	b = two(append(b, ':'), second)
	return append(b, 'Z'), nil
}

// UnixMilli converts milliseconds since the epoch, as stored, into a Time.
func UnixMilli(ms int64) Time { return Time{Time: time.UnixMilli(ms).UTC()} }

// Prefixes of the monthly cycle's objects.
const (
	PrefixTenant  = "tnt"
	PrefixMeter   = "mtr"
	PrefixReading = "mrd"
	PrefixBill    = "bill"
	PrefixPayment = "pay"
)
