package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

func TestKeys(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		sec := storetest.Secret(t)
		text := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest, Name: "k"})
		o, err := e.DB.Read().KeyByFingerprint(ctx, sec.Fingerprint(text), e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if o.Key.Mode != rental.ModeTest || o.App.SandboxAccountID != f.App.SandboxAccountID || o.Developer.Plan != rental.PlanDeveloper {
			t.Fatalf("lookup: %+v", o)
		}
		if o.Key.Prefix != text[:13] {
			t.Errorf("prefix %q", o.Key.Prefix)
		}

		// A live key needs a linked account first.
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CreateAPIKey(ctx, store.NewKey{ApplicationID: f.App.ID, Mode: rental.ModeLive, Scopes: rental.AllScopes, Fingerprint: "x", Prefix: "svc_live_x"})
			return err
		})
		if e, ok := rental.AsError(err); !ok || e.Code != "no_linked_account" {
			t.Fatalf("live key before a link: %v", err)
		}
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})

		// Scopes beyond the application's are refused.
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			app, err := tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: f.Developer.ID, Name: "narrow", Scopes: rental.Scopes{rental.ScopePropertiesRead}})
			if err != nil {
				return err
			}
			_, err = tx.CreateAPIKey(ctx, store.NewKey{ApplicationID: app.ID, Mode: rental.ModeTest, Scopes: rental.AllScopes, Fingerprint: "y", Prefix: "p"})
			return err
		})
		if e, ok := rental.AsError(err); !ok || e.Param != "scopes" {
			t.Fatalf("scopes beyond the application's: %v", err)
		}

		// Rotation: the new key has the same settings; the old one expires in 24 h.
		var rotated *rental.APIKey
		err = e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			rotated, err = tx.RotateAPIKey(ctx, o.Key.ID, sec.Fingerprint("new"), "svc_test_neww", "neww")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rotated.RotatedFrom != o.Key.ID || rotated.Mode != o.Key.Mode || rotated.Scopes.String() != o.Key.Scopes.String() {
			t.Fatalf("rotated %+v", rotated)
		}
		old, err := e.DB.Read().KeyByFingerprint(ctx, sec.Fingerprint(text), e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if left := old.Key.ExpiresAt.Sub(e.Clock.Now()); left < 23*time.Hour || left > 24*time.Hour {
			t.Fatalf("old key expires in %v", left)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, rotated.ID) }); err != nil {
			t.Fatal(err)
		}
		n, _ := e.DB.Read().KeyByFingerprint(ctx, sec.Fingerprint("new"), e.Clock.Now())
		if n.Key.RevokedAt == nil {
			t.Fatal("revoked key has no revoked_at")
		}
	})
}

// TestKeyForRequest: the key lookup reads, in the same query, the account
// the request names or the key implies, exactly as GetAccount would return
// it; an account of another application, or none at all, is not read.
func TestKeyForRequest(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		other := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		sec := storetest.Secret(t)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		foreign := other.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		test := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest, Name: "test"})
		bound := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
		unbound := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive})
		for _, c := range []struct {
			name, key, hint, want string
		}{
			{"test key: its sandbox", test, "", f.App.SandboxAccountID},
			{"bound key", bound, "", acct.ID},
			{"bound key naming another account: that one is read", bound, f.App.SandboxAccountID, f.App.SandboxAccountID},
			{"unbound key without a header", unbound, "", ""},
			{"unbound key naming its account", unbound, acct.ID, acct.ID},
			{"unbound key naming another application's account", unbound, foreign.ID, ""},
			{"unbound key naming no account", unbound, "acct_nothing", ""},
		} {
			o, err := e.DB.Read().KeyForRequest(ctx, sec.Fingerprint(c.key), c.hint, e.Clock.Now())
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if c.want == "" {
				if o.Account != nil {
					t.Errorf("%s: read account %s", c.name, o.Account.ID)
				}
				continue
			}
			want, err := e.DB.Read().GetAccount(ctx, f.App.ID, c.want)
			if err != nil {
				t.Fatal(err)
			}
			if o.Account == nil || !reflect.DeepEqual(*o.Account, *want) {
				t.Errorf("%s: read %+v, want %+v", c.name, o.Account, want)
			}
		}
		// A revoked link is read as revoked.
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		if o, err := e.DB.Read().KeyForRequest(ctx, sec.Fingerprint(bound), "", e.Clock.Now()); err != nil || o.Account == nil || !o.Account.Revoked {
			t.Fatalf("revoked link: %+v, %v", o, err)
		}
	})
}

