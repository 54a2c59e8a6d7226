package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Two keys of two applications: each sees only its own sandbox and cannot
// name the other's. (The other's IDs on every route:
// TestForeignIDsOnEveryRoute.)
func TestSandboxIsolation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		fa, fb := h.fixture(rental.PlanDeveloper), h.fixture(rental.PlanDeveloper)
		ka, kb := h.testKey(fa), h.testKey(fb)
		pa := h.do(req{key: ka, method: "POST", path: "/v1/properties", body: property("A")}).data()["id"].(string)
		pb := h.do(req{key: kb, method: "POST", path: "/v1/properties", body: property("B")}).data()["id"].(string)

		for key, acct := range map[string]string{ka: fa.App.SandboxAccountID, kb: fb.App.SandboxAccountID} {
			if got := h.do(req{key: key, method: "GET", path: "/v1/account"}).data()["id"]; got != acct {
				t.Fatalf("account %v, want %s", got, acct)
			}
		}
		for key, own := range map[string]string{ka: pa, kb: pb} {
			list := h.do(req{key: key, method: "GET", path: "/v1/properties"}).json()["data"].([]any)
			if len(list) != 3 { // its own and the two sample properties
				t.Fatalf("list shows %d properties, want 3", len(list))
			}
			for _, it := range list {
				if id := it.(map[string]any)["id"]; id == pa && own != pa || id == pb && own != pb {
					t.Fatalf("the other application's property %s is listed", id)
				}
			}
		}
		// The other application's sandbox named in the header is refused.
		want(t, h.do(req{key: ka, method: "GET", path: "/v1/account", headers: []string{"SERVICE-Account: " + fb.App.SandboxAccountID}}),
			http.StatusForbidden, "account_mismatch")
	})
}

// Each endpoint is refused with insufficient_scope without its scope and
// allowed with it.
func TestScopeMatrix(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		all := h.testKey(f)
		id := func() string {
			return h.do(req{key: all, method: "POST", path: "/v1/properties", body: property("x")}).data()["id"].(string)
		}
		cases := []struct {
			scope rental.Scope
			req   func() req
			ok    int
		}{
			{rental.ScopePropertiesRead, func() req { return req{method: "GET", path: "/v1/properties"} }, 200},
			{rental.ScopePropertiesRead, func() req { return req{method: "GET", path: "/v1/properties/" + id()} }, 200},
			{rental.ScopePropertiesWrite, func() req { return req{method: "POST", path: "/v1/properties", body: property("y")} }, 201},
			{rental.ScopePropertiesWrite, func() req {
				return req{method: "PATCH", path: "/v1/properties/" + id(), body: map[string]any{"due_day": 1}}
			}, 200},
			{rental.ScopePropertiesWrite, func() req { return req{method: "DELETE", path: "/v1/properties/" + id()} }, 204},
		}
		for _, c := range cases {
			others := rental.Scopes{}
			for _, s := range rental.AllScopes {
				if s != c.scope {
					others = append(others, s)
				}
			}
			without, with := h.testKey(f, others...), h.testKey(f, c.scope)
			r := c.req()
			r.key = without
			res := h.do(r)
			want(t, res, http.StatusForbidden, "insufficient_scope")
			if res.errField("scope") != string(c.scope) {
				t.Fatalf("%s %s: error.scope %q, want %s", r.method, r.path, res.errField("scope"), c.scope)
			}
			r = c.req()
			r.key = with
			want(t, h.do(r), c.ok)
		}
		// GET /v1/account needs no particular scope and lists what the key can use.
		only := h.testKey(f, rental.ScopeBillsRead)
		acc := h.do(req{key: only, method: "GET", path: "/v1/account"})
		want(t, acc, http.StatusOK)
		if s := acc.data()["scopes"].([]any); len(s) != 1 || s[0] != "bills:read" {
			t.Fatalf("scopes %v", s)
		}
	})
}

// Scopes are key ∩ application ∩ the landlord's grant.
func TestScopesIntersectGrant(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.Scopes{rental.ScopePropertiesRead})
		key := h.liveKey(f, acct.ID)
		want(t, h.do(req{key: key, method: "GET", path: "/v1/properties"}), http.StatusOK)
		res := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("x")})
		want(t, res, http.StatusForbidden, "insufficient_scope")
		if s := h.do(req{key: key, method: "GET", path: "/v1/account"}).data()["scopes"].([]any); len(s) != 1 {
			t.Fatalf("scopes %v", s)
		}
	})
}

