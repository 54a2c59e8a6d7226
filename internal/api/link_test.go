package api_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Linking, relinking and disconnecting a landlord each tell the
// application: account.linked (with the account object as GET /v1/account
// shows it, the new grant's scopes after a relink) and account.unlinked,
// delivered to the application's live endpoints only (not its test
// endpoints, not another application's), listed by GET /v1/events for a
// key of the account whatever its scopes, and the account keeps its ID.
func TestAccountLinkEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		h := webhookHarness(t, e)
		f := h.fixture(rental.PlanPro)
		other := h.fixture(rental.PlanPro)
		var landlord string
		e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			landlord, err = tx.CreateLandlord(ctx, "Khun Somchai", rental.LandlordStandard)
			return err
		})
		link := func(app string, scopes ...rental.Scope) *rental.Account {
			t.Helper()
			var acct *rental.Account
			if err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
				acct, err = tx.LinkAccount(ctx, app, landlord, scopes)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return acct
		}

		// Live endpoints need a live key, and a live key a linked landlord:
		// the other application links this landlord, and this one another.
		otherAcct := link(other.App.ID, rental.AllScopes...)
		otherRc := newReceiver(t, e.Clock.Now)
		h.createEndpoint(h.liveKey(other, ""), otherRc)
		f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.AllScopes)
		liveRc, testRc, billsRc := newReceiver(t, e.Clock.Now), newReceiver(t, e.Clock.Now), newReceiver(t, e.Clock.Now)
		h.createEndpoint(h.liveKey(f, ""), liveRc)
		h.createEndpoint(h.liveKey(f, ""), billsRc, "bill.created")
		h.createEndpoint(h.testKey(f), testRc)

		// The first link.
		acct := link(f.App.ID, rental.ScopePropertiesRead)
		key := h.liveKey(f, acct.ID) // every scope of the application; the grant narrows it
		account := h.do(req{key: key, method: "GET", path: "/v1/account"})
		want(t, account, http.StatusOK)
		listed := func(types ...string) []map[string]any {
			t.Helper()
			res := h.do(req{key: key, method: "GET", path: "/v1/events?type=account.*&order=asc"})
			want(t, res, http.StatusOK)
			var evs []map[string]any
			for _, ev := range res.json()["data"].([]any) {
				evs = append(evs, ev.(map[string]any))
			}
			var got []string
			for _, ev := range evs {
				got = append(got, ev["type"].(string))
			}
			if !slices.Equal(got, types) {
				t.Fatalf("listed %v, want %v", got, types)
			}
			return evs
		}
		evs := listed("account.linked")
		obj := evs[0]["data"].(map[string]any)["object"].(map[string]any)
		if !jsonEqual(obj, account.data()) || obj["id"] != acct.ID || obj["object"] != "account" || obj["livemode"] != true ||
			!jsonEqual(obj["scopes"], []string{"properties:read"}) || evs[0]["mode"] != "live" || evs[0]["account_id"] != acct.ID {
			t.Fatalf("account.linked %v\nGET /v1/account %s", evs[0], account.body)
		}
		// A key without properties:read reads it too: it needs no scope.
		if res := h.do(req{key: h.liveKey(f, acct.ID, rental.ScopeBillsRead), method: "GET", path: "/v1/events/" + evs[0]["id"].(string)}); res.status != http.StatusOK {
			t.Fatalf("account.linked for a bills:read key: %d %s", res.status, res.body)
		}

		// A relink with a wider grant: account.linked again, with the new
		// scopes, on the same account.
		again := link(f.App.ID, rental.ScopePropertiesRead, rental.ScopeBillsRead, rental.ScopeBillsWrite)
		if again.ID != acct.ID {
			t.Fatalf("relinked as %s, linked as %s", again.ID, acct.ID)
		}
		evs = listed("account.linked", "account.linked")
		if obj := evs[1]["data"].(map[string]any)["object"].(map[string]any); !jsonEqual(obj["scopes"], []string{"properties:read", "bills:read", "bills:write"}) {
			t.Fatalf("relinked with %v", obj["scopes"])
		}

		// Disconnecting: account.unlinked, which the account's keys cannot
		// read while the link is ended.
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatalf("a second disconnect: %v", err)
		}
		want(t, h.do(req{key: key, method: "GET", path: "/v1/events"}), http.StatusForbidden, "account_access_revoked")
		if parked := h.settleDeliveries(); len(parked) != 0 {
			t.Fatalf("%d deliveries wait for a retry", len(parked))
		}
		var delivered []string // in any order: deliveries run concurrently
		for _, r := range liveRc.requests() {
			var ev struct {
				Type, Mode string
				AccountID  string `json:"account_id"`
				Data       struct{ Object map[string]any }
			}
			if err := json.Unmarshal(r.body, &ev); err != nil {
				t.Fatal(err)
			}
			if ev.AccountID != acct.ID || ev.Mode != "live" || ev.Data.Object["id"] != acct.ID || ev.Data.Object["object"] != "account" {
				t.Fatalf("delivered %s", r.body)
			}
			delivered = append(delivered, ev.Type)
		}
		slices.Sort(delivered)
		if !slices.Equal(delivered, []string{"account.linked", "account.linked", "account.unlinked"}) {
			t.Fatalf("the live endpoint got %v", delivered)
		}
		for name, rc := range map[string]*receiver{"test": testRc, "bill.created": billsRc, "other application's": otherRc} {
			if n := len(rc.requests()); n != 0 {
				t.Fatalf("the %s endpoint got %d account events", name, n)
			}
		}

		// Linked again: the same account, and its history.
		if link(f.App.ID, rental.ScopePropertiesRead).ID != acct.ID {
			t.Fatal("relinked under another ID")
		}
		listed("account.linked", "account.linked", "account.unlinked", "account.linked")
		// The other application, linked to the same landlord, sees none of it.
		res := h.do(req{key: h.liveKey(other, otherAcct.ID), method: "GET", path: "/v1/events?type=account.*"})
		if res.status != http.StatusOK || len(res.json()["data"].([]any)) != 1 {
			t.Fatalf("the other application lists %s", res.body)
		}
	})
}
