package rental

import (
	"strings"
	"testing"
	"time"
)

// A key's status: revoked over everything, expired from its expiry on,
// expiring within the last 24 hours (a rotated key's whole grace period),
// active otherwise.
func TestKeyStatus(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) *Time { return &Time{Time: now.Add(d)} }
	cases := []struct {
		name string
		key  APIKey
		want KeyStatus
	}{
		{"no expiry", APIKey{}, KeyActive},
		{"expires in a week", APIKey{ExpiresAt: at(7 * 24 * time.Hour)}, KeyActive},
		{"expires in 24 hours and a second", APIKey{ExpiresAt: at(24*time.Hour + time.Second)}, KeyActive},
		{"rotated just now", APIKey{ExpiresAt: at(24 * time.Hour)}, KeyExpiring},
		{"expires in a minute", APIKey{ExpiresAt: at(time.Minute)}, KeyExpiring},
		{"expires now", APIKey{ExpiresAt: at(0)}, KeyExpired},
		{"expired yesterday", APIKey{ExpiresAt: at(-24 * time.Hour)}, KeyExpired},
		{"revoked", APIKey{RevokedAt: at(-time.Hour)}, KeyRevoked},
		{"revoked and expired", APIKey{RevokedAt: at(-time.Hour), ExpiresAt: at(-time.Minute)}, KeyRevoked},
	}
	for _, c := range cases {
		if got := c.key.Status(now); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// A key's use is written down the first time and then at most once a minute.
func TestUseToNote(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) *Time { return &Time{Time: now.Add(d)} }
	cases := []struct {
		name string
		last *Time
		want bool
	}{
		{"never used", nil, true},
		{"a second ago", at(-time.Second), false},
		{"59 seconds ago", at(-59 * time.Second), false},
		{"a minute ago", at(-time.Minute), true},
		{"yesterday", at(-24 * time.Hour), true},
	}
	for _, c := range cases {
		k := APIKey{LastUsedAt: c.last}
		if got := k.UseToNote(now); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

// An expiry date is a day in Thailand; the key works through it.
func TestKeyExpiryDate(t *testing.T) {
	t.Parallel()
	// now is 2026-11-22 10:00 in Bangkok.
	cases := []struct {
		date string
		want string // the expiry in UTC, or the error code
	}{
		{"", ""},
		{"2026-11-22", "2026-11-22T17:00:00Z"},
		{"2026-12-31", "2026-12-31T17:00:00Z"},
		{"2026-11-21", "invalid_parameter"},
		{"2036-11-22", "2036-11-22T17:00:00Z"},
		{"2037-01-01", "invalid_parameter"},
		{"22/11/2026", "invalid_parameter"},
		{"2026-02-30", "invalid_parameter"},
		{"tomorrow", "invalid_parameter"},
	}
	for _, c := range cases {
		got, err := KeyExpiryDate(c.date, now)
		var s string
		switch {
		case err != nil:
			s = code(err)
		case got != nil:
			s = got.Format(time.RFC3339)
		}
		if s != c.want {
			t.Errorf("%q: %s, want %s", c.date, s, c.want)
		}
	}
}

// Key names and the part of a key's end shown in listings.
func TestKeyTexts(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"Production": "", "": "invalid_parameter", "   ": "invalid_parameter",
		strings.Repeat("k", 201): "invalid_parameter", "a\u202eb": "invalid_parameter"} {
		if got := code(CheckKeyName(name)); got != want {
			t.Errorf("name %q: %q, want %q", name, got, want)
		}
	}
	key := NewAPIKeySecret(ModeLive)
	if got := KeyLast4(key); got != key[len(key)-4:] || len(got) != 4 {
		t.Errorf("last 4 of %s: %q", key, got)
	}
	if got := KeyLast4("svc_live_ab"); got != "" {
		t.Errorf("a too short key shows %q", got)
	}
}

// An application's settings: names, a description, at least one scope and
// redirect URIs by their own rule.
func TestApplicationSettings(t *testing.T) {
	t.Parallel()
	ok := ApplicationSettings{Name: "Dorm Books", Company: "Baan Soft Co., Ltd.", Scopes: Scopes{ScopeBillsRead}}
	cases := []struct {
		name   string
		change func(*ApplicationSettings)
		param  string
	}{
		{"valid", func(*ApplicationSettings) {}, ""},
		{"with description and URIs", func(a *ApplicationSettings) {
			a.Description = "Bookkeeping\nfor dormitories"
			a.RedirectURIs = []string{"https://books.example.com/cb", "http://localhost:3000/cb"}
		}, ""},
		{"no name", func(a *ApplicationSettings) { a.Name = " " }, "name"},
		{"long name", func(a *ApplicationSettings) { a.Name = strings.Repeat("n", 201) }, "name"},
		{"no company", func(a *ApplicationSettings) { a.Company = "" }, "company"},
		{"hidden characters", func(a *ApplicationSettings) { a.Company = "Baan\u200bSoft" }, "company"},
		{"long description", func(a *ApplicationSettings) { a.Description = strings.Repeat("d", 2001) }, "description"},
		{"no scopes", func(a *ApplicationSettings) { a.Scopes = nil }, "scopes"},
		{"plain http", func(a *ApplicationSettings) { a.RedirectURIs = []string{"http://books.example.com/cb"} }, "redirect_uris"},
	}
	for _, c := range cases {
		a := ok
		c.change(&a)
		err := a.Check()
		var param string
		if e, isErr := AsError(err); isErr {
			param = e.Param
		}
		if (err == nil) != (c.param == "") || param != c.param {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