func TestAccountLinks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanFree)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.Scopes{rental.ScopePropertiesRead})
		if acct.Mode() != rental.ModeLive || acct.QRPayments || acct.Capacity() != rental.LandlordFree.Capacity() {
			t.Fatalf("account %+v", acct)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		got, err := e.DB.Read().GetAccount(ctx, f.App.ID, acct.ID)
		if err != nil || !got.Revoked {
			t.Fatalf("after revoke: %+v %v", got, err)
		}
		// Ending it again changes nothing.
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, acct.ID) }); err != nil {
			t.Fatal(err)
		}
		// Linking again needs a new approval, and gives the same account ID back.
		var again *rental.Account
		err = e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			again, err = tx.LinkAccount(ctx, f.App.ID, acct.LandlordID, rental.AllScopes)
			return err
		})
		if err != nil || again.ID != acct.ID || again.Revoked || len(again.Granted) != len(rental.AllScopes) {
			t.Fatalf("relink: %+v %v", again, err)
		}
		// Each link and each end of one is an event, once.
		for typ, n := range map[string]int{rental.EventAccountLinked: 2, rental.EventAccountUnlinked: 1} {
			if got, err := e.DB.Read().CountEvents(ctx, acct, typ); err != nil || got != n {
				t.Fatalf("%d %s events (%v), want %d", got, typ, err, n)
			}
		}
		// A grant holds only what the application requests, whatever was approved.
		var narrow *rental.Application
		err = e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			narrow, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: f.Developer.ID, Name: "Narrow",
				Scopes: rental.Scopes{rental.ScopePropertiesRead, rental.ScopeBillsRead}, RedirectURIs: []string{"https://narrow.example.com/cb"}})
			if err != nil {
				return err
			}
			again, err = tx.LinkAccount(ctx, narrow.ID, acct.LandlordID, rental.Scopes{rental.ScopeBillsRead, rental.ScopeBillsWrite})
			return err
		})
		if err != nil || again.Granted.String() != "bills:read" {
			t.Fatalf("narrow grant: %+v %v", again, err)
		}
		// Nothing links to an unknown application or landlord, nor a sandbox.
		for name, ids := range map[string][2]string{
			"unknown application": {"app_000000000000000000000000", acct.LandlordID},
			"unknown landlord":    {f.App.ID, "ll_000000000000000000000000"},
			"sandbox landlord":    {narrow.ID, f.Sandbox(t, e.DB).LandlordID},
		} {
			err := e.DB.InTx(ctx, func(tx *store.Tx) error { _, err := tx.LinkAccount(ctx, ids[0], ids[1], rental.AllScopes); return err })
			if e, ok := rental.AsError(err); !ok || (e.Kind != rental.KindNotFound && e.Kind != rental.KindInvalid) {
				t.Fatalf("%s: %v", name, err)
			}
		}
		// Another application sees none of it.
		other := storetest.NewFixture(t, e.DB, rental.PlanFree)
		if _, err := e.DB.Read().GetAccount(ctx, other.App.ID, acct.ID); !rental.IsNotFound(err) {
			t.Fatalf("other application: %v", err)
		}
		// The sandbox cannot be revoked, nor an unknown account.
		for _, id := range []string{f.App.SandboxAccountID, "acct_000000000000000000000000"} {
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, id) }); !rental.IsNotFound(err) {
				t.Fatalf("revoke %s: %v", id, err)
			}
		}
	})
}

// An application's redirect URIs are checked when it is made.
func TestApplicationRedirectURIs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanFree)
		create := func(uris ...string) (*rental.Application, error) {
			var app *rental.Application
			err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
				app, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: f.Developer.ID, Name: "A", Scopes: rental.AllScopes, RedirectURIs: uris})
				return err
			})
			return app, err
		}
		app, err := create("https://app.example.com/cb", "http://localhost:3000/cb")
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.DB.Read().GetApplication(ctx, app.ID)
		if err != nil || !slices.Equal(got.RedirectURIs, []string{"https://app.example.com/cb", "http://localhost:3000/cb"}) {
			t.Fatalf("stored %v %v", got, err)
		}
		if _, err := create("http://app.example.com/cb"); err == nil {
			t.Fatal("http on a public host was registered")
		}
	})
}

// The operator's controls: a developer suspended and back, keys listed with
// what is known of them, revoked once whatever the number of revocations.
func TestOperatorControls(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		sec := storetest.Secret(t)
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		// An overdue invoice outlives a suspension and its end.
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperStatus(ctx, f.Developer.ID, false, true) }); err != nil {
			t.Fatal(err)
		}
		suspended := func() (bool, bool) {
			text := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest})
			o, err := e.DB.Read().KeyByFingerprint(ctx, sec.Fingerprint(text), e.Clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			return o.Developer.Suspended, o.Developer.InvoiceOverdue
		}
		for _, want := range []bool{true, false} {
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperSuspended(ctx, f.Developer.ID, want) }); err != nil {
				t.Fatal(err)
			}
			if s, overdue := suspended(); s != want || !overdue {
				t.Fatalf("suspended %v overdue %v, want %v true", s, overdue, want)
			}
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperSuspended(ctx, "dev_000000000000000000000000", true) }); !rental.IsNotFound(err) {
			t.Fatalf("unknown developer: %v", err)
		}

		// Keys: newest first, with what is stored of them.
		other := storetest.NewFixture(t, e.DB, rental.PlanPro)
		other.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeTest})
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		expires := e.Clock.Now().Add(time.Hour)
		e.Clock.Advance(time.Second)
		live := f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, Name: "Production", AccountID: acct.ID,
			Scopes: rental.Scopes{rental.ScopeBillsRead}, ExpiresAt: &expires})
		keys, err := e.DB.Read().APIKeys(ctx, f.App.ID)
		if err != nil || len(keys) != 3 {
			t.Fatalf("%d keys, %v", len(keys), err)
		}
		k := keys[0]
		if k.Name != "Production" || k.Mode != rental.ModeLive || k.Prefix != rental.KeyVisiblePrefix(live) || k.AccountID != acct.ID ||
			k.Scopes.String() != "bills:read" || k.ExpiresAt == nil || k.ExpiresAt.UnixMilli() != expires.UnixMilli() || k.LastUsedAt != nil ||
			k.Status(e.Clock.Now()) != rental.KeyExpiring || keys[2].Status(e.Clock.Now()) != rental.KeyActive {
			t.Fatalf("listed %+v", k)
		}
		for range 2 {
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, k.ID) }); err != nil {
				t.Fatal(err)
			}
			e.Clock.Advance(time.Minute)
		}
		keys, _ = e.DB.Read().APIKeys(ctx, f.App.ID)
		if r := keys[0].RevokedAt; r == nil || keys[0].Status(e.Clock.Now()) != rental.KeyRevoked || r.UnixMilli() != e.Clock.Now().Add(-2*time.Minute).UnixMilli() {
			t.Fatalf("revoked %+v", keys[0])
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAPIKey(ctx, "key_000000000000000000000000") }); !rental.IsNotFound(err) {
			t.Fatalf("unknown key: %v", err)
		}
		if keys, err := e.DB.Read().APIKeys(ctx, "app_000000000000000000000000"); err != nil || len(keys) != 0 {
			t.Fatalf("keys of an unknown application: %v %v", keys, err)
		}
	})
}

