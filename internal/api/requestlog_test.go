package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkRequestLog: GET /v1/bills?limit=20 from concurrent clients,
// with the portal's request log and without it (api.Config.NoRequestLog),
// over the same database in the same run; the log is written after the
// answers, in batches, so the two should be within noise.
//
//	go test ./internal/api -run '^$' -bench RequestLog -count 6 -benchtime 3s
func BenchmarkRequestLog(b *testing.B) { benchEach(b, benchRequestLog) }

func benchRequestLog(b *testing.B, e storetest.Engine) {
	f, acct := billsPage(b, e)
	for _, c := range []struct {
		name string
		cfg  api.Config
	}{{"log", api.Config{}}, {"nolog", api.Config{NoRequestLog: true}}} {
		// The server is made by the side that runs, when it first runs
		// (the parent's cleanup ends it): a process measuring one side
		// then holds one server, not an idle second one made before or
		// after it.
		var hs *httptest.Server
		var key string
		parent := b
		b.Run(c.name, func(b *testing.B) {
			if hs == nil {
				var sec *secret.Secret
				hs, sec = benchServer(parent, e, c.cfg)
				key = f.Key(parent, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
				b.ResetTimer()
			}
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					r, _ := http.NewRequest(http.MethodGet, hs.URL+"/v1/bills?limit=20", nil)
					r.Header.Set("Authorization", "Bearer "+key)
					res, err := http.DefaultClient.Do(r)
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != http.StatusOK {
						b.Errorf("status %d", res.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
