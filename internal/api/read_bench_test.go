package api_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkRead: GET /v1/bills?limit=20 served by the API's handler with no
// network in between, one request at a time, with the portal's request log
// on. Its B/op and allocs/op are what a read allocates in our code (the
// request log's batches included, net/http's reading and writing not): the
// collector runs once for every few thousand reads' worth, and each of its
// mark phases takes a share of the cores that lengthens the tail at half
// the maximum rate (issue 35).
//
//	go test ./internal/api -run '^$' -bench 'Read$' -benchmem -count 6
func BenchmarkRead(b *testing.B) { benchEach(b, benchRead) }

func benchRead(b *testing.B, e storetest.Engine) {
	f, acct := billsPage(b, e)
	hs, sec := benchServer(b, e, api.Config{})
	key := f.Key(b, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
	r := httptest.NewRequest(http.MethodGet, "/v1/bills?limit=20", nil)
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Authorization", "Bearer "+key)
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		clear(w.header)
		w.status = 0
		hs.Config.Handler.ServeHTTP(w, r)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
}

// discardWriter is a ResponseWriter that keeps only the status: what a
// benchmark of the handler's own allocations needs.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}