// claimIn claims k in a transaction of its own and, when claimed and
// given a response, completes it before the commit (nil: rolls back, as a
// 5xx does).
func claimIn(t *testing.T, db *store.DB, k store.IdempotencyKey, fp string, resp *store.StoredResponse) (store.Claim, *store.StoredResponse) {
	t.Helper()
	var claim store.Claim
	var stored *store.StoredResponse
	errRolledBack := errors.New("rolled back")
	err := db.InTx(context.Background(), func(tx *store.Tx) error {
		c, token, sr, err := tx.ClaimIdempotency(context.Background(), k, fp)
		if err != nil {
			return err
		}
		claim, stored = c, sr
		if c != store.Claimed || resp == nil {
			return errRolledBack
		}
		return tx.CompleteIdempotency(context.Background(), k, token, *resp)
	})
	if err != nil && !errors.Is(err, errRolledBack) {
		t.Fatal(err)
	}
	return claim, stored
}

func TestIdempotencyClaims(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		k := store.IdempotencyKey{ApplicationID: "app_1", AccountID: "acct_1", Key: "k1"}
		// A claim rolled back with its request (a 5xx) leaves nothing: a
		// retry runs at once.
		if c, _ := claimIn(t, e.DB, k, "fp", nil); c != store.Claimed {
			t.Fatalf("first claim: %v", c)
		}
		if c, _ := claimIn(t, e.DB, k, "other", nil); c != store.Claimed {
			t.Fatalf("after a rolled back claim: %v", c)
		}
		// A completed claim replays; another request with the key is refused.
		if c, _ := claimIn(t, e.DB, k, "fp", &store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("body")}); c != store.Claimed {
			t.Fatalf("claim to complete: %v", c)
		}
		if c, resp := claimIn(t, e.DB, k, "fp", nil); c != store.Replay || resp.Status != 201 || string(resp.Body) != "body" {
			t.Fatalf("replay: %v %+v", c, resp)
		}
		if c, _ := claimIn(t, e.DB, k, "other", nil); c != store.Mismatch {
			t.Fatalf("other fingerprint: %v", c)
		}
		// Stored for 24 hours, then the key is new again.
		e.Clock.Advance(24 * time.Hour)
		if c, _ := claimIn(t, e.DB, k, "other", &store.StoredResponse{Status: 200, Header: `{}`}); c != store.Claimed {
			t.Fatalf("after retention: %v", c)
		}
		// A key held by an earlier version's separate claim: in progress
		// while fresh; after 60 s a retry takes over, and the first request
		// can no longer complete.
		k2 := store.IdempotencyKey{ApplicationID: "app_1", AccountID: "acct_1", Key: "k2"}
		held := e.Clock.Now().UnixMilli()
		if _, err := e.DB.WritePool().ExecContext(ctx, `INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at)
			VALUES ($1, $2, $3, 'fp', $4, $4, $5)`, k2.ApplicationID, k2.AccountID, k2.Key, held, held+store.IdempotencyRetention.Milliseconds()); err != nil {
			t.Fatal(err)
		}
		if c, _ := claimIn(t, e.DB, k2, "fp", nil); c != store.InProgress {
			t.Fatalf("a fresh claim of an earlier version: %v", c)
		}
		e.Clock.Advance(61 * time.Second)
		if c, _ := claimIn(t, e.DB, k2, "fp", &store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("retry")}); c != store.Claimed {
			t.Fatalf("takeover: %v", c)
		}
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.CompleteIdempotency(ctx, k2, held, store.StoredResponse{Status: 201, Body: []byte("x")})
		})
		if err == nil {
			t.Fatal("the stale claim completed")
		}
		if c, resp := claimIn(t, e.DB, k2, "fp", nil); c != store.Replay || string(resp.Body) != "retry" {
			t.Fatalf("after the takeover: %v %+v", c, resp)
		}
		// Keys are scoped to application and account.
		if c, _ := claimIn(t, e.DB, store.IdempotencyKey{ApplicationID: "app_1", AccountID: "acct_2", Key: "k2"}, "fp", &store.StoredResponse{Status: 200, Header: `{}`}); c != store.Claimed {
			t.Fatalf("other account: %v", c)
		}
		e.Clock.Advance(25 * time.Hour)
		if n, err := e.DB.PurgeIdempotency(ctx); err != nil || n != 3 {
			t.Fatalf("purge: %d %v", n, err)
		}
	})
}

