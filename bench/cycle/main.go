// Command cycle measures the monthly cycle's two hottest requests against a
// landlord with many bills: listing bills (GET /v1/bills?limit=100, on the
// first page and deep in the list) and recording readings (POST
// /v1/meter-readings, every request a new room and month). It seeds the
// landlord through the store's own methods, so the data is what the API
// would have made.
//
//	cycle -db sqlite:/tmp/b.db -secret-file /tmp/s -bills 100000 seed   # prints the live key
//	cycle -url http://127.0.0.1:8080 -key svc_live_... load
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

const monthsPerRoom = 100

func main() {
	dsn := flag.String("db", "", "database (seed)")
	secretFile := flag.String("secret-file", "", "server secret file (seed)")
	bills := flag.Int("bills", 1000, "bills to seed: rooms × 100 months")
	base := flag.String("url", "", "service URL (load)")
	key := flag.String("key", "", "live key (load)")
	duration := flag.Duration("duration", 10*time.Second, "length of each load run")
	conns := flag.Int("c", 16, "concurrent requests")
	flag.Parse()
	var err error
	switch flag.Arg(0) {
	case "seed":
		err = seed(*dsn, *secretFile, *bills)
	case "load":
		err = load(*base, *key, *duration, *conns)
	default:
		err = fmt.Errorf("usage: cycle [flags] seed|load")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cycle:", err)
		os.Exit(1)
	}
}

