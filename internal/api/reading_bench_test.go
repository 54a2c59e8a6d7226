package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkReadingsMonth times a 500-room property's readings of a month
// over HTTP both ways, one after the other in the same process: 500
// POST /v1/meter-readings, one at a time, then the next month as one POST
// /v1/meter-readings/batch, billed by one POST
// /v1/properties/{property_id}/bills. It reports each one's wall time and
// how many times faster the batch was; nothing is asserted.
//
//	go test ./internal/api -run '^$' -bench ReadingsMonth -benchtime 1x
//	RENTAPI_TEST_POSTGRES=... go test ./internal/api -run '^$' -bench ReadingsMonth -benchtime 1x
func BenchmarkReadingsMonth(b *testing.B) { benchEach(b, benchReadings) }

func benchReadings(b *testing.B, e storetest.Engine) {
	const rooms = 500
	hs, sec := benchServer(b, e, api.Config{})
	f := storetest.NewFixture(b, e.DB, rental.PlanEnterprise)
	acct := f.LinkLandlord(b, e.DB, rental.LandlordPro, f.App.Scopes)
	key := f.Key(b, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
	post := func(path string, body any, status int) []byte { return benchPostAs(b, hs.URL, key, path, body, status) }
	id := dataID
	prop := id(post("/v1/properties", map[string]any{"name": "Baan Roi", "electricity_rate": 800, "water_rate": 1800, "due_day": 5}, http.StatusCreated))
	ids := make([]string, rooms)
	for i := range ids {
		ids[i] = id(post("/v1/properties/"+prop+"/rooms", map[string]any{"number": fmt.Sprint(100 + i), "monthly_rent": 350000}, http.StatusCreated))
	}
	month := func(n int) string { return fmt.Sprintf("%04d-%02d", 2026+n/12, n%12+1) }
	body := func(room, month string, n int) map[string]any {
		return map[string]any{"room_id": room, "month": month,
			"electricity": map[string]any{"current": 100 * (n + 1)}, "water": map[string]any{"current": 5 * (n + 1)}}
	}
	var singles, batch, run time.Duration
	b.ResetTimer()
	for n := range b.N {
		m := month(2 * n)
		start := time.Now()
		for _, room := range ids {
			post("/v1/meter-readings", body(room, m, 2*n), http.StatusCreated)
		}
		singles += time.Since(start)

		m = month(2*n + 1)
		items := make([]any, rooms)
		for i, room := range ids {
			items[i] = body(room, m, 2*n+1)
		}
		start = time.Now()
		res := post("/v1/meter-readings/batch", map[string]any{"readings": items}, http.StatusOK)
		batch += time.Since(start)
		if c := bytes.Count(res, []byte(`"status":201`)); c != rooms {
			b.Fatalf("%d of %d items recorded", c, rooms)
		}
		start = time.Now()
		post("/v1/properties/"+prop+"/bills", map[string]any{"month": m}, http.StatusOK)
		run += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(singles.Milliseconds())/float64(b.N), "singles-ms")
	b.ReportMetric(float64(batch.Milliseconds())/float64(b.N), "batch-ms")
	b.ReportMetric(float64(singles)/float64(batch), "x-faster")
	b.ReportMetric(float64(run.Milliseconds())/float64(b.N), "bill-run-ms")
}

// BenchmarkPropertyMonth times the fast way of a 500-room property's
// month over HTTP, as bench/month.sh's (b) does: one POST
// /v1/meter-readings/batch and one POST /v1/properties/{property_id}/bills,
// each op on a property of its own whose rooms and tenants were made
// beforehand, off the clock. It reports each request's wall time; with
// -cpuprofile, each request's CPU is under its "route" label (benchServer):
//
//	go test ./internal/api -run '^$' -bench PropertyMonth/sqlite -benchtime 20x -cpuprofile /tmp/cpu.prof -o /tmp/api.test
//	go tool pprof -tagfocus 'route=POST /v1/meter-readings/batch' -top /tmp/api.test /tmp/cpu.prof
func BenchmarkPropertyMonth(b *testing.B) { benchEach(b, benchPropertyMonth) }

func benchPropertyMonth(b *testing.B, e storetest.Engine) {
	const rooms = 500
	hs, sec := benchServer(b, e, api.Config{})
	f := storetest.NewFixture(b, e.DB, rental.PlanEnterprise)
	// A pro landlord holds 20,000 rooms: 39 ops' properties each.
	var key string
	post := func(path string, body any, status int) []byte { return benchPostAs(b, hs.URL, key, path, body, status) }
	id := dataID
	var batch, run time.Duration
	for n := 0; b.Loop(); n++ {
		b.StopTimer()
		if n%39 == 0 {
			acct := f.LinkLandlord(b, e.DB, rental.LandlordPro, f.App.Scopes)
			key = f.Key(b, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
		}
		prop := id(post("/v1/properties", map[string]any{"name": "Baan Roi", "electricity_rate": 800, "water_rate": 1800, "due_day": 5}, http.StatusCreated))
		items := make([]any, rooms)
		for i := range items {
			room := id(post("/v1/properties/"+prop+"/rooms", map[string]any{"number": fmt.Sprint(100 + i), "monthly_rent": 350000}, http.StatusCreated))
			post("/v1/rooms/"+room+"/tenant", map[string]any{"name": fmt.Sprint("Tenant ", i), "phone": fmt.Sprintf("081%07d", i)}, http.StatusCreated)
			items[i] = map[string]any{"room_id": room, "month": "2026-10",
				"electricity": map[string]any{"previous": 1000, "current": 1100 + i%50}, "water": map[string]any{"previous": 100, "current": 110 + i%5}}
		}
		b.StartTimer()
		start := time.Now()
		res := post("/v1/meter-readings/batch", map[string]any{"readings": items}, http.StatusOK)
		batch += time.Since(start)
		if c := bytes.Count(res, []byte(`"status":201`)); c != rooms {
			b.Fatalf("%d of %d items recorded", c, rooms)
		}
		start = time.Now()
		res = post("/v1/properties/"+prop+"/bills", map[string]any{"month": "2026-10"}, http.StatusOK)
		run += time.Since(start)
		var out struct{ Data struct{ Created []string } }
		if err := json.Unmarshal(res, &out); err != nil || len(out.Data.Created) != rooms {
			b.Fatalf("the bill run made %d bills of %d: %s", len(out.Data.Created), rooms, res)
		}
	}
	b.ReportMetric(float64(batch.Microseconds())/1000/float64(b.N), "batch-ms")
	b.ReportMetric(float64(run.Microseconds())/1000/float64(b.N), "bill-run-ms")
}