// A purge of more rows than one of its statements deletes on SQLite
// (purgeBatch) deletes them all, and only them.
func TestPurgeInBatches(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		now := e.Clock.Now().UnixMilli()
		insert := func(n int, tag string, expires int64) {
			t.Helper()
			if _, err := e.DB.WritePool().ExecContext(ctx, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $1)
				INSERT INTO idempotency_keys (application_id, account_id, key, fingerprint, locked_at, created_at, expires_at, done)
				SELECT 'app_1', 'acct_1', $2 || CAST(i AS TEXT), 'fp', $4, $4, $3, TRUE FROM n`, n, tag, expires, now); err != nil {
				t.Fatal(err)
			}
		}
		insert(2500, "expired-", now-1)
		insert(7, "kept-", now+time.Hour.Milliseconds())
		if n, err := e.DB.PurgeIdempotency(ctx); err != nil || n != 2500 {
			t.Fatalf("purge: %d %v", n, err)
		}
		var left int
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT COUNT(*) FROM idempotency_keys`).Scan(&left); err != nil || left != 7 {
			t.Fatalf("%d keys left (%v), want the 7 unexpired", left, err)
		}
	})
}

// Twenty transactions claim one key at once: one runs, and the others,
// waiting at the key's row, replay its answer.
func TestConcurrentClaimsOneWinner(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		k := store.IdempotencyKey{ApplicationID: "app_1", AccountID: "acct_1", Key: "race"}
		var mu sync.Mutex
		counts := map[store.Claim]int{}
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				c, _ := claimIn(t, e.DB, k, "fp", &store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("once")})
				mu.Lock()
				counts[c]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if counts[store.Claimed] != 1 || counts[store.Replay] != 19 {
			t.Fatalf("claims: %v", counts)
		}
	})
}

func TestPropertiesAndEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.AllScopes)
		p := newProperty(t, "Baan Suk")
		var created *rental.Property
		if err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) { created, err = tx.CreateProperty(ctx, acct, p); return err }); err != nil {
			t.Fatal(err)
		}
		// The free plan holds one property.
		err := e.DB.InTx(ctx, func(tx *store.Tx) error { _, err := tx.CreateProperty(ctx, acct, p); return err })
		if e, ok := rental.AsError(err); !ok || e.Code != "plan_limit_reached" {
			t.Fatalf("over the plan: %v", err)
		}
		// An update that changes nothing records no event.
		for _, ch := range []rental.PropertyChange{{Name: rental.Of("Baan Suk")}, {Name: rental.Of("Baan Suk 2")}} {
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { _, err := tx.UpdateProperty(ctx, acct, created.ID, ch); return err }); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProperty(ctx, acct, created.ID) }); err != nil {
			t.Fatal(err)
		}
		for typ, want := range map[string]int{"property.created": 1, "property.updated": 1, "property.deleted": 1} {
			if n, err := e.DB.Read().CountEvents(ctx, acct, typ); err != nil || n != want {
				t.Errorf("%s: %d events, want %d (%v)", typ, n, want, err)
			}
		}
		if _, err := e.DB.Read().GetProperty(ctx, acct, created.ID); !rental.IsNotFound(err) {
			t.Fatalf("deleted property: %v", err)
		}
	})
}

// A landlord's writers take turns, and the creation times they hand out
// follow commit order even when the wall clock steps back.
func TestClaimOrdersWriters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		acct := f.Sandbox(t, e.DB)
		tx1, err := e.DB.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx1.Claim(ctx, acct); err != nil {
			t.Fatal(err)
		}
		first := tx1.Now
		e.Clock.Advance(-time.Hour)
		second := make(chan time.Time, 1)
		go func() {
			tx2, err := e.DB.Begin(context.Background())
			if err != nil {
				t.Error(err)
				second <- time.Time{}
				return
			}
			defer tx2.Rollback()
			if err := tx2.Claim(context.Background(), acct); err != nil {
				t.Error(err)
			}
			second <- tx2.Now
		}()
		select {
		case <-second:
			t.Fatal("a second writer claimed the landlord while the first held it")
		case <-time.After(200 * time.Millisecond):
		}
		if err := tx1.Commit(); err != nil {
			t.Fatal(err)
		}
		if got := <-second; !got.After(first) {
			t.Fatalf("second writer's time %v is not after the first's %v", got, first)
		}
	})
}

// The SQLite database and its -wal and -shm files hold tenants' names and
// phone numbers: only their owner may read them.
func TestSQLiteFilesArePrivate(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
	f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
	path := strings.TrimPrefix(e.DSN, "sqlite:")
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err) // the store has written: WAL and shared memory exist
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s: mode %#o, want 0600", filepath.Base(name), mode)
		}
	}
}

// A request waits for a connection at most Options.Wait, then gets the
// 503 error (service_unavailable, Retry-After) rather than waiting as long
// as its context lives.
func TestConnectionWaitIsBounded(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		db, err := store.Open(ctx, e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, MaxConns: 1, Wait: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		held, err := db.WritePool().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Close()
		unavailable := func(what string, err error, start time.Time) {
			t.Helper()
			if e, ok := rental.AsError(err); !ok || e.Kind != rental.KindUnavailable || e.Code != "service_unavailable" || e.RetryAfter < 1 {
				t.Errorf("%s with the pool taken: %v", what, err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s waited %v", what, took)
			}
		}
		start := time.Now()
		_, err = db.Begin(ctx)
		unavailable("Begin", err, start)
		if e.Name == "postgres" { // SQLite reads have their own pool
			start = time.Now()
			_, err = db.Read().CountDevelopers(ctx)
			unavailable("a read", err, start)
		}
		held.Close()
		if _, err := db.Read().CountDevelopers(ctx); err != nil {
			t.Fatalf("a read after the connection came back: %v", err)
		}
	})
}

