// Command baseline is the yardstick for the API benchmarks: a bare net/http
// server that answers every request with the bytes of a file, so a run can
// show how much of a request's time is the service's own work. With -work
// it also spends a fixed amount of CPU on each request, a stand-in for a
// service of that cost; with -postgres it first makes one round trip to
// PostgreSQL, a stand-in for a service that asks its database once a
// request (bench/floor.sh).
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	file := flag.String("body", "", "file whose bytes every response carries")
	work := flag.Duration("work", 0, "CPU each request spends before answering, as measured on an idle machine at start-up")
	debug := flag.String("debug-addr", "", "address of a listener for Go's profiler (/debug/pprof/), off when empty")
	pg := flag.String("postgres", "", "DSN of a PostgreSQL that each request first asks one statement of, over a pool of -conns")
	conns := flag.Int("conns", 10, "PostgreSQL connections (rentapi's own pool is 10)")
	flag.Parse()
	if *debug != "" {
		go func() {
			err := http.ListenAndServe(*debug, nil) // net/http/pprof's handlers
			fmt.Fprintln(os.Stderr, "baseline: debug listener:", err)
		}()
	}
	body, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(2)
	}
	units := workUnits(*work)
	var pool *pgxpool.Pool
	if *pg != "" {
		if pool, err = roundTrips(*pg, *conns); err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(2)
		}
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pool != nil {
			// The least a statement can be: one parameter, one row, on a
			// prepared statement (pgx's default), one round trip.
			var n int64
			if err := pool.QueryRow(r.Context(), "SELECT $1::bigint", int64(len(body))).Scan(&n); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		if units > 0 {
			// The hash is sent so that the work cannot be optimised away.
			w.Header().Set("Work", fmt.Sprintf("%x", spend(units)))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
}

// roundTrips opens a pool of conns connections to dsn, all made now so
// that no request waits for a connection to open.
func roundTrips(dsn string, conns int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns, cfg.MinConns = int32(conns), int32(conns)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for pool.Stat().TotalConns() < int32(conns) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%d PostgreSQL connections: %w", conns, ctx.Err())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return pool, pool.Ping(ctx)
}

// workUnits is how many units of spend take d, timed now: the fastest of
// five probes, the one least disturbed by the rest of the machine. A fixed
// count, not a deadline, so that a request costs the same CPU however long
// it waits for a core: the cost of a service is work, not time.
func workUnits(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	const probe = 20_000
	fastest := time.Duration(1<<63 - 1)
	for range 5 {
		start := time.Now()
		spend(probe)
		fastest = min(fastest, max(time.Since(start), 1))
	}
	return int(probe * d / fastest)
}

// spend hashes a 32-byte block n times, each round the last one's hash.
func spend(n int) [sha256.Size]byte {
	var h [sha256.Size]byte
	for range n {
		h = sha256.Sum256(h[:])
	}
	return h
}
