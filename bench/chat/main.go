// Command chat measures chat sends on one database: how many queued
// notifications per second the job client pushes to a LINE server on this
// machine (speaking LINE's push format), and how long a notification waits
// from its commit to LINE taking it. See bench/README.md.
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
	"strconv"
	"sync"
	"time"

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

// line is LINE's push endpoint: it records when each message (by its
// sequence number, the text) was first taken.
type line struct {
	mu    sync.Mutex
	first map[int]time.Time
	total int
	done  chan struct{}
	want  int
}

func (l *line) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var push struct {
		Messages []struct{ Text string }
	}
	json.NewDecoder(r.Body).Decode(&push)
	now := time.Now()
	seq, _ := strconv.Atoi(push.Messages[0].Text)
	l.mu.Lock()
	l.total++
	if _, seen := l.first[seq]; !seen {
		l.first[seq] = now
		if len(l.first) == l.want {
			close(l.done)
		}
	}
	l.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"sentMessages":[{"id":"%d","quoteToken":"q"}]}`, seq)
}

func (l *line) expect(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.first, l.total, l.want, l.done = map[int]time.Time{}, 0, n, make(chan struct{})
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
	rec := &line{}
	rec.expect(0)
	srv := httptest.NewServer(rec)
	defer srv.Close()
	lc, err := chat.NewClient("bench-token", srv.URL)
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

	commits := map[int]time.Time{}
	queue := func(from, n int) error {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := from; i < from+n; i++ {
				spec := store.NotifySpec{Type: rental.NotifyMessage, TenantID: tenant.ID, Text: strconv.Itoa(i)}
				if _, err := tx.CreateNotification(ctx, acct, spec, "http://127.0.0.1"); err != nil {
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

	rec.expect(burst)
	start := time.Now()
	for i := 0; i < burst; i += 500 {
		if err := queue(i, min(500, burst-i)); err != nil {
			return err
		}
	}
	committed := time.Since(start)
	select {
	case <-rec.done:
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("only %d of %d notifications arrived", len(rec.first), burst)
	}
	took := time.Since(start)
	fmt.Printf("  burst of %d notifications (queued in %v): pushed in %v = %.0f sends/s (%d pushes)\n",
		burst, committed.Round(time.Millisecond), took.Round(time.Millisecond), float64(burst)/took.Seconds(), rec.total)

	n := int(duration.Seconds() * float64(rate))
	rec.expect(n)
	clear(commits)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range n {
		<-tick.C
		if err := queue(burst+i, 1); err != nil {
			return err
		}
	}
	tick.Stop()
	select {
	case <-rec.done:
	case <-time.After(2 * time.Minute):
		return fmt.Errorf("only %d of %d notifications arrived", len(rec.first), n)
	}
	var delays []time.Duration
	rec.mu.Lock()
	for seq, at := range rec.first {
		delays = append(delays, at.Sub(commits[seq]))
	}
	rec.mu.Unlock()
	slices.SortFunc(delays, func(a, b time.Duration) int { return cmp.Compare(a, b) })
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))].Round(time.Millisecond) }
	fmt.Printf("  %d notifications at %d/s: commit to LINE taking it p50 %v, p99 %v, max %v\n", n, rate, q(0.5), q(0.99), q(1))
	return nil
}