// TestBeginClaimedQueues: a process's writers of one landlord take turns
// before they reach the database (the second begins only once the first is
// done, and after it on the landlord's clock), writers of another landlord
// do not wait, and a writer that gives up while waiting leaves the queue.
func TestBeginClaimedQueues(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		a := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		b := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		first, err := e.DB.BeginClaimed(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		began := make(chan *store.Tx)
		go func() {
			tx, err := e.DB.BeginClaimed(ctx, a)
			if err != nil {
				t.Error(err)
			}
			began <- tx
		}()
		if e.DB.Engine() == store.Postgres { // SQLite's one write connection is a queue of its own
			other, err := e.DB.BeginClaimed(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			other.Rollback()
		}
		gaveUp, cancel := context.WithCancel(ctx)
		quit := make(chan error)
		go func() {
			_, err := e.DB.BeginClaimed(gaveUp, a)
			quit <- err
		}()
		cancel()
		if err := <-quit; !errors.Is(err, context.Canceled) {
			t.Fatalf("a writer that gave up: %v", err)
		}
		select {
		case <-began:
			t.Fatal("the second writer began while the first held the landlord")
		case <-time.After(100 * time.Millisecond):
		}
		// On SQLite the first's Commit returns once the commit it shares
		// with the second is done (see database.Begin): after the second's
		// end.
		firstNow := first.Now
		committed := make(chan error, 1)
		go func() { committed <- first.Commit() }()
		second := <-began
		if !second.Now.After(firstNow) {
			t.Fatalf("second writer's time %v is not after the first's %v", second.Now, firstNow)
		}
		second.Rollback()
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
	})
}

