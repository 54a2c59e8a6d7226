package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkListEvents is GET /v1/events?limit=100 over a real server and
// database, each event a payment with its payment_url as the payment
// events carry it: the worst case of reading events whose data is stored
// sealed because it holds a payment link's URL (see store's sealCopy).
func BenchmarkListEvents(b *testing.B) {
	for _, engine := range []struct {
		name string
		open func(testing.TB) storetest.Engine
	}{{"sqlite", storetest.SQLite}, {"postgres", storetest.Postgres}} {
		b.Run(engine.name, func(b *testing.B) {
			e := engine.open(b)
			ctx := context.Background()
			sec := storetest.Secret(b)
			hs := httptest.NewUnstartedServer(nil)
			b.Cleanup(hs.Close)
			base := "http://" + hs.Listener.Addr().String()
			srv, err := api.NewServer(api.Config{DB: e.DB, Secret: sec, PublicURL: base, NoRateLimits: true})
			if err != nil {
				b.Fatal(err)
			}
			hs.Config.Handler = srv
			hs.Start()
			f := storetest.NewFixture(b, e.DB, rental.PlanEnterprise)
			key := f.Key(b, e.DB, sec, store.NewKey{Mode: rental.ModeTest})
			acct := f.Sandbox(b, e.DB)
			err = e.DB.InTx(ctx, func(tx *store.Tx) error {
				bills, _, err := tx.ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 1})
				if err != nil || len(bills) == 0 {
					b.Fatalf("no issued bill in the sandbox: %v", err)
				}
				l, _, err := tx.CreatePaymentLink(ctx, acct, bills[0].ID, rental.NewPaymentPage(base))
				if err != nil {
					return err
				}
				co, err := tx.OpenPayment(ctx, l.URL[strings.LastIndex(l.URL, "/")+1:])
				if err != nil {
					return err
				}
				for range 99 {
					if err := tx.RecordEvent(ctx, acct, "payment.pending", co.Payment); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			get := func() []byte {
				r, _ := http.NewRequest("GET", hs.URL+"/v1/events?limit=100", nil)
				r.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(r)
				if err != nil {
					b.Fatal(err)
				}
				defer resp.Body.Close()
				body, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%d %s", resp.StatusCode, body)
				}
				return body
			}
			if n := strings.Count(string(get()), `"payment_url":"`+base+`/pay/`); n != 100 {
				b.Fatalf("%d events with the URL, want 100", n)
			}
			for b.Loop() {
				get()
			}
		})
	}
}