func TestLiveAccountSelection(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		a1 := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		a2 := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		unbound, bound := h.liveKey(f, ""), h.liveKey(f, a1.ID)
		hdr := func(id string) []string { return []string{"SERVICE-Account: " + id} }

		want(t, h.do(req{key: unbound, method: "GET", path: "/v1/account"}), http.StatusForbidden, "account_required")
		res := h.do(req{key: unbound, method: "GET", path: "/v1/account", headers: hdr(a2.ID)})
		want(t, res, http.StatusOK)
		if res.data()["id"] != a2.ID || res.data()["livemode"] != true || res.header.Get("X-SERVICE-Mode") != "live" {
			t.Fatalf("unbound live key: %s", res.body)
		}
		want(t, h.do(req{key: bound, method: "GET", path: "/v1/account"}), http.StatusOK)
		want(t, h.do(req{key: bound, method: "GET", path: "/v1/account", headers: hdr(a1.ID)}), http.StatusOK)
		want(t, h.do(req{key: bound, method: "GET", path: "/v1/account", headers: hdr(a2.ID)}), http.StatusForbidden, "account_mismatch")

		// Not linked, nonexistent, another application's, or the sandbox: the same answer.
		other := storetest.NewFixture(t, e.DB, rental.PlanPro).LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		for _, id := range []string{"acct_doesnotexist0000000000", other.ID, f.App.SandboxAccountID} {
			want(t, h.do(req{key: unbound, method: "GET", path: "/v1/account", headers: hdr(id)}), http.StatusForbidden, "account_not_connected")
		}
		// Disconnecting is effective on the next request; other links are unaffected.
		if err := e.DB.InTx(t.Context(), func(tx *store.Tx) error { return tx.RevokeAccount(t.Context(), f.App.ID, a2.ID) }); err != nil {
			t.Fatal(err)
		}
		want(t, h.do(req{key: unbound, method: "GET", path: "/v1/account", headers: hdr(a2.ID)}), http.StatusForbidden, "account_access_revoked")
		want(t, h.do(req{key: unbound, method: "GET", path: "/v1/account", headers: hdr(a1.ID)}), http.StatusOK)
	})
}

func TestKeyLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		owner, err := e.DB.Read().KeyByFingerprint(t.Context(), h.sec.Fingerprint(key), e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		newKey := rental.NewAPIKeySecret(rental.ModeTest)
		err = e.DB.InTx(t.Context(), func(tx *store.Tx) error {
			_, err := tx.RotateAPIKey(t.Context(), owner.Key.ID, h.sec.Fingerprint(newKey), rental.KeyVisiblePrefix(newKey), rental.KeyLast4(newKey))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// Both work for 24 hours; then only the new one.
		e.Clock.Advance(23 * time.Hour)
		want(t, h.do(req{key: key, method: "GET", path: "/v1/account"}), http.StatusOK)
		want(t, h.do(req{key: newKey, method: "GET", path: "/v1/account"}), http.StatusOK)
		e.Clock.Advance(2 * time.Hour)
		want(t, h.do(req{key: key, method: "GET", path: "/v1/account"}), http.StatusUnauthorized, "invalid_api_key")
		want(t, h.do(req{key: newKey, method: "GET", path: "/v1/account"}), http.StatusOK)

		// Revoking stops a key at once.
		n, _ := e.DB.Read().KeyByFingerprint(t.Context(), h.sec.Fingerprint(newKey), e.Clock.Now())
		if err := e.DB.InTx(t.Context(), func(tx *store.Tx) error { return tx.RevokeAPIKey(t.Context(), n.Key.ID) }); err != nil {
			t.Fatal(err)
		}
		want(t, h.do(req{key: newKey, method: "GET", path: "/v1/account"}), http.StatusUnauthorized, "invalid_api_key")

		// A key with its own expiry.
		exp := e.Clock.Now().Add(time.Hour)
		short := f.Key(t, e.DB, h.sec, store.NewKey{Mode: rental.ModeTest, ExpiresAt: &exp})
		want(t, h.do(req{key: short, method: "GET", path: "/v1/account"}), http.StatusOK)
		e.Clock.Advance(time.Hour)
		want(t, h.do(req{key: short, method: "GET", path: "/v1/account"}), http.StatusUnauthorized, "invalid_api_key")
	})
}

func TestDeveloperAndApplicationStatus(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		test, live := h.testKey(f), h.liveKey(f, acct.ID)
		set := func(fn func(tx *store.Tx) error) {
			if err := e.DB.InTx(t.Context(), fn); err != nil {
				t.Fatal(err)
			}
		}
		ctx := t.Context()
		set(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, false, true) })
		want(t, h.do(req{key: live, method: "GET", path: "/v1/account"}), http.StatusPaymentRequired, "payment_required")
		want(t, h.do(req{key: test, method: "GET", path: "/v1/account"}), http.StatusOK) // test mode is never billed
		set(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, true, false) })
		for _, k := range []string{test, live} {
			want(t, h.do(req{key: k, method: "GET", path: "/v1/account"}), http.StatusForbidden, "developer_suspended")
		}
		set(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, false, false) })
		set(func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, f.App.ID, true) })
		for _, k := range []string{test, live} {
			want(t, h.do(req{key: k, method: "GET", path: "/v1/account"}), http.StatusForbidden, "application_disabled")
		}
	})
}

// A key anywhere in the URL is refused before anything else, on any path,
// and never echoed.
func TestKeysInURL(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanEnterprise))
	for _, q := range []string{"?api_key=" + key, "?API_KEY=x", "?access_token=Bearer+" + key, "?" + key, "?q=" + key} {
		for _, path := range []string{"/v1/account", "/v1/nowhere"} {
			res := h.do(req{key: key, method: "GET", path: path + q})
			want(t, res, http.StatusBadRequest, "api_key_in_query")
			if strings.Contains(string(res.body), key) {
				t.Fatalf("the key is echoed: %s", res.body)
			}
		}
	}
}
