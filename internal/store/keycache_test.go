package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// TestLookupKeyAcrossProcesses: a process's kept key lookups (LookupKey)
// answer exactly what a fresh lookup would, whatever another process
// changed in between (plan, application, developer, link, key), and what
// the passing of time alone changes (a downgrade taking effect) too.
func TestLookupKeyAcrossProcesses(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		other, err := store.Open(ctx, e.DSN, store.Options{Now: e.Clock.Now, AddFriendURL: storetest.AddFriendURL})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		sec := storetest.Secret(t)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		key := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
		fp := sec.Fingerprint(key)
		// lookup is the second process's kept lookup, checked against a
		// fresh one.
		lookup := func(step string) *store.KeyOwner {
			t.Helper()
			for range 2 { // the first may fill the cache; the second is served from it
				got, err := other.LookupKey(ctx, fp, "", e.Clock.Now())
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				want, err := e.DB.Read().KeyForRequest(ctx, fp, "", e.Clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s: kept lookup\n%+v\nfresh lookup\n%+v", step, got, want)
				}
			}
			o, _ := other.LookupKey(ctx, fp, "", e.Clock.Now())
			return o
		}
		change := func(fn func(tx *store.Tx) error) {
			t.Helper()
			if err := e.DB.InTx(ctx, fn); err != nil {
				t.Fatal(err)
			}
		}
		o := lookup("start")
		o.Account.Name, o.Key.Name = "changed by the caller", "changed" // a caller's copy: the kept lookup stays
		lookup("after a caller changed its copy")

		if err := other.NoteKeyUse(ctx, o.Key.ID, e.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if o := lookup("key used"); o.Key.LastUsedAt == nil {
			t.Fatal("last use not seen")
		}
		change(func(tx *store.Tx) error { return tx.SetLandlordPlan(ctx, acct.LandlordID, rental.LandlordPro) })
		if o := lookup("landlord's plan"); o.Account.Plan != rental.LandlordPro {
			t.Fatalf("plan %s", o.Account.Plan)
		}
		// A downgrade waits for the next month; the lookup kept before it
		// takes effect must not outlive it.
		change(func(tx *store.Tx) error {
			_, err := tx.ChangeDeveloperPlan(ctx, f.Developer.ID, rental.PlanDeveloper)
			return err
		})
		if o := lookup("downgrade chosen"); o.Developer.Plan != rental.PlanPro {
			t.Fatalf("plan %s before the downgrade's month", o.Developer.Plan)
		}
		e.Clock.Advance(rental.MonthStart(e.Clock.Now()).AddDate(0, 1, 0).Sub(e.Clock.Now()) + time.Second)
		if o := lookup("downgrade's month"); o.Developer.Plan != rental.PlanDeveloper {
			t.Fatalf("plan %s after the downgrade took effect", o.Developer.Plan)
		}
		// So must one kept before an invoice falls due.
		var inv *rental.Invoice
		change(func(tx *store.Tx) error {
			inv, err = tx.CloseMonth(ctx, f.Developer.ID, rental.MonthOf(rental.MonthStart(tx.Now).Add(-time.Millisecond)))
			return err
		})
		if inv == nil {
			t.Fatal("no invoice for the month ended")
		}
		if lookup("invoice issued").Developer.InvoiceOverdue {
			t.Fatal("overdue before its due time")
		}
		e.Clock.Advance(inv.DueAt.Sub(e.Clock.Now()) + time.Second)
		if !lookup("invoice due").Developer.InvoiceOverdue {
			t.Fatal("not overdue after its due time")
		}
		change(func(tx *store.Tx) error { _, err := tx.PayInvoice(ctx, inv.Number); return err })
		if lookup("invoice paid").Developer.InvoiceOverdue {
			t.Fatal("overdue once paid")
		}
		change(func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, f.App.ID, true) })
		if !lookup("application disabled").App.Disabled {
			t.Fatal("disabled application not seen")
		}
		change(func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, true, true) })
		if o := lookup("developer suspended"); !o.Developer.Suspended || !o.Developer.InvoiceOverdue {
			t.Fatal("suspension not seen")
		}
		change(func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) })
		if !lookup("link ended").Account.Revoked {
			t.Fatal("ended link not seen")
		}
		change(func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, o.Key.ID) })
		if lookup("key revoked").Key.RevokedAt == nil {
			t.Fatal("revoked key not seen")
		}
		if _, err := other.LookupKey(context.Background(), sec.Fingerprint(rental.NewAPIKeySecret(rental.ModeLive)), "", e.Clock.Now()); !rental.IsNotFound(err) {
			t.Fatalf("unknown key: %v", err)
		}
	})
}
