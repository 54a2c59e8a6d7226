package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// caller is who a request comes from and what it may do: the key with its
// application and developer, the account it acts on, and the scopes usable
// there (key ∩ application ∩ landlord grant).
type caller struct {
	key     *store.KeyOwner
	account *rental.Account
	scopes  rental.Scopes
	mode    rental.Mode
}

// The header that selects the account for an unbound live key.
const accountHeader = "SERVICE-Account"

var errInvalidKey = rental.Errorf(rental.KindUnauthenticated, "invalid_api_key",
	"The API key is missing, malformed, unknown, expired or revoked. Send it as 'Authorization: Bearer <key>'.")

// The checks of the Authentication section run in their order in two
// steps: identify (the key) and then, once the request has counted against
// its developer's per-second limit, admit (the developer and application,
// the account, the scopes). So every request with a valid key counts and
// carries the X-RateLimit headers, a refusal at account selection too.

// identify finds the request's key and refuses an invalid one. Failed keys
// count against the client's address, and only they are refused once it
// has sent too many (see refuseKey): a valid key from the same address is
// served. It sets X-SERVICE-Mode as soon as the key is known.
//
// kept is the key's kept lookup to run on (see store.KeyCheck), or nil to
// look the key up.
func (s *Server) identify(w http.ResponseWriter, r *http.Request, kept *store.KeyOwner) (*store.KeyOwner, error) {
	now := s.now()
	owner, err := kept, error(nil)
	if owner == nil {
		owner, err = s.lookupKey(r, now)
	}
	if err != nil {
		if e, ok := rental.AsError(err); ok && e == errInvalidKey {
			return nil, s.refuseKey(r, now)
		}
		return nil, err
	}
	k := &owner.Key
	if k.RevokedAt != nil || (k.ExpiresAt != nil && !now.Before(k.ExpiresAt.Time)) {
		return nil, s.refuseKey(r, now)
	}
	if kept == nil && k.UseToNote(now) { // on a kept lookup, serve notes it once confirmed
		s.noteKeyUse(r.Context(), k.ID, now)
	}
	w.Header().Set("X-SERVICE-Mode", string(k.Mode))
	inf := info(r.Context())
	inf.applicationID, inf.mode = owner.App.ID, string(k.Mode)
	return owner, nil
}

// admit runs the rest of the checks on an identified key: its developer and
// application, the account (sandbox for test keys, bound or selected for
// live keys, an active link), then computes the usable scopes.
//
// For the application's own resources (appLevel), an unbound live key
// without the header acts on no account, and the scopes are the key's and
// the application's: a landlord grants nothing there.
func (s *Server) admit(r *http.Request, owner *store.KeyOwner, appLevel bool) (*caller, error) {
	k := &owner.Key
	switch {
	case owner.Developer.Suspended:
		return nil, rental.Errorf(rental.KindForbidden, "developer_suspended", "The developer account is suspended; all its keys are refused.")
	case owner.App.Disabled:
		return nil, rental.Errorf(rental.KindForbidden, "application_disabled", "The application is disabled; all its keys are refused.")
	}
	header := r.Header.Get(accountHeader)
	if appLevel && k.Mode == rental.ModeLive && k.AccountID == "" && header == "" {
		return s.checkLive(&caller{key: owner, mode: k.Mode, scopes: k.Scopes.Intersect(owner.App.Scopes)})
	}
	acctID, err := selectAccount(owner, header)
	if err != nil {
		return nil, err
	}
	if !validID(acctID) {
		return nil, rental.Errorf(rental.KindForbidden, "account_not_connected", "The account named in %s is not connected to this application.", accountHeader)
	}
	acct := owner.Account // read with the key when the request names it, or the key implies it
	if acct == nil || acct.ID != acctID {
		acct, err = s.db.Read().GetAccount(r.Context(), owner.App.ID, acctID)
	}
	if rental.IsNotFound(err) || (err == nil && acct.Sandbox != (k.Mode == rental.ModeTest)) {
		return nil, rental.Errorf(rental.KindForbidden, "account_not_connected", "The account %s is not connected to this application.", acctID)
	}
	if err != nil {
		return nil, err
	}
	if acct.Revoked {
		return nil, rental.Errorf(rental.KindForbidden, "account_access_revoked", "The link between this application and account %s has ended.", acctID)
	}
	info(r.Context()).accountID = acct.ID
	cl := &caller{key: owner, account: acct, mode: k.Mode, scopes: k.Scopes.Intersect(owner.App.Scopes, acct.Granted)}
	if appLevel {
		cl.scopes = k.Scopes.Intersect(owner.App.Scopes)
	}
	return s.checkLive(cl)
}

// refuseKey answers a request whose key is invalid (missing, malformed,
// unknown, revoked, expired) and counts it against the client's address:
// 401 invalid_api_key, or 429 too_many_failed_attempts once the address
// has sent too many. Only invalid keys are refused so: many clients share
// one address (tenants behind a Thai carrier's NAT), and one of them trying
// keys must not lock the others out. The key is looked up first, even from
// an address over the limit; a key cannot be guessed anyway (40 random
// characters), and the limit only slows down a client stuck in a loop.
func (s *Server) refuseKey(r *http.Request, now time.Time) error {
	wait, over := s.limits.failed(r.Context(), s.proxies.ClientIP(r), now)
	if !over {
		return errInvalidKey
	}
	e := rental.Errorf(rental.KindRateLimited, "too_many_failed_attempts", "Too many requests with invalid API keys from this address.")
	e.RetryAfter = wait
	return e
}

