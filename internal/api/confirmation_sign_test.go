package api

import (
	"strings"
	"testing"
)

// A provider's signature is the README's: sha256= and the lowercase hex
// HMAC-SHA256 of "<timestamp>.<raw body>" under the provider's secret, in
// any entry of the header, so that a provider can roll its secret.
func TestProviderSigned(t *testing.T) {
	const secret, ts, body = "prov_secret", int64(1795143600), `{"a":1}`
	const good = "75a93c80934e002b61f60a291c94586992160533bb56f35103b4a14a5cf4e753" // computed apart, with Python's hmac
	for _, c := range []struct {
		name, header string
		ts           int64
		body         string
		want         bool
	}{
		{"the one entry", "sha256=" + good, ts, body, true},
		{"the second entry of a roll", "sha256=" + strings.Repeat("0", 64) + ", sha256=" + good, ts, body, true},
		{"no prefix", good, ts, body, false},
		{"upper-case hex", "sha256=" + strings.ToUpper(good), ts, body, false},
		{"another timestamp", "sha256=" + good, ts + 1, body, false},
		{"another body", "sha256=" + good, ts, `{"a":2}`, false},
		{"empty", "", ts, body, false},
		{"a prefix of it", "sha256=" + good[:32], ts, body, false},
	} {
		if got := providerSigned(c.header, secret, c.ts, []byte(c.body)); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
