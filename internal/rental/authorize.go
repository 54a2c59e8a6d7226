package rental

import "strings"

// The rules of the Authentication section: which key is valid, which
// account a request acts on and what it may do there. They read only what
// one lookup of the key brings back (KeyOwner), so every request is decided
// the same way whichever process serves it, and the rules are tested
// without a database.

// AccountHeader is the request header naming the account a request acts
// on: an unbound live key must send it, the other keys may (when it names
// their own account). The access rules' messages name it.
const AccountHeader = "SERVICE-Account"

// ErrInvalidKey refuses a key that is missing, malformed, unknown, expired
// or revoked: one answer for all five, so that a refusal tells nothing of
// which keys exist.
var ErrInvalidKey = Errorf(KindUnauthenticated, "invalid_api_key",
	"The API key is missing, malformed, unknown, expired or revoked. Send it as 'Authorization: Bearer <key>'.")

// BearerKey reads the key of an Authorization header's value ("Bearer
// <key>", the scheme in any case). Anything else, or a key of the wrong
// shape, is ErrInvalidKey: refused before the database is asked.
func BearerKey(authorization string) (string, error) {
	scheme, key, ok := strings.Cut(authorization, " ")
	key = strings.TrimSpace(key)
	if !ok || !strings.EqualFold(scheme, "Bearer") || !LooksLikeAPIKey(key) {
		return "", ErrInvalidKey
	}
	return key, nil
}

// RefuseKey is the answer to an invalid key: ErrInvalidKey, or once the
// client's address is over its failed attempts (over), 429
// too_many_failed_attempts to retry after wait seconds. Only invalid keys are refused so:
// many clients share one address (tenants behind a Thai carrier's NAT), and
// one of them trying keys must not lock out the others' valid keys.
func RefuseKey(wait int, over bool) error {
	if !over {
		return ErrInvalidKey
	}
	e := Errorf(KindRateLimited, "too_many_failed_attempts", "Too many requests with invalid API keys from this address.")
	e.RetryAfter = wait
	return e
}

// KeyOwner is an API key with the application and developer it belongs
// to, as one lookup reads them for every request: all the access rules
// look at.
type KeyOwner struct {
	Key       APIKey
	App       Application
	Developer Developer
	// Account is the account read with the key, the one the request most
	// likely acts on; nil when none exists. Which account the request may
	// act on is Target's to say.
	Account *Account
}

// Access is what one request may do: the account it acts on (nil for an
// application's own resource reached without one), its mode, and the
// scopes usable there (key ∩ application ∩ the landlord's grant).
type Access struct {
	Account *Account
	Mode    Mode
	Scopes  Scopes
}

// Target is the ID of the account a request with the key acts on, given
// the AccountHeader it sent ("" for none): a test key's sandbox, a bound
// live key's account, the one an unbound live key names. For an
// application's own resource (appLevel) an unbound live key may send no
// header and acts on no account (""). Target refuses, in Authorize's
// order, all that Authorize refuses before it looks at the account, so a
// caller loads an account only for a request that may act on it.
func (o *KeyOwner) Target(header string, appLevel bool) (string, error) {
	switch {
	case o.Developer.Suspended:
		return "", Errorf(KindForbidden, "developer_suspended", "The developer account is suspended; all its keys are refused.")
	case o.App.Disabled:
		return "", Errorf(KindForbidden, "application_disabled", "The application is disabled; all its keys are refused.")
	}
	k := &o.Key
	if appLevel && k.Mode == ModeLive && k.AccountID == "" && header == "" {
		return "", nil
	}
	mismatch := func(bound string) error {
		return Errorf(KindForbidden, "account_mismatch", "This key acts only on account %s; the %s header names another.", bound, AccountHeader)
	}
	id := header
	switch {
	case k.Mode == ModeTest:
		if header != "" && header != o.App.SandboxAccountID {
			return "", mismatch(o.App.SandboxAccountID)
		}
		id = o.App.SandboxAccountID
	case k.AccountID != "":
		if header != "" && header != k.AccountID {
			return "", mismatch(k.AccountID)
		}
		id = k.AccountID
	case header == "":
		return "", Errorf(KindForbidden, "account_required", "This live key is not bound to an account: send the %s header.", AccountHeader)
	}
	if !WellFormedID(id) {
		return "", Errorf(KindForbidden, "account_not_connected", "The account named in %s is not connected to this application.", AccountHeader)
	}
	return id, nil
}

// Authorize decides what a request with the key may do, in the order of
// the Authentication section: the developer not suspended, the application
// not disabled, the account (Target's) connected to the application in the
// key's mode (a test key reaches only the sandbox, a live key only real
// landlords) with its link not ended, and in live mode no invoice of the
// developer overdue (402; test mode is never refused for it). acct is the
// account Target names as loaded, nil when there is none. For an
// application's own resource (appLevel) the scopes are the key's and the
// application's: a landlord grants nothing there.
//
// The refusal for an overdue invoice, the last check, comes with the
// Access all the others allowed, so that what was refused can be told
// (the request log names the account). The key itself is the caller's to
// have checked (found, APIKey.Usable): a key that is not is refused as
// invalid before its owner counts for anything.
func (o *KeyOwner) Authorize(header string, appLevel bool, acct *Account) (Access, error) {
	id, err := o.Target(header, appLevel)
	if err != nil {
		return Access{}, err
	}
	k := &o.Key
	a := Access{Mode: k.Mode, Scopes: k.Scopes.Intersect(o.App.Scopes)}
	if id != "" {
		switch {
		case acct == nil || acct.ID != id || acct.ApplicationID != o.App.ID || acct.Mode() != k.Mode:
			return Access{}, Errorf(KindForbidden, "account_not_connected", "The account %s is not connected to this application.", id)
		case acct.Revoked:
			return Access{}, Errorf(KindForbidden, "account_access_revoked", "The link between this application and account %s has ended.", id)
		}
		a.Account = acct
		if !appLevel {
			a.Scopes = k.Scopes.Intersect(o.App.Scopes, acct.Granted)
		}
	}
	if a.Mode == ModeLive && o.Developer.InvoiceOverdue {
		return a, Errorf(KindPaymentRequired, "payment_required", "An invoice of the developer account is overdue; live requests resume once it is paid.")
	}
	return a, nil
}

// Require is nil when a request's usable scopes (Access.Scopes) allow what
// needs scope ("" for what needs none), else 403 insufficient_scope naming
// it.
func (s Scopes) Require(scope Scope) error {
	if scope == "" || s.Has(scope) {
		return nil
	}
	return &Error{Kind: KindForbidden, Code: "insufficient_scope", Scope: string(scope),
		Message: "This request needs the scope '" + string(scope) + "', which the key, the application or the landlord's grant does not include."}
}

// Billable reports whether a request counts: towards the monthly quota and
// the invoice in live mode, towards the sandbox's daily limit in test mode.
// It does when it reached an account (acct) and was answered with status,
// an HTTP status, 2xx, or 4xx other than 401 and 429: a refused key or a
// rate refusal is not the developer's use, and a 5xx is the service's
// fault. A 304 (a conditional GET whose answer had not changed) is not
// counted either: it is the saving conditional requests offer.
func Billable(acct *Account, status int) bool {
	return acct != nil && status >= 200 && status < 500 && status != 304 && status != 401 && status != 429
}
