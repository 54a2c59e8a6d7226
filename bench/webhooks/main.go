// Command webhooks measures webhook delivery on one database: how many
// deliveries per second the job client makes to a receiver on this machine,
// and how long an event waits from its commit to its first delivery
// attempt. See bench/README.md.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"rentapi/bench/flow"
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
	workers := flag.Int("workers", 200, "deliveries in flight at once")
	flag.Parse()
	if err := run(*dsn, *burst, *rate, *duration, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "webhooks:", err)
		os.Exit(1)
	}
}

// receiver is the developer's webhook endpoint: it notes each event's
// first arrival by the sequence number the benchmark put in it.
type receiver struct{ *flow.Arrivals }

func (rc receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Data struct {
			Object struct{ Seq int }
		}
	}
	json.NewDecoder(r.Body).Decode(&ev)
	rc.Arrive(ev.Data.Object.Seq)
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
	rec := flow.NewArrivals()
	srv := httptest.NewServer(receiver{rec})
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

	// event commits one event per sequence number, in one transaction.
	event := func(from, n int) error {
		return db.InTx(ctx, func(tx *store.Tx) error {
			for i := from; i < from+n; i++ {
				obj := map[string]any{"id": "prop_bench", "object": "property", "seq": i}
				if err := tx.RecordEvent(ctx, acct, "property.updated", obj); err != nil {
					return err
				}
			}
			return nil
		})
	}
	words := flow.Words{Items: "events", PerSecond: "deliveries", Requests: "requests", Arrival: "first delivery attempt"}
	if err := flow.Run(rec, event, burst, rate, duration, words); err != nil {
		return err
	}
	hold := func() error { return client.QueuePause(ctx, store.DeliveryQueue, nil) }
	release := func() error { return client.QueueResume(ctx, store.DeliveryQueue, nil) }
	return flow.Drain(rec, event, hold, release, burst+rate*int(duration.Seconds()), burst, words)
}
