package rental

import (
	"slices"
	"testing"
	"time"
)

// A key is read from "Bearer <key>" only, and only in the shape of a key;
// everything else is the one invalid_api_key, before any lookup.
func TestBearerKey(t *testing.T) {
	t.Parallel()
	key := NewAPIKeySecret(ModeTest)
	cases := []struct {
		header string
		want   string
	}{
		{"Bearer " + key, key},
		{"bearer " + key, key},
		{"BEARER   " + key + " ", key},
		{"Bearer " + NewAPIKeySecret(ModeLive)[:20], ""},
		{"Basic " + key, ""},
		{"Bearer", ""},
		{key, ""},
		{"", ""},
		{"Bearer " + key + "x", ""},
		{"Bearer svc_prod_" + key[len(KeyPrefixTest):], ""},
	}
	for _, c := range cases {
		got, err := BearerKey(c.header)
		if got != c.want || (c.want == "") != (err == ErrInvalidKey) {
			t.Errorf("BearerKey(%q) = %q, %v", c.header, got, err)
		}
	}
}

// An invalid key is 401, or 429 with the wait once its address is over its
// failed attempts.
func TestRefuseKey(t *testing.T) {
	t.Parallel()
	if err := RefuseKey(0, false); err != ErrInvalidKey {
		t.Errorf("under the limit: %v", err)
	}
	e, ok := AsError(RefuseKey(17, true))
	if !ok || e.Code != "too_many_failed_attempts" || e.Kind != KindRateLimited || e.RetryAfter != 17 {
		t.Errorf("over the limit: %+v", e)
	}
}

// authorizeSetup is a developer with one application: its sandbox, a live
// landlord linked to it, one whose link has ended, and another
// application's account.
type authorizeSetup struct {
	sandbox, linked, ended, foreign *Account
	appScopes                       Scopes
}

func newAuthorizeSetup() authorizeSetup {
	return authorizeSetup{
		sandbox:   &Account{ID: "acct_sandbox", ApplicationID: "app_1", Sandbox: true, Granted: slices.Clone(AllScopes)},
		linked:    &Account{ID: "acct_linked", ApplicationID: "app_1", Granted: Scopes{ScopePropertiesRead, ScopeBillsRead}},
		ended:     &Account{ID: "acct_ended", ApplicationID: "app_1", Granted: Scopes{ScopeBillsRead}, Revoked: true},
		foreign:   &Account{ID: "acct_foreign", ApplicationID: "app_2", Granted: slices.Clone(AllScopes)},
		appScopes: Scopes{ScopePropertiesRead, ScopeBillsRead, ScopeWebhooksManage},
	}
}

// owner is a key of the setup's application: mode, bound account, and the
// state of its developer and application.
func (s authorizeSetup) owner(mode Mode, bound string, suspended, disabled, overdue bool) *KeyOwner {
	return &KeyOwner{
		Key:       APIKey{ID: "key_1", ApplicationID: "app_1", Mode: mode, AccountID: bound, Scopes: Scopes{ScopePropertiesRead, ScopeBillsRead, ScopeWebhooksManage, ScopeRoomsRead}},
		App:       Application{ID: "app_1", Scopes: s.appScopes, SandboxAccountID: s.sandbox.ID, Disabled: disabled},
		Developer: Developer{ID: "dev_1", Suspended: suspended, InvoiceOverdue: overdue},
	}
}

