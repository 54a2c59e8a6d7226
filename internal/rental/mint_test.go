package rental

import (
	"strings"
	"testing"
)

// A minted key has its mode's prefix and the shape a request's key is
// checked against, and keeps its fingerprint, visible prefix and last four
// characters: every maker of keys stores all three.
func TestMintKey(t *testing.T) {
	fingerprint := func(key string) string { return "fp(" + key + ")" }
	cases := []struct {
		mode   Mode
		prefix string
	}{
		{ModeTest, KeyPrefixTest},
		{ModeLive, KeyPrefixLive},
	}
	for _, c := range cases {
		m := MintKey(c.mode, fingerprint)
		switch {
		case !strings.HasPrefix(m.Text, c.prefix) || !LooksLikeAPIKey(m.Text):
			t.Errorf("%s: text %q", c.mode, m.Text)
		case m.Fingerprint != "fp("+m.Text+")":
			t.Errorf("%s: fingerprint %q of %q", c.mode, m.Fingerprint, m.Text)
		case m.Prefix != m.Text[:len(c.prefix)+4] || m.Prefix != KeyVisiblePrefix(m.Text):
			t.Errorf("%s: prefix %q of %q", c.mode, m.Prefix, m.Text)
		case len(m.Last4) != 4 || !strings.HasSuffix(m.Text, m.Last4):
			t.Errorf("%s: last4 %q of %q", c.mode, m.Last4, m.Text)
		}
		if again := MintKey(c.mode, fingerprint); again.Text == m.Text {
			t.Errorf("%s: the same key twice", c.mode)
		}
	}
}

// The account a key form names is none or an ID's shape; anything else is
// refused as the binding rule refuses an account that is not the
// application's, before any lookup.
func TestCheckKeyAccountID(t *testing.T) {
	cases := []struct {
		id   string
		want error
	}{
		{"", nil},
		{"acct_1a2b3c", nil},
		{"ACCT_1", ErrKeyAccount},
		{"acct 1", ErrKeyAccount},
		{"acct_1'--", ErrKeyAccount},
		{strings.Repeat("a", 65), ErrKeyAccount},
	}
	for _, c := range cases {
		if got := CheckKeyAccountID(c.id); got != c.want {
			t.Errorf("%q: %v, want %v", c.id, got, c.want)
		}
	}
	if e, _ := AsError(ErrKeyAccount); e == nil || e.Kind != KindInvalid || e.Param != "account" {
		t.Errorf("ErrKeyAccount is %+v", e)
	}
}
