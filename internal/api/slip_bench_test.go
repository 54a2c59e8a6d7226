package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/jobs"
	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/slip"
	"rentapi/internal/slip/sliptest"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkSlipsVerified measures slips verified per second end to end:
// each slip is filed over HTTP (POST /v1/bills/{id}/slips, a distinct QR
// text each), its job asks the fake EasySlip provider over HTTP, and the
// slip is settled with its payment (payment.paid, bill.updated,
// slip.verified) in the database. The clock stops when every slip of the
// run is verified. One landlord's slips settle one at a time (its writes
// are serialized), so this is the rate of one busy dorm.
//
//	go test ./internal/api -run '^$' -bench SlipsVerified -benchtime 400x
//	RENTAPI_TEST_POSTGRES=... go test ./internal/api -run '^$' -bench SlipsVerified -benchtime 400x
func BenchmarkSlipsVerified(b *testing.B) { benchEach(b, benchSlips) }

func benchSlips(b *testing.B, e storetest.Engine) {
	ctx := context.Background()
	prov := sliptest.New(b)
	prov.Set(sliptest.Settings{Mode: sliptest.Verified, Receiver: "xxx-xxx-5678", Amount: 1})
	hs, sec := benchServer(b, e, api.Config{SlipsLive: true})
	client, _ := slip.New(prov.URL, sliptest.Key)
	jc, err := jobs.New(e.DB, nil, jobs.Options{Secret: sec, Slips: client, RescueAfter: noRescue})
	if err != nil {
		b.Fatal(err)
	}
	if err := jc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		jc.Stop(stop)
	})

	f := storetest.NewFixture(b, e.DB, rental.PlanPro)
	acct := f.LinkLandlord(b, e.DB, rental.LandlordPro, f.App.Scopes)
	err = e.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SetPromptPay(ctx, acct.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}, "")
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	key := f.Key(b, e.DB, sec, store.NewKey{Mode: rental.ModeLive, AccountID: acct.ID})
	post := func(path string, body any) (int, map[string]any) {
		status, raw, err := benchPost(hs.URL, key, path, body)
		if err != nil {
			b.Error(err)
			return 0, nil
		}
		var out struct{ Data map[string]any }
		json.Unmarshal(raw, &out)
		return status, out.Data
	}
	_, prop := post("/v1/properties", map[string]any{"name": "Baan Suk", "electricity_rate": 800, "water_rate": 1800, "due_day": 5})
	_, room := post("/v1/properties/"+prop["id"].(string)+"/rooms", map[string]any{"number": "204", "monthly_rent": 350000})
	post("/v1/rooms/"+room["id"].(string)+"/tenant", map[string]any{"name": "Malee Sukjai", "phone": "0812345678"})
	post("/v1/meter-readings", map[string]any{"room_id": room["id"], "month": "2026-11",
		"electricity": map[string]any{"previous": 1000, "current": 1100}, "water": map[string]any{"previous": 50, "current": 55}})
	_, bill := post("/v1/bills", map[string]any{"room_id": room["id"], "month": "2026-11"})
	path := "/v1/bills/" + bill["id"].(string) + "/slips"

	verified := func() int {
		var n int
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*) FROM slips WHERE landlord_id = $1 AND status = $2`,
			acct.LandlordID, rental.SlipVerified).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	b.ResetTimer()
	start := time.Now()
	const posters = 8
	var wg sync.WaitGroup
	for w := range posters {
		wg.Go(func() {
			for i := w; i < b.N; i += posters {
				if status, _ := post(path, map[string]any{"qr_payload": fmt.Sprintf("bench-slip-%d", i)}); status != http.StatusAccepted {
					b.Errorf("slip %d: %d", i, status)
					return
				}
			}
		})
	}
	wg.Wait()
	for verified() < b.N && !b.Failed() {
		if time.Since(start) > 10*time.Minute {
			b.Fatalf("%d of %d slips verified after 10 minutes", verified(), b.N)
		}
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "slips/s")
	if n := verified(); n != b.N {
		b.Fatalf("%d verified of %d", n, b.N)
	}
}
