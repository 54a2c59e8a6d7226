package rental

import (
	"net/url"
	"strings"
	"time"
)

// ConnectCodeValidity is how long the portal's single-use code lives, and
// ConsentValidity how long a consent page's approval form may be sent.
const (
	ConnectCodeValidity = 5 * time.Minute
	ConsentValidity     = 30 * time.Minute
)

// Limits of an application's redirect URIs.
const (
	maxRedirectURIs   = 10
	maxRedirectURILen = 2000
)

// CheckRedirectURIs is nil when every URI may be registered: https, or
// plain http on localhost or 127.0.0.1 (with any port) for development;
// no fragment, no user information; at most 10, each at most 2000
// characters. They are kept exactly as given.
func CheckRedirectURIs(uris []string) error {
	if len(uris) > maxRedirectURIs {
		return Invalid("redirect_uris", "An application has at most %d redirect URIs.", maxRedirectURIs)
	}
	for _, raw := range uris {
		u, err := url.Parse(raw)
		switch {
		case len(raw) > maxRedirectURILen:
			return Invalid("redirect_uris", "A redirect URI is at most %d characters.", maxRedirectURILen)
		case err != nil || u.Host == "" || !u.IsAbs():
			return Invalid("redirect_uris", "'%s' is not an absolute URL.", raw)
		case u.Fragment != "" || strings.Contains(raw, "#"):
			return Invalid("redirect_uris", "'%s' has a fragment (#…); redirect URIs have none.", raw)
		case u.User != nil:
			return Invalid("redirect_uris", "'%s' carries a user name or password.", raw)
		case u.Scheme == "https":
		case u.Scheme == "http" && (u.Hostname() == "localhost" || u.Hostname() == "127.0.0.1"):
		default:
			return Invalid("redirect_uris", "'%s' must be https (plain http only on localhost or 127.0.0.1).", raw)
		}
	}
	return nil
}

// RedirectAllowed reports whether uri is one of the registered redirect
// URIs exactly, byte for byte: no leniency on a trailing slash, a port, the
// case or an added query, so the service never sends anyone elsewhere.
func RedirectAllowed(registered []string, uri string) bool {
	for _, r := range registered {
		if r == uri {
			return true
		}
	}
	return false
}

// CheckState is nil for a connect request's state: 8 to 512 printable
// ASCII characters, which the developer checks on return.
func CheckState(state string) error {
	if len(state) < 8 || len(state) > 512 {
		return Invalid("state", "state must be 8 to 512 characters.")
	}
	for i := 0; i < len(state); i++ {
		if state[i] < 0x21 || state[i] > 0x7e {
			return Invalid("state", "state must be printable ASCII without spaces.")
		}
	}
	return nil
}

// NewGrant is what a landlord's approval grants: the scopes the
// application requests now (what the consent page showed). Whatever the
// old grant held that the application no longer requests is gone.
func NewGrant(requested Scopes) Scopes { return requested.Intersect(AllScopes) }

// NewScopes are the scopes an application requests that the landlord's
// current grant lacks: the consent page marks them as new.
func NewScopes(requested, granted Scopes) Scopes {
	out := Scopes{}
	for _, s := range requested.normal() {
		if !granted.Has(s) {
			out = append(out, s)
		}
	}
	return out
}
