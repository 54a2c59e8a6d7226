// Command chat measures chat sends on one database: how many queued
// notifications per second the job client pushes to a LINE server on this
// machine (speaking LINE's push format), and how long a notification waits
// from its commit to LINE taking it. See bench/README.md.
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
	"strconv"
	"time"

	"rentapi/bench/flow"
	"rentapi/internal/chat"
	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

func main() {
	dsn := flag.String("db", "", "sqlite:PATH or postgres:// URL of an empty database")
	burst := flag.Int("burst", 2000, "notifications queued at once, for the throughput run")
	rate := flag.Int("rate", 50, "notifications per second, for the latency run")
	duration := flag.Duration("duration", 10*time.Second, "length of the latency run")
	workers := flag.Int("workers", 20, "pushes in flight at once")
	flag.Parse()
	if err := run(*dsn, *burst, *rate, *duration, *workers); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

// line is LINE's push endpoint: it takes every push, and notes each
// notification's first arrival by the sequence number in its text.
type line struct{ *flow.Arrivals }

func (l line) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var push struct {
		Messages []struct{ Text string }
	}
	json.NewDecoder(r.Body).Decode(&push)
	seq := 0
	if len(push.Messages) > 0 {
		seq, _ = strconv.Atoi(push.Messages[0].Text)
	}
	l.Arrive(seq)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"sentMessages":[{"id":"%d","quoteToken":"q"}]}`, seq)
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
	var tenant *rental.Tenant
	err = db.InTx(ctx, func(tx *store.Tx) error {
		dev, err := tx.CreateDeveloper(ctx, "Bench", rental.PlanEnterprise)
		if err != nil {
			return err
		}
		app, err := tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: dev.ID, Name: "Bench", Company: "Bench", Scopes: rental.AllScopes})
		if err != nil {
			return err
		}
		landlord, err := tx.CreateLandlord(ctx, "Bench landlord", rental.LandlordStandard)
		if err != nil {
			return err
		}
		if acct, err = tx.LinkAccount(ctx, app.ID, landlord, rental.AllScopes); err != nil {
			return err
		}
		p, err := rental.NewProperty(rental.PropertyChange{Name: rental.Of("Bench"), Address: rental.Of("1 Bench Road, Bangkok"),
			ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800), DueDay: rental.Of[int64](5)})
		if err != nil {
			return err
		}
		prop, err := tx.CreateProperty(ctx, acct, p)
		if err != nil {
			return err
		}
		r, err := rental.NewRoom(prop.ID, rental.RoomChange{Number: rental.Of("1"), MonthlyRent: rental.Of[int64](350000)})
		if err != nil {
			return err
		}
		room, err := tx.CreateRoom(ctx, acct, r)
		if err != nil {
			return err
		}
		t, err := rental.NewTenant(rental.TenantChange{Name: rental.Of("Bench Tenant"), Phone: rental.Of("0812345678")}, rental.Time{Time: tx.Now})
		if err != nil {
			return err
		}
		tenant, err = tx.MoveIn(ctx, acct, room.ID, t)
		return err
	})
	if err != nil {
		return err
	}
	// Registered as the LINE webhook would register the tenant.
	if _, err := db.WritePool().ExecContext(ctx, `UPDATE tenants SET chat_registered = TRUE, line_user_id = 'Ubench' WHERE id = $1`, tenant.ID); err != nil {
		return err
	}
	rec := flow.NewArrivals()
	srv := httptest.NewServer(line{rec})
	defer srv.Close()
	lc, err := chat.NewClient("bench-token", srv.URL, srv.URL)
	if err != nil {
		return err
	}
	client, err := jobs.New(db, slog.New(slog.DiscardHandler), jobs.Options{Secret: sec, LINE: lc, ChatWorkers: workers})
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer client.Stop(context.WithoutCancel(ctx))

	// queue commits one message notification per sequence number, in one
	// transaction.
	queue := func(from, n int) error {
		return db.InTx(ctx, func(tx *store.Tx) error {
			for i := from; i < from+n; i++ {
				spec := store.NotifySpec{Type: rental.NotifyMessage, TenantID: tenant.ID, Text: strconv.Itoa(i)}
				if _, err := tx.CreateNotification(ctx, acct, spec, rental.NewPaymentPage("http://127.0.0.1")); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return flow.Run(rec, queue, burst, rate, duration, flow.Words{Items: "notifications", PerSecond: "sends", Requests: "pushes", Arrival: "LINE taking it"})
}
