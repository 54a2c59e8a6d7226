package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// TestVersionReadsShareStatements holds the access version's table locked
// while requests on kept lookups of three landlords' keys read their tags:
// the first two send their statements, which wait on the lock, and the
// thirty that come meanwhile wait for them. A change commits with the
// lock's release; then the thirty go in one statement. After a landlord's
// write, each read gets its own landlord's data version as it is after
// the write (its statement began after the read was asked for), the
// first request's cancellation fails no other read, and a read whose
// request ends while it waits leaves the queue at once. After a key's
// revocation, no read's kept lookup holds (PostgreSQL only: SQLite keeps
// no lookup to check).
func TestVersionReadsShareStatements(t *testing.T) {
	t.Parallel()
	e := storetest.Postgres(t)
	ctx := t.Context()
	f := storetest.NewFixture(t, e.DB, rental.PlanPro)
	sec := storetest.Secret(t)
	type linked struct {
		landlordID, fingerprint, keyID string
	}
	var keys []linked
	for range 3 {
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		fp := sec.Fingerprint(f.Key(t, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID}))
		keys = append(keys, linked{landlordID: acct.LandlordID, fingerprint: fp})
	}
	for i, k := range keys { // kept once every key is made
		o, err := e.DB.LookupKey(ctx, k.fingerprint, "", e.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		keys[i].keyID = o.Key.ID
	}

	const n = 32
	type result struct {
		version string
		err     error
	}
	// round reads n tags while the table is locked, runs change in the
	// transaction that holds the lock, and releases it.
	round := func(change string, args ...any) []result {
		t.Helper()
		lock, err := e.DB.WritePool().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer lock.Rollback()
		if _, err := lock.ExecContext(ctx, `LOCK TABLE access_version IN ACCESS EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		reads0, statements0, _ := e.DB.VersionReads()
		results := make([]result, n)
		var wg sync.WaitGroup
		read := func(i int, ctx context.Context) {
			k := keys[i%len(keys)]
			wg.Go(func() {
				e.DB.ServeKey(k.fingerprint, "", e.Clock.Now(), false, func(run *store.KeyRun) bool {
					if !run.Kept() {
						results[i].err = fmt.Errorf("read %d not on a kept lookup", i)
						return true
					}
					results[i].version, results[i].err = run.DataVersion(ctx, e.DB.ReadChecking(run.Check()), k.landlordID)
					return true
				})
			})
		}
		first, cancel := context.WithCancel(ctx)
		read(0, first)
		read(1, ctx)
		waitFor(t, "two statements on the lock", func() bool {
			var blocked int
			lock.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE relation = 'access_version'::regclass AND NOT granted`).Scan(&blocked)
			return blocked == 2
		})
		for i := 2; i < n; i++ {
			read(i, ctx)
		}
		waitFor(t, "the others waiting", func() bool { _, _, waiting := e.DB.VersionReads(); return waiting == n-2 })
		// One more read, whose request ends while it waits: it leaves at
		// once, and the others wait on.
		gone, leave := context.WithCancel(ctx)
		left := make(chan error, 1)
		go e.DB.ServeKey(keys[0].fingerprint, "", e.Clock.Now(), false, func(run *store.KeyRun) bool {
			_, err := run.DataVersion(gone, e.DB.ReadChecking(run.Check()), keys[0].landlordID)
			left <- err
			return true
		})
		waitFor(t, "the last read waiting", func() bool { _, _, waiting := e.DB.VersionReads(); return waiting == n-1 })
		leave()
		select {
		case err := <-left:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a read whose request ended: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a read whose request ended still waits")
		}
		if _, _, waiting := e.DB.VersionReads(); waiting != n-2 {
			t.Fatalf("%d reads wait, want %d", waiting, n-2)
		}
		cancel()
		if _, err := lock.ExecContext(ctx, change, args...); err != nil {
			t.Fatal(err)
		}
		if err := lock.Commit(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		reads, statements, _ := e.DB.VersionReads()
		if reads-reads0 != n+1 || statements-statements0 != 3 {
			t.Fatalf("%d reads (one left) in %d statements, want %d in 3", reads-reads0, statements-statements0, n+1)
		}
		return results
	}

	for i, r := range round(`UPDATE landlords SET data_version = data_version + 1 WHERE id = $1`, keys[0].landlordID) {
		k := keys[i%len(keys)]
		want, err := e.DB.Read().DataVersion(ctx, k.landlordID)
		if err != nil || r.err != nil || r.version != want {
			t.Errorf("read %d: %q, %v; want %q (%v)", i, r.version, r.err, want, err)
		}
	}
	for i, r := range round(`UPDATE api_keys SET revoked_at = $1 WHERE id = $2`, e.Clock.Now().UnixMilli(), keys[2].keyID) {
		if r.err != store.ErrKeyChanged {
			t.Errorf("read %d after a revocation: %q, %v; want ErrKeyChanged", i, r.version, r.err)
		}
	}
}

// waitFor polls cond until it holds, failing the test after ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
