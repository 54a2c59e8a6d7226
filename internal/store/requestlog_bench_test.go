package store_test

import (
	"fmt"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkLogRequests writes the request log's batches of 500 (the
// server's, see internal/api's requestLogBatch) from one application and
// key, as a paced read benchmark makes them: the write a read costs after
// its answer, in batches.
//
//	go test ./internal/store -run '^$' -bench LogRequests -benchmem
func BenchmarkLogRequests(b *testing.B) {
	engines := map[string]func(testing.TB) storetest.Engine{"sqlite": storetest.SQLite, "postgres": storetest.Postgres}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			e := engines[name](b)
			f := storetest.NewFixture(b, e.DB, rental.PlanDeveloper)
			batch := make([]store.LoggedRequest, 500)
			seq := int64(0)
			for b.Loop() {
				b.StopTimer()
				for i := range batch {
					seq++
					batch[i] = store.LoggedRequest{ID: fmt.Sprintf("req_%024d", seq), Seq: seq, ApplicationID: f.App.ID, Mode: "live",
						AccountID: "acct_0123456789abcdef01234567", Method: "GET", Path: "/v1/bills", Status: 200,
						Latency: 300 * time.Microsecond, KeyLast4: "abcd", At: e.DB.Now()}
				}
				b.StartTimer()
				if err := e.DB.LogRequests(b.Context(), batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