// Every refusal of the Authentication section in its order, which account
// a request acts on, and the scopes it may use there.
func TestAuthorize(t *testing.T) {
	t.Parallel()
	s := newAuthorizeSetup()
	live := func(bound string) *KeyOwner { return s.owner(ModeLive, bound, false, false, false) }
	test := s.owner(ModeTest, "", false, false, false)
	granted := Scopes{ScopePropertiesRead, ScopeBillsRead}                     // key ∩ app ∩ the linked landlord's grant
	appOwn := Scopes{ScopePropertiesRead, ScopeBillsRead, ScopeWebhooksManage} // key ∩ app
	cases := []struct {
		name     string
		owner    *KeyOwner
		header   string
		appLevel bool
		acct     *Account // as the caller loaded the target
		target   string   // Target's answer when it has no refusal
		code     string
		account  *Account
		scopes   Scopes
	}{
		// The developer and the application come first, whatever else.
		{name: "suspended developer", owner: s.owner(ModeTest, "", true, true, true), acct: s.sandbox, code: "developer_suspended"},
		{name: "disabled application", owner: s.owner(ModeLive, "", false, true, true), header: "acct_linked", acct: s.linked, code: "application_disabled"},
		{name: "disabled application, own resource", owner: s.owner(ModeLive, "", false, true, false), appLevel: true, code: "application_disabled"},

		// A test key reaches its sandbox only.
		{name: "test key", owner: test, acct: s.sandbox, target: "acct_sandbox", account: s.sandbox, scopes: appOwn},
		{name: "test key naming its sandbox", owner: test, header: "acct_sandbox", acct: s.sandbox, target: "acct_sandbox", account: s.sandbox, scopes: appOwn},
		{name: "test key naming a live account", owner: test, header: "acct_linked", acct: s.linked, code: "account_mismatch"},
		{name: "test key on a live account as loaded", owner: test, acct: &Account{ID: "acct_sandbox", ApplicationID: "app_1"}, target: "acct_sandbox", code: "account_not_connected"},
		{name: "test key, sandbox missing", owner: test, target: "acct_sandbox", code: "account_not_connected"},
		{name: "test key, own resource", owner: test, appLevel: true, acct: s.sandbox, target: "acct_sandbox", account: s.sandbox, scopes: appOwn},
		{name: "test key, overdue invoice", owner: s.owner(ModeTest, "", false, false, true), acct: s.sandbox, target: "acct_sandbox", account: s.sandbox, scopes: appOwn},

		// A bound live key reaches its account only.
		{name: "bound live key", owner: live("acct_linked"), acct: s.linked, target: "acct_linked", account: s.linked, scopes: granted},
		{name: "bound live key naming its account", owner: live("acct_linked"), header: "acct_linked", acct: s.linked, target: "acct_linked", account: s.linked, scopes: granted},
		{name: "bound live key naming another", owner: live("acct_linked"), header: "acct_other", acct: s.linked, code: "account_mismatch"},
		{name: "bound live key, link ended", owner: live("acct_ended"), acct: s.ended, target: "acct_ended", code: "account_access_revoked"},

		// An unbound live key names its account.
		{name: "unbound live key without the header", owner: live(""), code: "account_required"},
		{name: "unbound live key", owner: live(""), header: "acct_linked", acct: s.linked, target: "acct_linked", account: s.linked, scopes: granted},
		{name: "unbound live key naming nothing there", owner: live(""), header: "acct_nothing", target: "acct_nothing", code: "account_not_connected"},
		{name: "unbound live key naming a malformed ID", owner: live(""), header: "acct_NOT-AN-ID", code: "account_not_connected"},
		{name: "unbound live key naming the sandbox", owner: live(""), header: "acct_sandbox", acct: s.sandbox, target: "acct_sandbox", code: "account_not_connected"},
		{name: "unbound live key naming another application's account", owner: live(""), header: "acct_foreign", acct: s.foreign, target: "acct_foreign", code: "account_not_connected"},
		{name: "unbound live key, loaded account not the one named", owner: live(""), header: "acct_other", acct: s.linked, target: "acct_other", code: "account_not_connected"},
		{name: "unbound live key naming an ended link", owner: live(""), header: "acct_ended", acct: s.ended, target: "acct_ended", code: "account_access_revoked"},

		// The application's own resources need no account.
		{name: "own resource without the header", owner: live(""), appLevel: true, scopes: appOwn},
		{name: "own resource naming an account", owner: live(""), header: "acct_linked", appLevel: true, acct: s.linked, target: "acct_linked", account: s.linked, scopes: appOwn},
		{name: "own resource, bound key", owner: live("acct_linked"), appLevel: true, acct: s.linked, target: "acct_linked", account: s.linked, scopes: appOwn},
		{name: "own resource naming an ended link", owner: live(""), header: "acct_ended", appLevel: true, acct: s.ended, target: "acct_ended", code: "account_access_revoked"},

		// An overdue invoice stops live requests, last.
		{name: "live, overdue invoice", owner: s.owner(ModeLive, "", false, false, true), header: "acct_linked", acct: s.linked, target: "acct_linked", code: "payment_required", account: s.linked, scopes: granted},
		{name: "live own resource, overdue invoice", owner: s.owner(ModeLive, "", false, false, true), appLevel: true, code: "payment_required", scopes: appOwn},
		{name: "live, overdue invoice, link ended", owner: s.owner(ModeLive, "", false, false, true), header: "acct_ended", acct: s.ended, target: "acct_ended", code: "account_access_revoked"},
	}
	for _, c := range cases {
		target, terr := c.owner.Target(c.header, c.appLevel)
		a, err := c.owner.Authorize(c.header, c.appLevel, c.acct)
		if code(err) != c.code {
			t.Errorf("%s: %v, want %q", c.name, err, c.code)
			continue
		}
		// Target refuses exactly what Authorize refuses before the account.
		if terr != nil && code(terr) != c.code || terr == nil && target != c.target {
			t.Errorf("%s: Target %q, %v; want %q", c.name, target, terr, c.target)
		}
		if a.Account != c.account || !slices.Equal(a.Scopes, c.scopes) || (c.scopes != nil && a.Mode != c.owner.Key.Mode) {
			t.Errorf("%s: access %+v, want account %v scopes %v", c.name, a, c.account, c.scopes)
		}
	}
}

