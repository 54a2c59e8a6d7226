// Command webhooks measures webhook delivery on one database: how many
// deliveries per second the job client makes to a receiver on this machine,
// and how long an event waits from its commit to its first delivery
// attempt. See bench/README.md.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

func main() {
	dsn := flag.String("db", "", "sqlite:PATH or postgres:// URL of an empty database")
	burst := flag.Int("burst", 5000, "events committed at once, for the throughput run")
	rate := flag.Int("rate", 50, "events per second, for the latency run")
	duration := flag.Duration("duration", 10*time.Second, "length of the latency run")
	workers := flag.Int("workers", 50, "deliveries in flight at once")
	flag.Parse()
	if err := run(*dsn, *burst, *rate, *duration, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

// arrivals records when each event (by its sequence number) first arrived.
type arrivals struct {
	mu    sync.Mutex
	first map[int]time.Time
	total int
	done  chan struct{}
	want  int
}

func (a *arrivals) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Data struct {
			Object struct{ Seq int }
		}
	}
	json.NewDecoder(r.Body).Decode(&ev)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total++
	if _, seen := a.first[ev.Data.Object.Seq]; !seen {
		a.first[ev.Data.Object.Seq] = now
		if len(a.first) == a.want {
			close(a.done)
		}
	}
}

// expect resets the record for a run of n events.
func (a *arrivals) expect(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.first, a.total, a.want, a.done = map[int]time.Time{}, 0, n, make(chan struct{})
}

func run(dsn string, burst, rate int, duration time.Duration, workers int) error {
	ctx := context.Background()
	sec, err := secret.New("bench-secret-bench-secret-bench-secret-0123")
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	var acct *rental.Account
	var app *rental.Application
	err = db.InTx(ctx, func(tx *store.Tx) error {
		dev, err := tx.CreateDeveloper(ctx, "Bench", rental.PlanEnterprise)
		if err != nil {
			return err
		}
		if app, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: dev.ID, Name: "Bench", Company: "Bench", Scopes: rental.AllScopes}); err != nil {
			return err
		}
		acct, err = tx.GetAccount(ctx, app.ID, app.SandboxAccountID)
		return err
	})
	if err != nil {
		return err
	}
	rec := &arrivals{}
	rec.expect(0)
	srv := httptest.NewServer(rec)
	defer srv.Close()
	err = db.InTx(ctx, func(tx *store.Tx) error {
		url := srv.URL + "/hook"
		_, err := tx.CreateEndpoint(ctx, app, rental.ModeTest, rental.EndpointSpec{URL: &url, EnabledEvents: []string{"*"}}, sec)
		return err
	})
	if err != nil {
		return err
	}
	guard := webhook.Guard{AllowLoopback: true}
	client, err := jobs.New(db, slog.New(slog.DiscardHandler), jobs.Options{Secret: sec, Sender: webhook.NewSender(guard, nil), DeliveryWorkers: workers})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx))

	// event commits one event per sequence number, in batches of one transaction.
	commits := map[int]time.Time{}
	event := func(from, n int) error {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := from; i < from+n; i++ {
				obj := map[string]any{"id": "prop_bench", "object": "property", "seq": i}
				if err := tx.RecordEvent(ctx, acct, "property.updated", obj); err != nil {
					return err
				}
			}
			return nil
		})
		now := time.Now()
		for i := from; i < from+n; i++ {
			commits[i] = now
		}
		return err
	}

	// Throughput: a burst of events committed at once, delivered as fast as
	// the workers go.
	rec.expect(burst)
	start := time.Now()
	for i := 0; i < burst; i += 500 {
		if err := event(i, min(500, burst-i)); err != nil {
			return err
		}
	}
	committed := time.Since(start)
	select {
	case <-rec.done:
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("only %d of %d events arrived", len(rec.first), burst)
	}
	took := time.Since(start)
	fmt.Printf("  burst of %d events (committed in %v): delivered in %v = %.0f deliveries/s (%d requests)\n",
		burst, committed.Round(time.Millisecond), took.Round(time.Millisecond), float64(burst)/took.Seconds(), rec.total)

	// Latency: a steady rate of single-event transactions.
	n := int(duration.Seconds() * float64(rate))
	rec.expect(n)
	clear(commits)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range n {
		<-tick.C
		if err := event(burst+i, 1); err != nil {
			return err
		}
	}
	tick.Stop()
	select {
	case <-rec.done:
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("only %d of %d events arrived", len(rec.first), n)
	}
	var delays []time.Duration
	rec.mu.Lock()
	for seq, at := range rec.first {
		delays = append(delays, at.Sub(commits[seq]))
	}
	rec.mu.Unlock()
	slices.SortFunc(delays, func(a, b time.Duration) int { return cmp.Compare(a, b) })
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))].Round(time.Millisecond) }
	fmt.Printf("  %d events at %d/s: commit to first delivery attempt p50 %v, p99 %v, max %v\n", n, rate, q(0.5), q(0.99), q(1))
	return nil
}
