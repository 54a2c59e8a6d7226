package store_test

import (
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// A person signs up once per kind and email, with an account of their own;
// a session lives until idle for 12 hours or 30 days old, and ends at
// sign-out or when the password changes.
func TestPeopleAndSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		var dev, ll *rental.Person
		err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			if dev, err = tx.SignUp(ctx, rental.PersonDeveloper, "dev@example.com", "Dev", "hash1"); err != nil {
				return err
			}
			ll, err = tx.SignUp(ctx, rental.PersonLandlord, "dev@example.com", "Landlord", "hash2")
			return err
		})
		if err != nil || dev.DeveloperID == "" || ll.LandlordID == "" {
			t.Fatalf("%v %+v %+v", err, dev, ll)
		}
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.SignUp(ctx, rental.PersonDeveloper, "dev@example.com", "Again", "hash3")
			return err
		})
		if e, _ := rental.AsError(err); e == nil || e.Code != "email_taken" {
			t.Fatalf("second sign-up: %v", err)
		}
		p, hash, err := e.DB.Read().PersonByEmail(ctx, rental.PersonLandlord, "dev@example.com")
		if err != nil || p.ID != ll.ID || hash != "hash2" {
			t.Fatalf("%v %+v %s", err, p, hash)
		}
		start := func(token string) {
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.StartSession(ctx, dev.ID, token) }); err != nil {
				t.Fatal(err)
			}
		}
		alive := func(token string) bool {
			p, err := e.DB.Session(ctx, token, e.Clock.Now())
			if err != nil && !rental.IsNotFound(err) {
				t.Fatal(err)
			}
			return err == nil && p.ID == dev.ID
		}
		start("s1")
		if !alive("s1") || alive("s2") {
			t.Fatal("session")
		}
		for range 30 { // seen every 11 hours: alive until 30 days
			e.Clock.Advance(11 * time.Hour)
			if !alive("s1") {
				t.Fatal("an active session ended early")
			}
		}
		for range 36 {
			e.Clock.Advance(11 * time.Hour)
			alive("s1")
		}
		if alive("s1") {
			t.Fatal("a session outlived 30 days")
		}
		start("s3")
		e.Clock.Advance(12*time.Hour + time.Second)
		if alive("s3") {
			t.Fatal("an idle session lived")
		}
		start("s4")
		start("s5")
		e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.EndSession(ctx, "s4") })
		if alive("s4") || !alive("s5") {
			t.Fatal("sign-out")
		}
		e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetPassword(ctx, dev.ID, "hash9") })
		if alive("s5") {
			t.Fatal("a session lived through a password change")
		}
	})
}

// The retention clean-up deletes dead sessions, spent consent forms and old
// portal links, and nothing still usable.
func TestPurgeSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		var p *rental.Person
		var ll string
		in := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := e.DB.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		in(func(tx *store.Tx) (err error) {
			if p, err = tx.SignUp(ctx, rental.PersonLandlord, "ll@example.com", "LL", "h"); err != nil {
				return err
			}
			ll = p.LandlordID
			if err := tx.StartSession(ctx, p.ID, "old"); err != nil {
				return err
			}
			if err := tx.ShowConsent(ctx, "old-form", "old", store.Consent{ApplicationID: f.App.ID, LandlordID: ll, RedirectURI: "https://x.example/cb", State: "state-123"}); err != nil {
				return err
			}
			return tx.StartPortalLink(ctx, "old-state", "dev", f.App.ID)
		})
		e.Clock.Advance(25 * time.Hour)
		in(func(tx *store.Tx) error { return tx.StartSession(ctx, p.ID, "new") })
		n, err := e.DB.PurgeSessions(ctx)
		if err != nil || n != 3 {
			t.Fatalf("purged %d (%v), want 3", n, err)
		}
		if _, err := e.DB.Session(ctx, "new", e.Clock.Now()); err != nil {
			t.Fatalf("a live session was purged: %v", err)
		}
	})
}
