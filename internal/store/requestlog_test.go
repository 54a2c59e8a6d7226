package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// LogRequests writes a batch, every field as it was given, on both
// engines: text with quotes, backslashes, control characters and Thai as
// written; what is not UTF-8, and NUL, as U+FFFD (before, either cost
// PostgreSQL its whole batch); a thousand rows at once; an empty batch
// writes nothing.
func TestLogRequests(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		at := e.DB.Now().Truncate(time.Millisecond)
		odd := []store.LoggedRequest{
			{ID: `req_"quoted"\back`, Seq: 1, ApplicationID: f.App.ID, Mode: "test", AccountID: "", Method: "GET",
				Path: "/v1/properties/บ้านสุข\t\n\x01", Status: 200, Code: "", Latency: 1234 * time.Microsecond, KeyLast4: "ab\"c", At: at},
			{ID: "req_bad", Seq: 2, ApplicationID: f.App.ID, Mode: "live", AccountID: "acct_1", Method: "other",
				Path: "/v1/bills/\xff\xfe\x00x", Status: 404, Code: "resource_missing", Latency: time.Second, KeyLast4: "wxyz", At: at},
		}
		if err := e.DB.LogRequests(ctx, nil); err != nil {
			t.Fatalf("nothing to log: %v", err)
		}
		if err := e.DB.LogRequests(ctx, odd); err != nil {
			t.Fatal(err)
		}
		list, _, err := e.DB.Read().ListRequests(ctx, f.App.ID, store.RequestFilter{}, 10, at)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(odd)
		want[1].Path = "/v1/bills/\ufffd\ufffdx" // one for the two bytes that are not UTF-8, one for NUL
		slices.Reverse(want)                     // newest first: the same instant, the higher seq first
		if len(list) != len(want) {
			t.Fatalf("%d rows, want %d: %+v", len(list), len(want), list)
		}
		for i := range want {
			got := list[i]
			if !got.At.Equal(want[i].At) {
				t.Fatalf("row %d at %v, want %v", i, got.At, want[i].At)
			}
			got.At = want[i].At
			if got != want[i] {
				t.Fatalf("row %d:\n got %+v\nwant %+v", i, got, want[i])
			}
		}

		many := make([]store.LoggedRequest, 1000)
		for i := range many {
			many[i] = store.LoggedRequest{ID: fmt.Sprintf("req_%04d", i), Seq: int64(10 + i), ApplicationID: f.App.ID, Mode: "test",
				Method: "POST", Path: "/v1/meter-readings", Status: 201, Latency: time.Duration(i) * time.Microsecond, KeyLast4: "1234", At: at}
		}
		if err := e.DB.LogRequests(ctx, many); err != nil {
			t.Fatal(err)
		}
		var n, sum int64
		if err := e.DB.Reader().QueryRowContext(ctx, `SELECT count(*), sum(latency_us) FROM request_log WHERE application_id = $1`, f.App.ID).
			Scan(&n, &sum); err != nil {
			t.Fatal(err)
		}
		if n != 1002 || sum != 1234+1_000_000+999*1000/2 {
			t.Fatalf("%d rows, latencies %d; want 1002, %d", n, sum, 1234+1_000_000+999*1000/2)
		}
	})
}
