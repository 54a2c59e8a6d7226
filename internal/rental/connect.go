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

// ConnectReturn is where the answer to a connect request sends the
// browser: the redirect URI with the answer's parameters (account_id and
// state, or error and state) added to whatever query it has, each one
// encoded. The URI itself is kept byte for byte, so the developer's check
// of it still holds.
func ConnectReturn(redirectURI string, params url.Values) (string, error) {
	if strings.Contains(redirectURI, "#") {
		return "", Invalid("redirect_uri", "A redirect URI has no fragment.")
	}
	if _, err := url.Parse(redirectURI); err != nil {
		return "", Invalid("redirect_uri", "The redirect URI is not a URL.")
	}
	switch {
	case !strings.Contains(redirectURI, "?"):
		redirectURI += "?"
	case !strings.HasSuffix(redirectURI, "?") && !strings.HasSuffix(redirectURI, "&"):
		redirectURI += "&"
	}
	return redirectURI + params.Encode(), nil
}

// RedirectOrigin is the origin (scheme://host[:port]) a redirect URI sends
// the browser to, for the consent page's Content-Security-Policy, which
// must let its form's redirect go there. ok is false for anything but
// http or https with a host of letters, digits, dots and hyphens and an
// optional numeric port: nothing else may be written into the policy.
func RedirectOrigin(uri string) (origin string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", false
	}
	host, port, hasPort := strings.Cut(u.Host, ":")
	if host == "" || (hasPort && port == "") {
		return "", false
	}
	for _, c := range host {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return "", false
		}
	}
	for _, c := range port {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return u.Scheme + "://" + u.Host, true
}
