package rental

import (
	"net/url"
	"slices"
	"strconv"
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
// plain http on localhost or 127.0.0.1 (with an optional port) for
// development; printable ASCII without spaces, no fragment, no user
// information, each listed once; at most 10, each at most 2000 characters.
// They are kept exactly as given, because a connect request's redirect_uri
// must equal one of them byte for byte (RedirectAllowed), and a landlord's
// browser is only ever sent to an address the developer registered.
func CheckRedirectURIs(uris []string) error {
	if len(uris) > maxRedirectURIs {
		return Invalid("redirect_uris", "An application has at most %d redirect URIs.", maxRedirectURIs)
	}
	for i, raw := range uris {
		if err := checkRedirectURI(raw); err != nil {
			return err
		}
		if slices.Contains(uris[:i], raw) {
			return Invalid("redirect_uris", "'%s' is listed twice.", raw)
		}
	}
	return nil
}

// checkRedirectURI is CheckRedirectURIs for one URI.
func checkRedirectURI(raw string) error {
	if len(raw) > maxRedirectURILen {
		return Invalid("redirect_uris", "A redirect URI is at most %d characters.", maxRedirectURILen)
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < 0x21 || raw[i] > 0x7e {
			return Invalid("redirect_uris", "A redirect URI is printable ASCII without spaces (percent-encode the rest): '%s'.", raw)
		}
	}
	u, err := url.Parse(raw)
	https := strings.HasPrefix(raw, "https://")
	switch {
	case err != nil || !https && !strings.HasPrefix(raw, "http://") || u.Hostname() == "" || strings.HasSuffix(u.Host, ":"):
		return Invalid("redirect_uris", "'%s' is not an absolute https:// URL.", raw)
	case strings.Contains(raw, "#"):
		return Invalid("redirect_uris", "'%s' has a fragment (#…); redirect URIs have none.", raw)
	case u.User != nil:
		return Invalid("redirect_uris", "'%s' carries a user name or password.", raw)
	case !https && u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1":
		return Invalid("redirect_uris", "'%s' must be https (plain http only on localhost or 127.0.0.1).", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return Invalid("redirect_uris", "'%s' has a port outside 1-65535.", raw)
		}
	}
	return nil
}

// RedirectAllowed reports whether uri is one of the registered redirect
// URIs exactly, byte for byte: no leniency on a trailing slash, a port, the
// case or an added query, so the service never sends anyone elsewhere.
func RedirectAllowed(registered []string, uri string) bool {
	return uri != "" && slices.Contains(registered, uri)
}

// Limits of a connect request's state.
const (
	minStateLen = 8
	maxStateLen = 512
)

// CheckState is nil for a connect request's state: 8 to 512 printable
// ASCII characters without spaces. The developer makes it unguessable and
// checks it when the browser comes back, which is what ties the answer to
// the request; too short a state could be guessed, and the bound keeps the
// redirect's URL small.
func CheckState(state string) error {
	if state == "" {
		return Missing("state")
	}
	if len(state) < minStateLen || len(state) > maxStateLen {
		return Invalid("state", "state must be %d to %d characters.", minStateLen, maxStateLen)
	}
	for i := 0; i < len(state); i++ {
		if state[i] < 0x21 || state[i] > 0x7e {
			return Invalid("state", "state must be printable ASCII without spaces.")
		}
	}
	return nil
}

// CheckConsentAnswer is nil when a consent page's answer may be taken: the
// page (shown for shownApp to shownLandlord) answered for the application
// the form was sent to (app) by the landlord signed in (landlord). Any
// other answer is not found, like a page never shown: nothing is linked,
// and nothing is said of whose page it was.
func CheckConsentAnswer(shownApp, shownLandlord, app, landlord string) error {
	if shownApp != app || shownLandlord != landlord {
		return NotFound("consent", "")
	}
	return nil
}

// ReplaceGrant is the grant a landlord's approval leaves on a link, new or
// relinked: what the landlord approved (the scopes the consent page
// showed), less any the application has stopped requesting since. It
// replaces the old grant whole: nothing of the old grant survives that was
// not approved again, so the grant is never wider than what the landlord
// last saw and approved, and a scope dropped since is not kept for later.
func ReplaceGrant(requested, approved Scopes) Scopes {
	return approved.Intersect(requested)
}

// NewScopes are the scopes an application requests that the landlord's
// current grant lacks: the consent page marks them as new. For a landlord
// not linked yet (a nil grant) every requested scope is new.
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
