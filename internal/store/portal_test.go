package store_test

import (
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// What the portal reads and writes: a developer's applications with the
// keys that still work and the landlords linked now; settings replaced
// whole; an application's keys (with their last 4 characters) and its real
// landlords, ended links included; a key's last use written at most once a
// minute, whichever process notes it.
func TestPortalQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		sec := storetest.Secret(t)
		f := storetest.NewFixture(t, e.DB, rental.PlanFree)
		other := storetest.NewFixture(t, e.DB, rental.PlanFree)
		text := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest, Name: "a"})
		e.Clock.Advance(time.Second)
		soon := e.Clock.Now().Add(time.Hour)
		f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest, Name: "b", ExpiresAt: &soon})
		a1 := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.Scopes{rental.ScopeBillsRead})
		e.Clock.Advance(time.Second)
		a2 := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.AllScopes)
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, a2.ID) }); err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Hour)

		apps, err := e.DB.Read().ApplicationsOf(ctx, f.Developer.ID, e.Clock.Now())
		if err != nil || len(apps) != 1 || apps[0].App.ID != f.App.ID || apps[0].Keys != 1 || apps[0].Accounts != 1 {
			t.Fatalf("applications %+v (%v)", apps, err)
		}
		keys, err := e.DB.Read().APIKeys(ctx, f.App.ID)
		if err != nil || len(keys) != 2 || keys[1].Name != "a" || keys[1].Last4 != text[len(text)-4:] || keys[1].LastUsedAt != nil {
			t.Fatalf("keys %+v (%v)", keys, err)
		}
		if _, err := e.DB.Read().GetAPIKey(ctx, other.App.ID, keys[0].ID); !rental.IsNotFound(err) {
			t.Fatalf("another application's key: %v", err)
		}
		accounts, err := e.DB.Read().LiveAccounts(ctx, f.App.ID)
		if err != nil || len(accounts) != 2 || accounts[0].ID != a1.ID || accounts[0].Revoked || !accounts[1].Revoked || accounts[0].Name == "" {
			t.Fatalf("accounts %+v (%v)", accounts, err)
		}

		set := rental.ApplicationSettings{Name: "Renamed", Company: "Co 2", Description: "d", Scopes: rental.Scopes{rental.ScopeRoomsRead},
			RedirectURIs: []string{"https://x.example/cb"}}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateApplication(ctx, f.App.ID, set) }); err != nil {
			t.Fatal(err)
		}
		app, err := e.DB.Read().GetApplication(ctx, f.App.ID)
		if err != nil || app.Name != "Renamed" || app.Company != "Co 2" || app.Description != "d" || app.Scopes.String() != "rooms:read" || app.RedirectURIs[0] != "https://x.example/cb" {
			t.Fatalf("updated %+v (%v)", app, err)
		}
		set.Scopes = nil
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateApplication(ctx, f.App.ID, set) }); err == nil {
			t.Fatal("an application without scopes")
		}

		used := func() *rental.Time {
			k, err := e.DB.Read().GetAPIKey(ctx, f.App.ID, keys[1].ID)
			if err != nil {
				t.Fatal(err)
			}
			return k.LastUsedAt
		}
		first := e.Clock.Now()
		for _, at := range []time.Time{first, first.Add(59 * time.Second)} {
			if err := e.DB.NoteKeyUse(ctx, keys[1].ID, at); err != nil {
				t.Fatal(err)
			}
		}
		if u := used(); u == nil || u.UnixMilli() != first.UnixMilli() {
			t.Fatalf("last use %v, want %v", u, first)
		}
		later := first.Add(time.Minute)
		e.DB.NoteKeyUse(ctx, keys[1].ID, later)
		if u := used(); u.UnixMilli() != later.UnixMilli() {
			t.Fatalf("last use %v, want %v", u, later)
		}
	})
}
