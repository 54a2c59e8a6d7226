package api_test

import (
	"net/http"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// TestKeptLookupAcrossServers: a read served on the key's kept lookup (on
// PostgreSQL, confirmed in the same round trip as its query) answers as a
// fresh lookup would. After another process revokes the key or ends the
// link, the next request is refused, even one that fails its own checks
// before reaching the database; changes the lookup does not read are
// seen as usual.
func TestKeptLookupAcrossServers(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		one := newHarness(t, e)
		two := secondServer(t, one)
		f := one.fixture(rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		key := one.liveKey(f, acct.ID)
		other := one.liveKey(f, "")
		get := func(key, path string, headers ...string) *result {
			t.Helper()
			return two.do(req{key: key, method: "GET", path: path, headers: headers})
		}
		for range 3 { // the first looks up and keeps; the others run on what was kept
			if res := get(key, "/v1/properties"); res.status != http.StatusOK || len(res.json()["data"].([]any)) != 0 {
				t.Fatalf("before: %d %s", res.status, res.body)
			}
		}
		// A change the lookup does not read: seen at once.
		if res := one.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": "Baan Suk", "electricity_rate": 800, "water_rate": 1800},
			headers: []string{"Idempotency-Key: p1"}}); res.status != http.StatusCreated {
			t.Fatalf("create: %d %s", res.status, res.body)
		}
		if res := get(key, "/v1/properties"); res.status != http.StatusOK || len(res.json()["data"].([]any)) != 1 {
			t.Fatalf("after a create on the other server: %d %s", res.status, res.body)
		}
		get(other, "/v1/properties", "SERVICE-Account: "+acct.ID) // kept for the unbound key too
		keys, err := e.DB.Read().APIKeys(ctx, f.App.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k.AccountID == acct.ID {
				if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, k.ID) }); err != nil {
					t.Fatal(err)
				}
			}
		}
		// A bad parameter fails before any query, on the kept lookup: the
		// answer still waits for the check, and the key is refused.
		for _, path := range []string{"/v1/properties?limit=abc", "/v1/properties", "/v1/properties"} {
			if res := get(key, path); res.status != http.StatusUnauthorized || res.code() != "invalid_api_key" {
				t.Fatalf("%s with the revoked key: %d %s", path, res.status, res.body)
			}
		}
		// HEAD is not in the document (send reports that); its status is what counts here.
		if res, _ := two.send(req{key: key, method: "HEAD", path: "/v1/properties"}); res == nil || res.status != http.StatusUnauthorized {
			t.Fatalf("HEAD with the revoked key: %+v", res)
		}
		// The other key, kept too, is refused once the link ends.
		if res := get(other, "/v1/properties", "SERVICE-Account: "+acct.ID); res.status != http.StatusOK {
			t.Fatalf("other key before the link ends: %d %s", res.status, res.body)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		if res := get(other, "/v1/properties", "SERVICE-Account: "+acct.ID); res.status != http.StatusForbidden || res.code() != "account_access_revoked" {
			t.Fatalf("other key after the link ended: %d %s", res.status, res.body)
		}
	})
}