// The refusals carry the kinds the API maps to 402 and 403, and name the
// header where it is the remedy.
func TestAuthorizeErrors(t *testing.T) {
	t.Parallel()
	s := newAuthorizeSetup()
	_, err := s.owner(ModeLive, "", false, false, true).Authorize("acct_linked", false, s.linked)
	if e, _ := AsError(err); e == nil || e.Kind != KindPaymentRequired {
		t.Errorf("overdue: %v", err)
	}
	_, err = s.owner(ModeLive, "", false, false, false).Authorize("", false, nil)
	if e, _ := AsError(err); e == nil || e.Kind != KindForbidden || e.Message != "This live key is not bound to an account: send the SERVICE-Account header." {
		t.Errorf("account required: %v", err)
	}
}

// A request counts when it reached an account and was answered 2xx or 4xx
// other than 401 and 429.
func TestBillable(t *testing.T) {
	t.Parallel()
	acct := &Account{ID: "acct_1"}
	for status, want := range map[int]bool{200: true, 201: true, 202: true, 204: true, 400: true, 402: true, 403: true, 404: true,
		409: true, 413: true, 304: false, 401: false, 429: false, 500: false, 503: false, 100: false} {
		if got := Billable(acct, status); got != want {
			t.Errorf("Billable(%d) = %v", status, got)
		}
	}
	if Billable(nil, 200) {
		t.Error("a request that reached no account counts")
	}
}

// keys' usability, the rule identify and the kept lookups share: revoked
// or expired (from the instant of expiry) is unusable.
func TestKeyUsable(t *testing.T) {
	t.Parallel()
	at := func(d time.Duration) *Time { return &Time{Time: now.Add(d)} }
	cases := []struct {
		key  APIKey
		want bool
	}{
		{APIKey{}, true},
		{APIKey{ExpiresAt: at(time.Millisecond)}, true},
		{APIKey{ExpiresAt: at(0)}, false},
		{APIKey{ExpiresAt: at(-time.Hour)}, false},
		{APIKey{RevokedAt: at(-time.Hour)}, false},
		{APIKey{RevokedAt: at(time.Hour), ExpiresAt: at(time.Hour)}, false},
	}
	for i, c := range cases {
		if got := c.key.Usable(now); got != c.want {
			t.Errorf("case %d: Usable = %v", i, got)
		}
	}
}

// A request needing a scope its access lacks is 403 insufficient_scope
// naming the scope; one needing none always passes.
func TestScopesRequire(t *testing.T) {
	t.Parallel()
	usable := Scopes{ScopeBillsRead, ScopeRoomsRead}
	for _, c := range []struct {
		scopes Scopes
		need   Scope
		ok     bool
	}{
		{usable, ScopeBillsRead, true},
		{usable, "", true},
		{Scopes{}, "", true},
		{usable, ScopeBillsWrite, false},
		{Scopes{}, ScopePropertiesRead, false},
	} {
		err := c.scopes.Require(c.need)
		e, _ := AsError(err)
		if (err == nil) != c.ok || (!c.ok && (e.Code != "insufficient_scope" || e.Kind != KindForbidden || e.Scope != string(c.need))) {
			t.Errorf("%v needing %q: %v", c.scopes, c.need, err)
		}
	}
}