// seed makes a landlord on the pro plan, linked to the demo application,
// with bills/100 rooms over 20 properties, each with 100 months of
// readings and issued bills, and prints a live key bound to it.
func seed(dsn, secretFile string, bills int) error {
	ctx := context.Background()
	sec, _, err := secret.Load(secretFile)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	appID, err := db.Read().DemoApplication(ctx)
	if err != nil {
		return fmt.Errorf("run `rentapi serve` once on the database first: %w", err)
	}
	var acct *rental.Account
	err = db.InTx(ctx, func(tx *store.Tx) error {
		ll, err := tx.CreateLandlord(ctx, "Bench landlord", rental.LandlordPro)
		if err != nil {
			return err
		}
		acct, err = tx.LinkAccount(ctx, appID, ll, rental.AllScopes)
		return err
	})
	if err != nil {
		return err
	}
	text := rental.NewAPIKeySecret(rental.ModeLive)
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateAPIKey(ctx, store.NewKey{ApplicationID: appID, Name: "bench", Mode: rental.ModeLive, Scopes: rental.AllScopes,
			AccountID: acct.ID, Fingerprint: sec.Fingerprint(text), Prefix: rental.KeyVisiblePrefix(text)})
		return err
	})
	if err != nil {
		return err
	}
	rooms := max(1, bills/monthsPerRoom)
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)
	var props []string
	for i := range 20 {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			p, _ := rental.NewProperty(rental.PropertyChange{Name: rental.Of(fmt.Sprint("Bench ", i)), ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)})
			c, err := tx.CreateProperty(ctx, acct, p)
			if err == nil {
				props = append(props, c.ID)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	began := time.Now()
	for r := range rooms {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			room, err := rental.NewRoom(props[r%len(props)], rental.RoomChange{Number: rental.Of(fmt.Sprint("R", r)), MonthlyRent: rental.Of[int64](350_000)})
			if err != nil {
				return err
			}
			created, err := tx.CreateRoom(ctx, acct, room)
			if err != nil {
				return err
			}
			for m := range monthsPerRoom {
				month := start.AddDate(0, m, 0).Format("2006-01")
				in := store.ReadingInput{RoomID: created.ID, Month: month,
					Electricity: rental.PartInput{Set: true, Current: rental.Of(rental.Quantity((m + 1) * 120_500))},
					Water:       rental.PartInput{Set: true, Current: rental.Of(rental.Quantity((m + 1) * 5_000))}}
				if _, err := tx.CreateReading(ctx, acct, in); err != nil {
					return err
				}
				if _, err := tx.CreateBill(ctx, acct, created.ID, month, true); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if r%100 == 99 {
			fmt.Fprintf(os.Stderr, "seeded %d rooms (%d bills) in %s\n", r+1, (r+1)*monthsPerRoom, time.Since(began).Round(time.Second))
		}
	}
	fmt.Println(text)
	return nil
}

// result is one load run's figures.
type result struct {
	n        int
	errors   int
	duration time.Duration
	lat      []time.Duration
}

func (r result) String() string {
	slices.Sort(r.lat)
	pct := func(p float64) float64 {
		if len(r.lat) == 0 {
			return 0
		}
		return float64(r.lat[int(float64(len(r.lat)-1)*p)].Microseconds()) / 1000
	}
	return fmt.Sprintf("%8.0f req/s   p50 %7.2f ms   p99 %7.2f ms   (%d requests, %d errors)",
		float64(r.n)/r.duration.Seconds(), pct(0.50), pct(0.99), r.n, r.errors)
}

// run sends requests from conns workers for d; next builds each request.
func run(d time.Duration, conns int, next func(worker, i int) *http.Request, ok int) result {
	var mu sync.Mutex
	var res result
	var stop atomic.Bool
	var wg sync.WaitGroup
	began := time.Now()
	for w := range conns {
		wg.Go(func() {
			var lat []time.Duration
			errs := 0
			for i := 0; !stop.Load(); i++ {
				req := next(w, i)
				t0 := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				lat = append(lat, time.Since(t0))
				if err != nil || resp.StatusCode != ok {
					errs++
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			res.errors += errs
			mu.Unlock()
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	res.n, res.duration = len(res.lat), time.Since(began)
	return res
}

func get(base, key, path string) (map[string]any, error) {
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// load measures the first page and a page half way down the bill list, and
// then records readings for new months of the landlord's rooms.
func load(base, key string, d time.Duration, conns int) error {
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = conns
	// Walk half way down the list for a deep cursor.
	page, err := get(base, key, "/v1/bills?limit=100")
	if err != nil {
		return err
	}
	total := 0
	cursor := ""
	for total < 50_000 {
		pg := page["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		cursor = pg["next_cursor"].(string)
		total += 100
		if page, err = get(base, key, "/v1/bills?limit=100&cursor="+url.QueryEscape(cursor)); err != nil {
			return err
		}
	}
	req := func(path string) func(int, int) *http.Request {
		return func(int, int) *http.Request {
			r, _ := http.NewRequest("GET", base+path, nil)
			r.Header.Set("Authorization", "Bearer "+key)
			return r
		}
	}
	fmt.Printf("  GET /v1/bills?limit=100 (first page)      %s\n", run(d, conns, req("/v1/bills?limit=100"), 200))
	if cursor != "" {
		fmt.Printf("  GET /v1/bills?limit=100 (item %6d on)    %s\n", total, run(d, conns, req("/v1/bills?limit=100&cursor="+url.QueryEscape(cursor)), 200))
	}
	// Every reading is a new room and month: rooms round-robin, months after the seeded ones.
	var rooms []string
	for c := ""; ; {
		m, err := get(base, key, "/v1/rooms?limit=100"+c)
		if err != nil {
			return err
		}
		for _, it := range m["data"].([]any) {
			rooms = append(rooms, it.(map[string]any)["id"].(string))
		}
		pg := m["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		c = "&cursor=" + url.QueryEscape(pg["next_cursor"].(string))
	}
	start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, monthsPerRoom, 0)
	post := func(w, i int) *http.Request {
		k := i*conns + w
		room := rooms[k%len(rooms)]
		month := start.AddDate(0, k/len(rooms), 0).Format("2006-01")
		body, _ := json.Marshal(map[string]any{"room_id": room, "month": month,
			"electricity": map[string]any{"current": 99999}, "water": map[string]any{"current": 9999}})
		r, _ := http.NewRequest("POST", base+"/v1/meter-readings", bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	fmt.Printf("  POST /v1/meter-readings                   %s\n", run(d, conns, post, 201))
	return nil
}
