package store_test

import (
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// A consent form is taken once, only from the session that was shown it,
// before it expires.
func TestConsentOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		var ll string
		e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			ll, err = tx.CreateLandlord(ctx, "Somchai", rental.LandlordStandard)
			return err
		})
		show := func(token string) {
			c := store.Consent{ApplicationID: f.App.ID, LandlordID: ll, RedirectURI: "https://app.example.com/cb", State: "state-123", Scopes: f.App.Scopes}
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.ShowConsent(ctx, token, "session-a", c) }); err != nil {
				t.Fatal(err)
			}
		}
		take := func(token, session string) error {
			return e.DB.InTx(ctx, func(tx *store.Tx) error {
				c, err := tx.TakeConsent(ctx, token, session)
				if err == nil && (c.LandlordID != ll || c.State != "state-123" || len(c.Scopes) != len(f.App.Scopes)) {
					t.Fatalf("consent %+v", c)
				}
				return err
			})
		}
		show("form-1")
		if err := take("form-1", "session-b"); !rental.IsNotFound(err) {
			t.Fatalf("another session took it: %v", err)
		}
		if err := take("form-1", "session-a"); err != nil {
			t.Fatal(err)
		}
		if err := take("form-1", "session-a"); !rental.IsNotFound(err) {
			t.Fatalf("taken twice: %v", err)
		}
		show("form-2")
		e.Clock.Advance(rental.ConsentValidity)
		if err := take("form-2", "session-a"); !rental.IsNotFound(err) {
			t.Fatalf("an expired form was taken: %v", err)
		}
	})
}

// A portal code links the landlord once, for the developer's session that
// started the link with that state, within 5 minutes; a replayed, expired
// or foreign exchange links nothing.
func TestPortalCode(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		var ll string
		e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			ll, err = tx.CreateLandlord(ctx, "Somchai", rental.LandlordStandard)
			return err
		})
		in := func(fn func(tx *store.Tx) error) error { return e.DB.InTx(ctx, fn) }
		scopes := rental.Scopes{rental.ScopeBillsRead}
		for _, state := range []string{"st-1", "st-2"} {
			if err := in(func(tx *store.Tx) error { return tx.StartPortalLink(ctx, state, "dev-session", f.App.ID) }); err != nil {
				t.Fatal(err)
			}
		}
		if err := in(func(tx *store.Tx) error { return tx.IssuePortalCode(ctx, "st-9", f.App.ID, ll, scopes, "code-9") }); !rental.IsNotFound(err) {
			t.Fatalf("a code for an unknown state: %v", err)
		}
		if err := in(func(tx *store.Tx) error { return tx.IssuePortalCode(ctx, "st-1", f.App.ID, ll, scopes, "code-1") }); err != nil {
			t.Fatal(err)
		}
		if err := in(func(tx *store.Tx) error { return tx.IssuePortalCode(ctx, "st-1", f.App.ID, ll, scopes, "code-x") }); !rental.IsNotFound(err) {
			t.Fatalf("a second code for one state: %v", err)
		}
		exchange := func(code, state, session string) (*rental.Account, error) {
			var a *rental.Account
			err := in(func(tx *store.Tx) (err error) {
				a, err = tx.ExchangePortalCode(ctx, code, state, session)
				return err
			})
			return a, err
		}
		for _, bad := range [][3]string{{"code-1", "st-1", "other-session"}, {"code-1", "st-2", "dev-session"}, {"code-2", "st-1", "dev-session"}} {
			if _, err := exchange(bad[0], bad[1], bad[2]); !rental.IsNotFound(err) {
				t.Fatalf("%v: %v", bad, err)
			}
		}
		a, err := exchange("code-1", "st-1", "dev-session")
		if err != nil || a.LandlordID != ll || a.Revoked || a.Granted.String() != scopes.String() {
			t.Fatalf("%v %+v", err, a)
		}
		if _, err := exchange("code-1", "st-1", "dev-session"); !rental.IsNotFound(err) {
			t.Fatalf("replayed: %v", err)
		}
		in(func(tx *store.Tx) error { return tx.IssuePortalCode(ctx, "st-2", f.App.ID, ll, scopes, "code-2") })
		e.Clock.Advance(rental.ConnectCodeValidity + time.Second)
		if _, err := exchange("code-2", "st-2", "dev-session"); !rental.IsNotFound(err) {
			t.Fatalf("expired: %v", err)
		}
	})
}