// TestTurnPassesAtCommit: on PostgreSQL a landlord's writer gives its
// turn to the next writer of its process as it sends its commit, not once
// the commit is answered, and tells it the tick to predict: the next one
// begins (ahead) while the first's commit still waits in the database,
// its own first statement waits there for the landlord's lock, and it
// takes a later tick without a claim ahead lost. A commit that fails
// after passing the turn leaves the clock below that prediction, so the
// next claim ahead still holds.
func TestTurnPassesAtCommit(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	ctx := t.Context()
	f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
	acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
	lost := e.DB.ClaimsAheadLost()
	// blocked returns a transaction holding the developer's row, which a
	// commit then waits for.
	blocked := func() *sql.Tx {
		t.Helper()
		other, err := e.DB.WritePool().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.ExecContext(ctx, `SELECT 1 FROM developers WHERE id = $1 FOR UPDATE`, f.Developer.ID); err != nil {
			t.Fatal(err)
		}
		return other
	}
	// committing begins a claimed write whose commit changes the
	// developer's row where cond holds (else it fails: errGone), and
	// commits it in the background.
	errGone := errors.New("the developer's name changed")
	committing := func(cond string) (*store.Tx, chan error) {
		t.Helper()
		tx, err := e.DB.BeginClaimed(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Later(ctx, database.Stmt{SQL: `UPDATE developers SET name = name WHERE id = $1 AND ` + cond, Args: []any{f.Developer.ID},
			What: "test: developer", Lost: errGone}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- tx.Commit() }()
		return tx, done
	}
	// next begins the landlord's next write ahead, which must not wait for
	// the commit that holds the developer's row to be answered.
	next := func() *store.Tx {
		t.Helper()
		began := make(chan *store.Tx, 1)
		go func() {
			tx, err := e.DB.BeginAhead(ctx, acct, nil)
			if err != nil {
				t.Error(err)
			}
			began <- tx
		}()
		select {
		case tx := <-began:
			if tx == nil {
				t.FailNow()
			}
			return tx
		case <-time.After(5 * time.Second):
			t.Fatal("the next writer waited for the commit to be answered")
			return nil
		}
	}
	// claim sends tx's first statement, with its claim ahead, and then
	// commits it.
	claim := func(tx *store.Tx) chan error {
		done := make(chan error, 1)
		go func() {
			var clock int64
			if err := tx.QueryRow(ctx, `SELECT clock FROM landlords WHERE id = $1`, acct.LandlordID).Scan(&clock); err != nil {
				done <- err
				return
			}
			done <- tx.Commit()
		}()
		return done
	}
	waits := func(what string, ch chan error) {
		t.Helper()
		select {
		case err := <-ch:
			t.Fatalf("%s did not wait: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}

	// A commit that succeeds.
	other := blocked()
	first, firstDone := committing("true")
	waits("the first commit, behind the developer's row,", firstDone)
	second := next()
	secondDone := claim(second)
	waits("the second writer's claim, behind the first's lock,", secondDone)
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatalf("first: %v", err)
	}
	if err := <-secondDone; err != nil {
		t.Fatalf("second: %v", err)
	}
	if !second.Now.After(first.Now) {
		t.Fatalf("the second writer's time %v is not after the first's %v", second.Now, first.Now)
	}

	// A commit that fails once the row it waits for changes.
	other = blocked()
	if _, err := other.ExecContext(ctx, `UPDATE developers SET name = 'Renamed' WHERE id = $1`, f.Developer.ID); err != nil {
		t.Fatal(err)
	}
	third, thirdDone := committing("name <> 'Renamed'")
	waits("the third commit, behind the developer's row,", thirdDone)
	fourth := next()
	fourthDone := claim(fourth)
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-thirdDone; !errors.Is(err, errGone) {
		t.Fatalf("third: %v, want its check's failure", err)
	}
	if err := <-fourthDone; err != nil {
		t.Fatalf("fourth, after the third failed: %v", err)
	}
	if !fourth.Now.After(third.Now) {
		t.Fatalf("the fourth writer's time %v is not after the third's %v", fourth.Now, third.Now)
	}
	if n := e.DB.ClaimsAheadLost() - lost; n != 0 {
		t.Fatalf("%d claims ahead lost", n)
	}
	// After a failure, the next prediction is the clock as committed.
	fifth := next()
	if err := <-claim(fifth); err != nil || !fifth.Now.After(fourth.Now) {
		t.Fatalf("fifth: %v at %v, after %v", err, fifth.Now, fourth.Now)
	}
	var clock int64
	if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT clock FROM landlords WHERE id = $1`, acct.LandlordID).Scan(&clock); err != nil || clock != fifth.Now.UnixMilli() {
		t.Fatalf("the clock is %d (%v), want the fifth writer's %d", clock, err, fifth.Now.UnixMilli())
	}
	if n := e.DB.ClaimsAheadLost() - lost; n != 0 {
		t.Fatalf("%d claims ahead lost", n)
	}
}

// PostgreSQL connections use one generic plan per prepared statement
// (planning a page of bills anew each time was much of the server's
// work), unless the DSN names its own plan_cache_mode.
func TestPostgresPlansOnce(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	mode := func(db *store.DB) string {
		t.Helper()
		var m string
		if err := db.WritePool().QueryRowContext(t.Context(), `SHOW plan_cache_mode`).Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := mode(e.DB); m != "force_generic_plan" {
		t.Errorf("plan_cache_mode %q, want force_generic_plan", m)
	}
	own, err := store.Open(t.Context(), e.DSN+"&plan_cache_mode=auto", store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if m := mode(own); m != "auto" {
		t.Errorf("with plan_cache_mode=auto in the DSN: %q", m)
	}
}

// SQLite's log reaches the database file without a write doing it: the
// writer's own checkpoints are off, and the store's checkpointer copies
// the log in the background.
func TestSQLiteLogIsCheckpointed(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	ctx := t.Context()
	path := strings.TrimPrefix(e.DSN, "sqlite:")
	size := func(name string) int64 {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	var auto int
	if err := e.DB.WritePool().QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("the writer checkpoints every %d pages (%v)", auto, err)
	}
	before := size(path)
	f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
	f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
	for range 10 { // more pages than were in the file
		if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE developers SET name = name`); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for size(path) <= before {
		if time.Now().After(deadline) {
			t.Fatalf("the database file stayed %d bytes (log %d bytes)", before, size(path+"-wal"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestIdempotencyKeyHeld: a transaction begun with BeginIdempotent holds
// its Idempotency-Key until it ends. On PostgreSQL another transaction for
// the key, from another process, fails at once with ErrKeyBusy (begun as
// usual, at its begin; begun ahead, at its first statement), before it
// waits for the landlord's lock the first holds, and having done nothing;
// a transaction for another key is not held up by it. Once the first
// commits, the key replays its answer; and when the first's process dies
// half way (its connection ends, nothing committed), a retry claims the
// key at once. On SQLite, whose write transactions run one at a time, a
// second transaction only begins after the first ended: BeginIdempotent
// claims as BeginChecked does.
func TestIdempotencyKeyHeld(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		key := func(name string) store.IdempotencyKey {
			return store.IdempotencyKey{ApplicationID: f.App.ID, AccountID: acct.ID, Key: name}
		}
		// begin begins a write of the account with the key and claims it.
		begin := func(db *store.DB, acct *rental.Account, k store.IdempotencyKey, ahead bool) (*store.Tx, store.Claim, int64, error) {
			tx, err := db.BeginIdempotent(ctx, acct, nil, k, ahead)
			if err != nil {
				return nil, 0, 0, err
			}
			c, token, _, err := tx.ClaimIdempotency(ctx, k, "fp")
			if err != nil {
				tx.Rollback()
				return nil, 0, 0, err
			}
			return tx, c, token, nil
		}
		first, c, token, err := begin(e.DB, acct, key("held"), false)
		if err != nil || c != store.Claimed {
			t.Fatalf("first claim: %v %v", c, err)
		}
		defer first.Rollback()
		if e.Name != "postgres" {
			if err := first.CompleteIdempotency(ctx, key("held"), token, store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("first")}); err != nil {
				t.Fatal(err)
			}
			if err := first.Commit(); err != nil {
				t.Fatal(err)
			}
			if _, c, _, err := begin(e.DB, acct, key("held"), true); err != nil || c != store.Replay {
				t.Fatalf("after the first: %v %v", c, err)
			}
			return
		}
		other, err := store.Open(ctx, e.DSN, store.Options{Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		// refused is begin on the other process while the key is held: at
		// once ErrKeyBusy, never a wait for the first to end.
		refused := func(k store.IdempotencyKey, ahead bool) {
			t.Helper()
			wait, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			tx, err := other.BeginIdempotent(wait, acct, nil, k, ahead)
			if err == nil {
				_, _, _, err = tx.ClaimIdempotency(wait, k, "fp")
				tx.Rollback()
			}
			if !errors.Is(err, store.ErrKeyBusy) {
				t.Fatalf("another process's claim of %s (ahead %v) while the first runs: %v", k.Key, ahead, err)
			}
		}
		refused(key("held"), false)
		refused(key("held"), true)
		if e, ok := rental.AsError(store.ErrKeyBusy); !ok || e.Code != "idempotency_in_progress" {
			t.Fatalf("ErrKeyBusy answers %v", e)
		}
		// Another key, on no landlord's lock, is not held up.
		if tx, c, _, err := begin(other, nil, key("another"), false); err != nil || c != store.Claimed {
			t.Fatalf("another key while the first runs: %v %v", c, err)
		} else {
			tx.Rollback()
		}
		if err := first.CompleteIdempotency(ctx, key("held"), token, store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("first")}); err != nil {
			t.Fatal(err)
		}
		if err := first.Commit(); err != nil {
			t.Fatal(err)
		}
		if tx, c, _, err := begin(other, acct, key("held"), false); err != nil || c != store.Replay {
			t.Fatalf("after the first committed: %v %v", c, err)
		} else {
			tx.Rollback()
		}
		// A process that dies half way: its transaction holds the key and
		// the landlord until its connection ends, then a retry runs at once.
		dying, err := store.Open(ctx, e.DSN, store.Options{Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer dying.Close()
		half, c, _, err := begin(dying, acct, key("crashed"), false)
		if err != nil || c != store.Claimed {
			t.Fatalf("claim of the request that dies: %v %v", c, err)
		}
		defer half.Rollback()
		var pid int64
		if err := half.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		refused(key("crashed"), false)
		if _, err := other.WritePool().ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			tx, c, _, err := begin(other, acct, key("crashed"), false)
			if err == nil && c == store.Claimed {
				tx.Rollback()
				break
			}
			if !errors.Is(err, store.ErrKeyBusy) || time.Now().After(deadline) {
				t.Fatalf("retry after the process died: %v %v", c, err)
			}
			time.Sleep(20 * time.Millisecond) // the server ends the backend asynchronously
		}
	})
}

// TestCommitIsWhole: the statements left for Commit (events, the stored
// response; one batch on PostgreSQL) commit with the write or not at all.
// A stored response whose claim was lost fails the commit, and nothing of
// the transaction stays: not the property, not its event, not the claim.
func TestCommitIsWhole(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		p := newProperty(t, "Baan Suk")
		k := store.IdempotencyKey{ApplicationID: f.App.ID, AccountID: acct.ID, Key: "whole"}
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			c, token, _, err := tx.ClaimIdempotency(ctx, k, "fp")
			if err != nil || c != store.Claimed {
				t.Fatalf("claim: %v %v", c, err)
			}
			if _, err := tx.CreateProperty(ctx, acct, p); err != nil {
				return err
			}
			return tx.CompleteIdempotency(ctx, k, token+1, store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("x")})
		})
		if e, ok := rental.AsError(err); !ok || e.Code != "idempotency_in_progress" {
			t.Fatalf("commit with a lost claim: %v", err)
		}
		if props, _, err := e.DB.Read().ListProperties(ctx, acct, store.Page{Limit: 10}); err != nil || len(props) != 0 {
			t.Fatalf("properties after the failed commit: %v %v", props, err)
		}
		if n, err := e.DB.Read().CountEvents(ctx, acct, "property.created"); err != nil || n != 0 {
			t.Fatalf("events after the failed commit: %d %v", n, err)
		}
		if c, _ := claimIn(t, e.DB, k, "other", nil); c != store.Claimed {
			t.Fatalf("the key after the failed commit: %v", c)
		}
	})
}

// TestTransactionEndsClean: on a pool of one connection, every way a write
// transaction ends (committed, rolled back before it sent anything or after
// a failed statement, a commit that failed) leaves the connection ready for
// the next transaction, with nothing of the failed ones in the database. On
// PostgreSQL the transaction speaks pgx on the connection itself and sends
// BEGIN and COMMIT with other statements, so this is its own bookkeeping.
func TestTransactionEndsClean(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		db, err := store.Open(ctx, e.DSN, store.Options{MaxConns: 1, Wait: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		f := storetest.NewFixture(t, db, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, db, rental.LandlordPro, rental.AllScopes)
		create := func(tx *store.Tx, name string) error {
			p := newProperty(t, name)
			_, err = tx.CreateProperty(ctx, acct, p)
			return err
		}
		// On PostgreSQL, the server process behind the one connection: the
		// same at the end, or a failure left the connection unusable and
		// the pool replaced it.
		backend := func() (pid int64) {
			if e.Name != "postgres" {
				return 0
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid) }); err != nil {
				t.Fatal(err)
			}
			return pid
		}
		first := backend()
		errUndo := errors.New("undo")
		// Rolled back before anything was sent.
		if tx, err := db.Begin(ctx); err != nil {
			t.Fatal(err)
		} else if err := tx.Rollback(); err != nil {
			t.Fatalf("rollback of an empty transaction: %v", err)
		}
		// Rolled back after its writes.
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := create(tx, "undone"); err != nil {
				return err
			}
			return errUndo
		}); !errors.Is(err, errUndo) {
			t.Fatal(err)
		}
		// Rolled back after a statement failed (the transaction is aborted on PostgreSQL).
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			if err := create(tx, "failed"); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO no_such_table VALUES (1)`)
			return err
		}); err == nil {
			t.Fatal("a statement on a missing table succeeded")
		}
		// On PostgreSQL a failed statement fails the whole transaction,
		// even when its error was ignored: the commit says so.
		if e.Name == "postgres" {
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				if err := create(tx, "ignored"); err != nil {
					return err
				}
				tx.Exec(ctx, `SELECT 1 / 0`)
				return nil
			}); err == nil {
				t.Fatal("a commit after a failed statement succeeded")
			}
		}
		// A commit that failed: a claim it no longer holds.
		k := store.IdempotencyKey{ApplicationID: f.App.ID, AccountID: acct.ID, Key: "ends-clean"}
		if err := db.InTx(ctx, func(tx *store.Tx) error {
			_, token, _, err := tx.ClaimIdempotency(ctx, k, "fp")
			if err != nil {
				return err
			}
			if err := create(tx, "lost"); err != nil {
				return err
			}
			return tx.CompleteIdempotency(ctx, k, token+1, store.StoredResponse{Status: 201, Header: `{}`, Body: []byte("x")})
		}); err == nil {
			t.Fatal("a commit with a lost claim succeeded")
		}
		// The one connection still works, and only the committed write is there.
		if err := db.InTx(ctx, func(tx *store.Tx) error { return create(tx, "kept") }); err != nil {
			t.Fatalf("the transaction after the failures: %v", err)
		}
		props, _, err := db.Read().ListProperties(ctx, acct, store.Page{Limit: 10})
		if err != nil || len(props) != 1 || props[0].Name != "kept" {
			t.Fatalf("properties: %+v %v", props, err)
		}
		if last := backend(); last != first {
			t.Fatalf("the connection was replaced (server process %d, then %d): a transaction did not end cleanly", first, last)
		}
	})
}

// TestBeginAhead: a write begun with BeginAhead sends nothing until its
// first statement, and its landlord's claim then predicts the clock's next
// tick from this process's last commit. When the prediction holds, the
// tick is the very one a claim as usual takes, even with the clock ahead
// of the wall clock; when another process moved the clock past it, the
// first statement (or the commit) fails with ErrNotClaimed and nothing is
// written. On SQLite BeginAhead is BeginChecked.
func TestBeginAhead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		pg := e.DB.Engine() == store.Postgres
		clock := func() (c int64) {
			t.Helper()
			if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT clock FROM landlords WHERE id = $1`, acct.LandlordID).Scan(&c); err != nil {
				t.Fatal(err)
			}
			return c
		}
		// write creates a property in a transaction begun with begin,
		// committed unless commitOnly (then nothing but the commit is
		// sent); it returns the transaction's time.
		write := func(begin func(context.Context, *rental.Account, *store.KeyCheck) (*store.Tx, error), name string, commitOnly bool) (time.Time, error) {
			tx, err := begin(ctx, acct, nil)
			if err != nil {
				return time.Time{}, err
			}
			defer tx.Rollback()
			if !commitOnly {
				p := newProperty(t, name)
				if _, err := tx.CreateProperty(ctx, acct, p); err != nil {
					return tx.Now, err
				}
			}
			return tx.Now, tx.Commit()
		}
		first, err := write(e.DB.BeginAhead, "first", false)
		if err != nil {
			t.Fatal(err)
		}
		if c := clock(); c != first.UnixMilli() {
			t.Fatalf("clock %d after a write at %d", c, first.UnixMilli())
		}
		// Another process runs the clock a minute ahead (as a burst of
		// events does): this process's prediction is behind it.
		if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE landlords SET clock = clock + 60000 WHERE id = $1`, acct.LandlordID); err != nil {
			t.Fatal(err)
		}
		moved := clock()
		for _, commitOnly := range []bool{false, true} {
			e.Clock.Advance(2 * time.Second) // past the pause after a claim ahead lost
			_, err := write(e.DB.BeginAhead, "lost", commitOnly)
			switch {
			case pg && !errors.Is(err, store.ErrNotClaimed):
				t.Fatalf("claim ahead of a moved clock (commit only %v): %v", commitOnly, err)
			case !pg && err != nil:
				t.Fatal(err)
			case pg && clock() != moved:
				t.Fatalf("clock %d after a claim that did not hold, was %d", clock(), moved)
			}
		}
		var lost int
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*) FROM properties WHERE name = 'lost'`).Scan(&lost); err != nil {
			t.Fatal(err)
		}
		if pg && lost != 0 {
			t.Fatalf("%d properties written by a claim that did not hold", lost)
		}
		if lost := e.DB.ClaimsAheadLost(); pg && lost != 2 {
			t.Fatalf("%d claims ahead lost, want 2", lost)
		}
		// A claim as usual takes the next tick; after it (and the pause),
		// so does a claim ahead, the wall clock a minute behind.
		e.Clock.Advance(2 * time.Second)
		base := clock()
		for i, begin := range []func(context.Context, *rental.Account, *store.KeyCheck) (*store.Tx, error){e.DB.BeginChecked, e.DB.BeginAhead} {
			now, err := write(begin, "after", false)
			if err != nil {
				t.Fatal(err)
			}
			if want := base + int64(i) + 1; now.UnixMilli() != want || clock() != want {
				t.Fatalf("write %d: time %d, clock %d; want %d", i, now.UnixMilli(), clock(), want)
			}
		}
		if lost := e.DB.ClaimsAheadLost(); pg && lost != 2 {
			t.Fatalf("%d claims ahead lost, want still 2", lost)
		}
	})
}

// newProperty is a property named name at the usual test rates, to create.
func newProperty(t testing.TB, name string) rental.Property {
	t.Helper()
	p, err := rental.NewProperty(rental.PropertyChange{Name: rental.Of(name), ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
