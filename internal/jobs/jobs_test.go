package jobs_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Issued bills turn overdue at 00:00 Thailand time after their due date,
// exactly once each, while two job clients (two processes' worth, each with
// its own connections) and direct sweeps all run at once.
func TestOverdueExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		acct := f.Sandbox(t, e.DB)
		issued, _, err := e.DB.Read().ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 100})
		if err != nil || len(issued) != 5 {
			t.Fatalf("%d issued sample bills (%v)", len(issued), err)
		}
		// The sample bills of November fall due on 5 and 10 December.
		if n, _ := jobs.SweepOverdue(ctx, e.DB); n != 0 {
			t.Fatalf("%d bills overdue before their due date", n)
		}
		// 2026-12-05 23:59 in Bangkok: due today, not yet overdue.
		e.Clock.Advance(time.Date(2026, 12, 5, 16, 59, 0, 0, time.UTC).Sub(e.Clock.Now()))
		if n, _ := jobs.SweepOverdue(ctx, e.DB); n != 0 {
			t.Fatalf("%d bills overdue on their due date", n)
		}
		// 2026-12-11 00:00 in Bangkok: every one is overdue.
		e.Clock.Advance(time.Date(2026, 12, 10, 17, 0, 0, 0, time.UTC).Sub(e.Clock.Now()))

		var clients []*jobs.Client
		for range 2 {
			db, err := store.Open(ctx, e.DSN, store.Options{Now: e.Clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			c, err := jobs.New(db, slog.New(slog.DiscardHandler), jobs.Options{OverdueEvery: 50 * time.Millisecond, Secret: storetest.Secret(t)})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				c.Stop(stop)
			})
			clients = append(clients, c)
		}
		for _, c := range clients {
			for range 5 {
				if _, err := c.Insert(ctx, jobs.OverdueArgs{}, &river.InsertOpts{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if _, err := jobs.SweepOverdue(context.Background(), e.DB); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		deadline := time.Now().Add(20 * time.Second)
		for {
			left, _, err := e.DB.Read().ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d bills still issued", len(left))
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond) // let the clients' sweeps in flight finish
		if n, err := e.DB.Read().CountEvents(ctx, acct, "bill.overdue"); err != nil || n != 5 {
			t.Fatalf("%d bill.overdue events for 5 bills (%v)", n, err)
		}
		overdue, _, _ := e.DB.Read().ListBills(ctx, acct, store.BillFilter{Status: rental.BillOverdue}, store.Page{Limit: 100})
		for _, b := range overdue {
			if b.OverdueAt == nil {
				t.Fatalf("bill %s has no overdue_at", b.ID)
			}
		}
		if len(overdue) != 5 {
			t.Fatalf("%d overdue bills", len(overdue))
		}
	})
}
