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

		race(t, e, jobs.OverdueArgs{}, func() (int, error) { return jobs.SweepOverdue(context.Background(), e.DB) })
		settle(t, "bills still issued", func() (int, error) {
			left, _, err := e.DB.Read().ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 100})
			return len(left), err
		})
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

// race runs a sweep from every side at once: two job clients (two
// processes' worth, each with its own connections) each given the job five
// times over, and four direct sweeps.
func race(t *testing.T, e storetest.Engine, args river.JobArgs, sweep func() (int, error)) {
	t.Helper()
	ctx := t.Context()
	for range 2 {
		db, err := store.Open(ctx, e.DSN, store.Options{Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		c, err := jobs.New(db, slog.New(slog.DiscardHandler), jobs.Options{OverdueEvery: 50 * time.Millisecond,
			ExpiryEvery: 50 * time.Millisecond, Secret: storetest.Secret(t)})
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
		for range 5 {
			if _, err := c.Insert(ctx, args, &river.InsertOpts{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := sweep(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// Pending payments expire 15 minutes after they were opened, each exactly
// once (one payment.failed), however many sweeps race.
func TestPaymentExpiryExactlyOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		acct := f.Sandbox(t, e.DB)
		issued, _, err := e.DB.Read().ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range issued {
			err := e.DB.InTx(ctx, func(tx *store.Tx) error {
				l, _, err := tx.CreatePaymentLink(ctx, acct, b.ID, "https://pay.example")
				if err != nil {
					return err
				}
				_, err = tx.OpenPayment(ctx, l.URL[len("https://pay.example/pay/"):])
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		e.Clock.Advance(14 * time.Minute)
		if n, _ := jobs.SweepExpiredPayments(ctx, e.DB); n != 0 {
			t.Fatalf("%d payments expired within their 15 minutes", n)
		}
		e.Clock.Advance(time.Minute + time.Second)
		race(t, e, jobs.ExpiryArgs{}, func() (int, error) { return jobs.SweepExpiredPayments(context.Background(), e.DB) })
		settle(t, "payments still pending", func() (int, error) {
			left, _, err := e.DB.Read().ListPayments(ctx, acct, store.PaymentFilter{Status: rental.PaymentPending}, store.Page{Limit: 100})
			return len(left), err
		})
		if n, err := e.DB.Read().CountEvents(ctx, acct, "payment.failed"); err != nil || n != len(issued) {
			t.Fatalf("%d payment.failed events for %d payments (%v)", n, len(issued), err)
		}
		expired, _, _ := e.DB.Read().ListPayments(ctx, acct, store.PaymentFilter{Status: rental.PaymentExpired}, store.Page{Limit: 100})
		if len(expired) != len(issued) || *expired[0].FailureReason != rental.FailureExpired {
			t.Fatalf("%d expired payments", len(expired))
		}
	})
}

// settle waits (up to 20 s) until left counts nothing, then lets the sweeps
// in flight finish.
func settle(t *testing.T, what string, left func() (int, error)) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		n, err := left()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s", n, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
}
