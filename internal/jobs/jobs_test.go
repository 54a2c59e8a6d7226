package jobs_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Issued bills turn overdue at 00:00 Thailand time after their due date,
// exactly once each, while two job clients (two processes' worth, each with
// its own connections) and direct sweeps all run at once.
func TestOverdueExactlyOnce(t *testing.T) {
	t.Parallel()
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

		racers := race(t, e, store.OverdueArgs{}, func() (int, error) { return jobs.SweepOverdue(context.Background(), e.DB) })
		quiesce(t, racers, store.OverdueArgs{}.Kind())
		if left, _, err := e.DB.Read().ListBills(ctx, acct, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 100}); err != nil || len(left) != 0 {
			t.Fatalf("%d bills still issued (%v)", len(left), err)
		}
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

// noRescue is a RescueAfter for job clients on a test clock. River's rescuer
// measures how long a job has run against the wall clock, but River starts
// jobs at the test clock's time, which lags the wall clock by days: under a
// shorter RescueAfter every job running when the rescuer looks is taken as
// lost and run again.
const noRescue = 100 * 365 * 24 * time.Hour

// racer is a job client in a race, with the stream of its jobs' outcomes.
type racer struct {
	c      *jobs.Client
	events <-chan *river.Event
}

// race runs a sweep from every side at once: two job clients (two
// processes' worth, each with its own connections) each given the job five
// times over besides their periodic runs, and four direct sweeps. It
// returns when the direct sweeps are done, with the clients still running.
func race(t *testing.T, e storetest.Engine, args river.JobArgs, sweep func() (int, error)) []racer {
	t.Helper()
	ctx := t.Context()
	var racers []racer
	for range 2 {
		db, err := store.Open(ctx, e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		c, err := jobs.New(db, slog.New(slog.DiscardHandler), jobs.Options{OverdueEvery: 50 * time.Millisecond,
			ExpiryEvery: 50 * time.Millisecond, Secret: storetest.Secret(t), RescueAfter: noRescue})
		if err != nil {
			t.Fatal(err)
		}
		events, _ := c.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stop, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c.Stop(stop)
		})
		racers = append(racers, racer{c, events})
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
	return racers
}

// quiesce waits for the race's jobs themselves rather than for a while:
// the clients queue no more periodic sweeps, River runs every sweep of the
// kind left in the queue, and stopping the clients waits for any they
// fetched meanwhile. After it no sweep can run, so a count taken then is
// final, and a duplicate made late would be in it. A sweep that failed
// fails the test, and so does a race in which the queued jobs did not run.
func quiesce(t *testing.T, racers []racer, kind string) {
	t.Helper()
	ctx := t.Context()
	for _, r := range racers {
		r.c.PeriodicJobs().Clear()
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		res, err := racers[0].c.JobList(ctx, river.NewJobListParams().Kinds(kind).First(1).States(rivertype.JobStateAvailable,
			rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Jobs) == 0 {
			break
		}
		if j := res.Jobs[0]; j.State == rivertype.JobStateRetryable || time.Now().After(deadline) {
			t.Fatalf("a %s job is still %s: %v", kind, j.State, j.Errors)
		}
	}
	completed := 0
	for _, r := range racers {
		stop, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := r.c.Stop(stop)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for more := true; more; {
			select {
			case ev, ok := <-r.events:
				switch {
				case !ok:
					more = false
				case ev.Job.Kind != kind:
				case ev.Kind == river.EventKindJobFailed:
					t.Fatalf("a %s job failed: %v", kind, ev.Job.Errors)
				default:
					completed++
				}
			default:
				more = false
			}
		}
	}
	if completed < 10 {
		t.Fatalf("%d %s jobs completed; the race queued 10", completed, kind)
	}
}

// Pending payments expire 15 minutes after they were opened, each exactly
// once (one payment.failed), however many sweeps race.
func TestPaymentExpiryExactlyOnce(t *testing.T) {
	t.Parallel()
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
				l, _, err := tx.CreatePaymentLink(ctx, acct, b.ID, rental.NewPaymentPage("https://pay.example"))
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
		racers := race(t, e, store.ExpiryArgs{}, func() (int, error) { return jobs.SweepExpiredPayments(context.Background(), e.DB) })
		quiesce(t, racers, store.ExpiryArgs{}.Kind())
		if left, _, err := e.DB.Read().ListPayments(ctx, acct, store.PaymentFilter{Status: rental.PaymentPending}, store.Page{Limit: 100}); err != nil || len(left) != 0 {
			t.Fatalf("%d payments still pending (%v)", len(left), err)
		}
		if n, err := e.DB.Read().CountEvents(ctx, acct, "payment.failed"); err != nil || n != len(issued) {
			t.Fatalf("%d payment.failed events for %d payments (%v)", n, len(issued), err)
		}
		expired, _, _ := e.DB.Read().ListPayments(ctx, acct, store.PaymentFilter{Status: rental.PaymentExpired}, store.Page{Limit: 100})
		if len(expired) != len(issued) || *expired[0].FailureReason != rental.FailureExpired {
			t.Fatalf("%d expired payments", len(expired))
		}
	})
}
