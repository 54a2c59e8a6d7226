package store_test

import (
	"testing"

	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkKeptDataVersion is the whole of a read answered from its tag
// on a key's kept lookup (PostgreSQL only: SQLite keeps no lookup to
// check), one after another on one connection: "carried" reads the data
// version with the check carried as a statement of its own in the same
// batch, as such a read did before; "joined" is KeyRun.DataVersion, which
// reads both in one statement.
//
//	RENTAPI_TEST_POSTGRES=... go test ./internal/store -run '^$' -bench KeptDataVersion
func BenchmarkKeptDataVersion(b *testing.B) {
	e := storetest.Postgres(b)
	ctx := b.Context()
	acct, fp := liveKey(b, e)
	if _, err := e.DB.LookupKey(ctx, fp, "", e.Clock.Now()); err != nil {
		b.Fatal(err)
	}
	check := func(b *testing.B, err error, kc *store.KeyCheck) {
		if err != nil || !kc.Confirm(ctx) {
			b.Fatalf("%v, held %v", err, kc.Confirm(ctx))
		}
	}
	b.Run("carried", func(b *testing.B) {
		for b.Loop() {
			_, kc := e.DB.KeptKey(fp, "", e.Clock.Now(), false)
			_, err := e.DB.ReadChecking(kc).DataVersion(ctx, acct.LandlordID)
			check(b, err, kc)
		}
	})
	b.Run("joined", func(b *testing.B) {
		for b.Loop() {
			e.DB.ServeKey(fp, "", e.Clock.Now(), false, func(k *store.KeyRun) bool {
				_, err := k.DataVersion(ctx, e.DB.ReadChecking(k.Check()), acct.LandlordID)
				check(b, err, k.Check())
				return true
			})
		}
	})
}
