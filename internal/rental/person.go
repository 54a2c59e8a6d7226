package rental

import (
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// PrefixPerson names people who sign in to the web pages.
const PrefixPerson = "usr"

// PersonKind says which side a person signs in on: a developer (the portal)
// or a landlord (the landlord's app, and the consent page).
type PersonKind string

// The two kinds of people.
const (
	PersonDeveloper PersonKind = "developer"
	PersonLandlord  PersonKind = "landlord"
)

// Person is someone who signs in: a developer's or a landlord's login.
type Person struct {
	ID          string
	Kind        PersonKind
	Email       string
	Name        string
	DeveloperID string // for a developer
	LandlordID  string // for a landlord
	CreatedAt   Time
}

// Session lifetimes: a session ends after SessionIdle without a request,
// and at the latest SessionMax after sign-in.
const (
	SessionIdle = 12 * time.Hour
	SessionMax  = 30 * 24 * time.Hour
)

// MinPasswordLen is the shortest password accepted.
const MinPasswordLen = 10

// maxPasswordLen bounds what is hashed, so a huge password costs nothing.
const maxPasswordLen = 200

// NormalizeEmail checks an email address and returns it in the one form it
// is stored and looked up by (trimmed, lower case).
func NormalizeEmail(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return "", Missing("email")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 || !strings.Contains(s[strings.LastIndexByte(s, '@'):], ".") {
		return "", Invalid("email", "Enter an email address such as name@example.com.")
	}
	return s, nil
}

// CheckPassword is nil for a password that may be set for the email: at
// least MinPasswordLen characters, not the email itself.
func CheckPassword(password, email string) error {
	n := utf8.RuneCountInString(password)
	switch {
	case n < MinPasswordLen:
		return Invalid("password", "The password must be at least %d characters long.", MinPasswordLen)
	case n > maxPasswordLen:
		return Invalid("password", "The password must be at most %d characters long.", maxPasswordLen)
	case strings.EqualFold(strings.TrimSpace(password), email):
		return Invalid("password", "The password must not be your email address.")
	}
	return nil
}

// CheckPersonName is nil for a name a person may give: 1 to 200
// characters, nothing invisible.
func CheckPersonName(name string) error {
	return checkText("name", Of(name), 1, MaxNameLen)
}
