// Command cycle measures the monthly cycle's two hottest requests against a
// landlord with many bills: listing bills (GET /v1/bills?limit=100, on the
// first page and deep in the list) and recording readings (POST
// /v1/meter-readings, every request a new room and month). It seeds the
// landlord with the rows the store would have written for the same API
// requests (see seed.go), many to a transaction, so 100,000 bills take
// seconds rather than half an hour.
//
//	cycle -db sqlite:/tmp/b.db -secret-file /tmp/s -bills 100000 seed   # prints the live key
//	cycle -url http://127.0.0.1:8080 -key svc_live_... load
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

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

// result is one load run's figures.
type result struct {
	n        int
	errors   int
	duration time.Duration
	lat      []time.Duration
	// failed counts the failures by what they were: an unexpected status
	// ("503") or "transport" for a request that got no answer.
	failed map[string]int
}

func (r result) String() string {
	slices.Sort(r.lat)
	pct := func(p float64) float64 {
		if len(r.lat) == 0 {
			return 0
		}
		return float64(r.lat[int(float64(len(r.lat)-1)*p)].Microseconds()) / 1000
	}
	s := fmt.Sprintf("%8.0f req/s   p50 %7.2f ms   p99 %7.2f ms   (%d requests, %d errors)",
		float64(r.n)/r.duration.Seconds(), pct(0.50), pct(0.99), r.n, r.errors)
	for _, what := range slices.Sorted(maps.Keys(r.failed)) {
		s += fmt.Sprintf(" %s×%d", what, r.failed[what])
	}
	return s
}

// run sends requests from conns workers for d; next builds each request.
func run(d time.Duration, conns int, next func(worker, i int) *http.Request, ok int) result {
	var mu sync.Mutex
	res := result{failed: map[string]int{}}
	var stop atomic.Bool
	var wg sync.WaitGroup
	began := time.Now()
	for w := range conns {
		wg.Go(func() {
			var lat []time.Duration
			failed := map[string]int{}
			for i := 0; !stop.Load(); i++ {
				req := next(w, i)
				t0 := time.Now()
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				lat = append(lat, time.Since(t0))
				switch {
				case err != nil:
					failed["transport"]++
				case resp.StatusCode != ok:
					failed[strconv.Itoa(resp.StatusCode)]++
				}
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			for what, n := range failed {
				res.failed[what] += n
				res.errors += n
			}
			mu.Unlock()
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	res.n, res.duration = len(res.lat), time.Since(began)
	return res
}

// get reads a JSON object from the API; any answer but 200 is an error.
func get(base, key, path string) (map[string]any, error) {
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	var m map[string]any
	return m, json.NewDecoder(resp.Body).Decode(&m)
}

// load walks the whole bill list, measures its first page and the page half
// way down, and then records readings for new months of the landlord's
// rooms.
func load(base, key string, d time.Duration, conns int) error {
	http.DefaultTransport.(*http.Transport).MaxIdleConnsPerHost = conns
	// Walk the whole list: every page but the last must be full, and no
	// bill may come twice. The page half way down is the deep one measured.
	began := time.Now()
	seen := map[string]bool{}
	var cursors []string // cursors[i] starts the page at item (i+1)*100
	total := 0
	for path := "/v1/bills?limit=100"; ; {
		page, err := get(base, key, path)
		if err != nil {
			return err
		}
		data := page["data"].([]any)
		for _, it := range data {
			id := it.(map[string]any)["id"].(string)
			if seen[id] {
				return fmt.Errorf("bill %s listed twice", id)
			}
			seen[id] = true
		}
		total += len(data)
		pg := page["pagination"].(map[string]any)
		if pg["has_more"] != true {
			break
		}
		if len(data) != 100 {
			return fmt.Errorf("bills page at item %d has %d bills and more to follow", total-len(data), len(data))
		}
		cursors = append(cursors, pg["next_cursor"].(string))
		path = "/v1/bills?limit=100&cursor=" + url.QueryEscape(cursors[len(cursors)-1])
	}
	if total == 0 {
		return fmt.Errorf("the landlord has no bills")
	}
	fmt.Printf("  listed %d bills in %d pages of 100 in %s\n", total, len(cursors)+1, time.Since(began).Round(time.Millisecond))
	half, cursor := 0, ""
	if mid := (len(cursors) + 1) / 2; mid > 0 {
		half, cursor = mid*100, cursors[mid-1]
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
		fmt.Printf("  GET /v1/bills?limit=100 (item %6d on)    %s\n", half, run(d, conns, req("/v1/bills?limit=100&cursor="+url.QueryEscape(cursor)), 200))
	}
	// Every reading is a new room and month: rooms round-robin, months after
	// every recorded one (the seeded ones, and those of earlier load runs).
	readings, err := get(base, key, "/v1/meter-readings?limit=100")
	if err != nil {
		return err
	}
	last := ""
	for _, it := range readings["data"].([]any) {
		last = max(last, it.(map[string]any)["month"].(string))
	}
	lastMonth, err := time.Parse("2006-01", last)
	if err != nil {
		return fmt.Errorf("month of the newest readings: %w", err)
	}
	start := lastMonth.AddDate(0, 1, 0)
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