// keyUseWait bounds how long writing down a key's use may wait for the
// database.
const keyUseWait = 5 * time.Second

// noteKeyUse writes down the key's use for the portal's "last used", at
// most once a minute per key, beside the request rather than in its way:
// the write runs on its own (a few at a time; when that many are under way,
// this one is left for the next request a minute on), a failure is only
// logged, and a client that hangs up does not cut it short.
func (s *Server) noteKeyUse(ctx context.Context, keyID string, now time.Time) {
	select {
	case s.noting <- struct{}{}:
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), keyUseWait)
	go func() {
		defer func() { <-s.noting }()
		defer cancel()
		if err := s.db.NoteKeyUse(ctx, keyID, now); err != nil {
			s.log.WarnContext(ctx, "key last use not written", "request_id", requestID(ctx), "key_id", keyID, "error", err.Error())
		}
	}()
}

// checkLive refuses live requests while an invoice of the developer is
// overdue (open past its due time, as the key lookup saw it); test mode is
// never refused for it.
func (s *Server) checkLive(c *caller) (*caller, error) {
	if c.mode == rental.ModeLive && c.key.Developer.InvoiceOverdue {
		return nil, rental.Errorf(rental.KindPaymentRequired, "payment_required", "An invoice of the developer account is overdue; live requests resume once it is paid.")
	}
	return c, nil
}

// accountID is the account the request acts on, or "" for an application's
// own resource reached without one.
func (c *caller) accountID() string {
	if c.account == nil {
		return ""
	}
	return c.account.ID
}

// keyRef reads the bearer key and returns its fingerprint and the account
// hint a lookup takes; a missing or malformed key is errInvalidKey.
func (s *Server) keyRef(r *http.Request) (fingerprint, hint string, err error) {
	scheme, key, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !rental.LooksLikeAPIKey(strings.TrimSpace(key)) {
		return "", "", errInvalidKey
	}
	hint = r.Header.Get(accountHeader)
	if !validID(hint) {
		hint = "" // never sent to the database; authenticate refuses it
	}
	return s.secret.Fingerprint(strings.TrimSpace(key)), hint, nil
}

// lookupKey finds the request's key by fingerprint, with its developer's
// plan and overdue invoices as they stand at now.
func (s *Server) lookupKey(r *http.Request, now time.Time) (*store.KeyOwner, error) {
	fingerprint, hint, err := s.keyRef(r)
	if err != nil {
		return nil, err
	}
	owner, err := s.db.LookupKey(r.Context(), fingerprint, hint, now)
	if rental.IsNotFound(err) {
		return nil, errInvalidKey
	}
	return owner, err
}

// keptKey returns the key's kept lookup to run on and the check that must
// confirm it before anything is answered (see store.KeyCheck): a read's
// first statement carries it, a write's transaction its first round trip;
// nil, nil when there is none.
func (s *Server) keptKey(r *http.Request) (*store.KeyOwner, *store.KeyCheck) {
	fingerprint, hint, err := s.keyRef(r)
	if err != nil {
		return nil, nil
	}
	now := s.now()
	kept, kc := s.db.KeptKey(fingerprint, hint, now)
	if kept != nil && (kept.Key.RevokedAt != nil || kept.Key.ExpiresAt != nil && !now.Before(kept.Key.ExpiresAt.Time)) {
		// A refused key takes the usual way, where its failure is counted once.
		return nil, nil
	}
	return kept, kc
}

// selectAccount decides which account the request acts on from the key and
// the SERVICE-Account header.
func selectAccount(o *store.KeyOwner, header string) (string, error) {
	mismatch := func(bound string) error {
		return rental.Errorf(rental.KindForbidden, "account_mismatch", "This key acts only on account %s; the %s header names another.", bound, accountHeader)
	}
	switch {
	case o.Key.Mode == rental.ModeTest:
		if header != "" && header != o.App.SandboxAccountID {
			return "", mismatch(o.App.SandboxAccountID)
		}
		return o.App.SandboxAccountID, nil
	case o.Key.AccountID != "":
		if header != "" && header != o.Key.AccountID {
			return "", mismatch(o.Key.AccountID)
		}
		return o.Key.AccountID, nil
	case header == "":
		return "", rental.Errorf(rental.KindForbidden, "account_required", "This live key is not bound to an account: send the %s header.", accountHeader)
	default:
		return header, nil
	}
}

// keyInURL reports whether the URL carries something that looks like an API
// key: a parameter named like one, or any name or value holding a key
// prefix. Such a key must be treated as exposed.
func keyInURL(u *url.URL) bool {
	for name, values := range u.Query() {
		switch strings.ToLower(name) {
		case "api_key", "apikey", "api-key", "access_token", "key", "secret_key":
			return true
		}
		for _, v := range append(values, name) {
			if strings.Contains(v, rental.KeyPrefixTest) || strings.Contains(v, rental.KeyPrefixLive) {
				return true
			}
		}
	}
	return false
}
