package api

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// caller is who a request comes from and what it may do: the key with its
// application and developer, the account it acts on, and the scopes usable
// there (key ∩ application ∩ landlord grant), as rental.Authorize decided.
type caller struct {
	key     *rental.KeyOwner
	account *rental.Account
	scopes  rental.Scopes
	mode    rental.Mode
}

// The header that selects the account for an unbound live key, spelled as
// Go keeps a header's name (http.CanonicalHeaderKey of rental.AccountHeader;
// TestHeaderNames): a name not so spelled is converted, into a new string,
// on every lookup and every Set. The names below are the same for the
// headers a read answers with; the wire's spelling is Go's either way.
const accountHeader = "Service-Account"

// The names of the headers of every answer, as Go spells them.
const (
	modeHeader      = "X-Service-Mode"
	etagHeader      = "Etag"
	limitHeader     = "X-Ratelimit-Limit"
	remainingHeader = "X-Ratelimit-Remaining"
	resetHeader     = "X-Ratelimit-Reset"
)

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
// key is the run's lookup of the key (see store.KeyRun), nil when the
// request carries no key or a malformed one (see keyRef).
func (s *Server) identify(w http.ResponseWriter, r *http.Request, key *store.KeyRun) (*rental.KeyOwner, error) {
	now := s.now()
	var owner *rental.KeyOwner
	var err error = rental.ErrInvalidKey
	if key != nil {
		owner, err = key.Owner(r.Context(), now)
	}
	if rental.IsNotFound(err) {
		err = rental.ErrInvalidKey // unknown: answered as a malformed key is
	}
	if err != nil {
		if e, ok := rental.AsError(err); ok && e == rental.ErrInvalidKey {
			return nil, s.refuseKey(r, now)
		}
		return nil, err
	}
	k := &owner.Key
	if !k.Usable(now) {
		return nil, s.refuseKey(r, now)
	}
	if !key.Kept() && k.UseToNote(now) { // on a kept lookup, serve notes it once confirmed
		s.noteKeyUse(r.Context(), k.ID, now)
	}
	w.Header().Set(modeHeader, string(k.Mode))
	inf := info(r.Context())
	inf.applicationID, inf.mode, inf.keyLast4 = owner.App.ID, string(k.Mode), k.Last4
	return owner, nil
}

// admit runs the rest of the checks on an identified key (see
// rental.KeyOwner.Authorize): its developer and application, the account
// (sandbox for test keys, bound or selected for live keys, an active link),
// the usable scopes and, in live mode, the developer's invoices. The
// account is the one read with the key, or read here when the request
// names another.
func (s *Server) admit(r *http.Request, owner *rental.KeyOwner, appLevel bool) (*caller, error) {
	header := r.Header.Get(accountHeader)
	id, err := owner.Target(header, appLevel)
	if err != nil {
		return nil, err
	}
	acct := owner.Account
	if id != "" && (acct == nil || acct.ID != id) {
		acct, err = s.db.Read().GetAccount(r.Context(), owner.App.ID, id)
		if rental.IsNotFound(err) {
			acct, err = nil, nil // Authorize says what naming an account that is not there gets
		}
		if err != nil {
			return nil, err
		}
	}
	a, err := owner.Authorize(header, appLevel, acct)
	if a.Account != nil {
		info(r.Context()).accountID = a.Account.ID
	}
	if err != nil {
		return nil, err
	}
	return &caller{key: owner, account: a.Account, mode: a.Mode, scopes: a.Scopes}, nil
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
	return rental.RefuseKey(s.limits.failed(r.Context(), s.proxies.ClientIP(r), now))
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

// accountID is the account the request acts on, or "" for an application's
// own resource reached without one.
func (c *caller) accountID() string {
	if c.account == nil {
		return ""
	}
	return c.account.ID
}

// keyRef reads the bearer key and returns its fingerprint and the account
// hint a lookup takes; a missing or malformed key is rental.ErrInvalidKey.
func (s *Server) keyRef(r *http.Request) (fingerprint, hint string, err error) {
	key, err := rental.BearerKey(r.Header.Get("Authorization"))
	if err != nil {
		return "", "", err
	}
	hint = r.Header.Get(accountHeader)
	if !validID(hint) {
		hint = "" // never sent to the database; Target refuses it
	}
	return s.secret.Fingerprint(key), hint, nil
}

// keyInURL reports whether the request's query carries something that
// looks like an API key: a parameter named like one, or any name or value
// holding a key prefix. Such a key must be treated as exposed.
func keyInURL(query url.Values) bool {
	hasKey := func(s string) bool {
		return strings.Contains(s, rental.KeyPrefixTest) || strings.Contains(s, rental.KeyPrefixLive)
	}
	for name, values := range query {
		switch strings.ToLower(name) {
		case "api_key", "apikey", "api-key", "access_token", "key", "secret_key":
			return true
		}
		if hasKey(name) || slices.ContainsFunc(values, hasKey) {
			return true
		}
	}
	return false
}
