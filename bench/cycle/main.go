// Command cycle measures the monthly cycle's two hottest requests against a
// landlord with many bills: listing bills (GET /v1/bills?limit=100, on the
// first page and deep in the list) and recording readings (POST
// /v1/meter-readings, every request a new room and month). It seeds the
// landlord with the rows the store would have written for the same API
// requests (see seed.go), many to a transaction, so 100,000 bills take
// seconds rather than half an hour.
//
// bench/compare.sh uses it too, for what wrk cannot do: seeding, a load at a
// fixed rate (pace), the rooms and months wrk's writes go to (lua), and the
// PocketBase collection it compares with (pocketbase).
//
//	cycle -db sqlite:/tmp/b.db -secret-file /tmp/s -bills 100000 seed   # prints the live key
//	cycle -url http://127.0.0.1:8080 -key svc_live_... load
//	cycle -url http://127.0.0.1:8080 -key svc_live_... -rate 1700 pace
//	cycle -url http://127.0.0.1:8080 lua svc_live_... svc_live_... >writes.lua
//	cycle -url http://127.0.0.1:8090 -superuser a@b.c:pw -like page.json -record rec.json pocketbase
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	dsn := flag.String("db", "", "database (seed)")
	secretFile := flag.String("secret-file", "", "server secret file (seed)")
	bills := flag.Int("bills", 1000, "bills to seed for each landlord: rooms × months (seed)")
	months := flag.Int("months", 100, "months of readings and bills of each seeded room (seed)")
	landlords := flag.Int("landlords", 1, "landlords to seed, one key a line (seed)")
	base := flag.String("url", "", "service URL (load, pace, lua, pocketbase)")
	key := flag.String("key", "", "live key (load, pace)")
	duration := flag.Duration("duration", 10*time.Second, "length of each load run")
	conns := flag.Int("c", 16, "concurrent requests (load, pocketbase), or connections (pace)")
	rate := flag.Float64("rate", 0, "requests a second (pace)")
	path := flag.String("path", "/v1/bills?limit=20", "path to GET (pace)")
	superuser := flag.String("superuser", "", "EMAIL:PASSWORD of a PocketBase superuser (pocketbase)")
	like := flag.String("like", "", "a page of an API list whose objects the records copy (pocketbase)")
	records := flag.Int("records", 1000, "records to make (pocketbase)")
	record := flag.String("record", "", "file to write one record's JSON to, the body of create benchmarks (pocketbase)")
	flag.Parse()
	var err error
	switch flag.Arg(0) {
	case "seed":
		err = seed(*dsn, *secretFile, *bills, *months, *landlords)
	case "load":
		err = load(*base, *key, *duration, *conns)
	case "pace":
		err = paceGet(*base, *key, *path, *rate, *conns, *duration)
	case "lua":
		err = luaWrites(*base, flag.Args()[1:])
	case "pocketbase":
		err = seedPocketBase(*base, *superuser, *like, *records, *conns, *record)
	default:
		err = fmt.Errorf("usage: cycle [flags] seed|load|pace|lua|pocketbase")
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
// It is a closed loop: a worker sends its next request when the last one
// is answered, so it measures the most the server can answer.
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
				if what := send(req, ok); what != "" {
					failed[what]++
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.add(lat, failed)
			mu.Unlock()
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	res.n, res.duration = len(res.lat), time.Since(began)
	return res
}

// pace sends rate GET requests a second for d, each due at its own time
// whether or not earlier ones were answered, and times each from when it
// was due. It is an open loop, as clients on the internet are: a server
// that falls behind shows in the latencies instead of slowing the load, as
// it would in run or wrk (coordinated omission), so the percentiles are
// those of a server at that rate.
//
// It works as wrk2 does, over conns keep-alive connections of its own:
// connection c sends the requests due at began + (k·conns + c)/rate, and one
// that comes due while the connection still waits for an answer is sent
// right after it, still timed from when it was due. The request is bytes
// made once and the answers are read without Go's HTTP client and its
// goroutines per request: the pacer takes less CPU from the server it
// measures than a pacer with Go's client did, and keeps up with bare's
// half maximum on this 2-core machine, where that one fell behind.
func pace(d time.Duration, rate float64, conns int, addr string, req []byte, ok int) result {
	var mu sync.Mutex
	res := result{failed: map[string]int{}}
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / rate)
	n := int(d / interval)
	began := time.Now()
	for c := range conns {
		wg.Go(func() {
			var lat []time.Duration
			failed := map[string]int{}
			var conn *paceConn
			for i := c; i < n; i += conns {
				due := began.Add(time.Duration(i) * interval)
				time.Sleep(time.Until(due))
				what := "transport"
				if conn == nil {
					conn, _ = dialPace(addr)
				}
				if conn != nil {
					var err error
					if what, err = conn.do(req, ok); err != nil {
						conn.Close()
						conn, what = nil, "transport"
					}
				}
				lat = append(lat, time.Since(due))
				failed[what]++
			}
			if conn != nil {
				conn.Close()
			}
			mu.Lock()
			res.add(lat, failed)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.n, res.duration = len(res.lat), d
	return res
}

// paceConn is one of pace's keep-alive connections.
type paceConn struct {
	net.Conn
	r *bufio.Reader
}

func dialPace(addr string) (*paceConn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &paceConn{c, bufio.NewReaderSize(c, 64<<10)}, nil
}

// do sends req and reads its answer through: it returns "" if the status
// was ok, else the status; an error means the connection is done for.
func (c *paceConn) do(req []byte, ok int) (string, error) {
	if _, err := c.Write(req); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && resp.Close {
		err = io.EOF
	}
	if err != nil {
		return "", err
	}
	if resp.StatusCode != ok {
		return strconv.Itoa(resp.StatusCode), nil
	}
	return "", nil
}

// add counts a worker's latencies and failures ("" is no failure) in r.
func (r *result) add(lat []time.Duration, failed map[string]int) {
	r.lat = append(r.lat, lat...)
	for what, n := range failed {
		if what != "" {
			r.failed[what] += n
			r.errors += n
		}
	}
}

// send makes one request and reads its answer through: it returns "" if
// the status was ok, else the failure (the status, or "transport").
func send(req *http.Request, ok int) string {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "transport"
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != ok {
		return strconv.Itoa(resp.StatusCode)
	}
	return ""
}

// paceWarmup is how long pace runs before the run it reports.
const paceWarmup = 2 * time.Second

// paceGet prints the latencies of GET path at rate requests a second for
// d (see pace).
func paceGet(base, key, path string, rate float64, conns int, d time.Duration) error {
	if rate <= 0 {
		return fmt.Errorf("pace: -rate %v: want a positive rate", rate)
	}
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	req := "GET " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\n"
	if key != "" {
		req += "Authorization: Bearer " + key + "\r\n"
	}
	b := []byte(req + "\r\n")
	// A warm-up at the same rate, not counted: the first fraction of a
	// second otherwise times the connections being dialled and the
	// server's pools filling, not the server at the rate.
	pace(paceWarmup, rate, conns, u.Host, b, 200)
	fmt.Println(pace(d, rate, conns, u.Host, b, 200))
	return nil
}

// getter returns a request builder for GET path with the key.
func getter(base, key, path string) func(int, int) *http.Request {
	return func(int, int) *http.Request {
		r, _ := http.NewRequest("GET", base+path, nil)
		r.Header.Set("Authorization", "Bearer "+key)
		return r
	}
}

// get reads a JSON object from the API; any answer but 200 is an error.
func get(base, key, path string) (map[string]any, error) {
	return call("GET", base+path, "Bearer "+key, nil, http.StatusOK)
}

// call sends body (if not nil) as JSON with the Authorization header auth
// and decodes the JSON object answered; any status but want is an error.
func call(method, url, auth string, body any, want int) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, b)
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
	fmt.Printf("  GET /v1/bills?limit=100 (first page)      %s\n", run(d, conns, getter(base, key, "/v1/bills?limit=100"), 200))
	if cursor != "" {
		fmt.Printf("  GET /v1/bills?limit=100 (item %6d on)    %s\n", half, run(d, conns, getter(base, key, "/v1/bills?limit=100&cursor="+url.QueryEscape(cursor)), 200))
	}
	// Every reading is a new room and month: rooms round-robin, months after
	// every recorded one (the seeded ones, and those of earlier load runs).
	start, err := firstNewMonth(base, key)
	if err != nil {
		return err
	}
	rooms, err := roomIDs(base, key)
	if err != nil {
		return err
	}
	post := func(w, i int) *http.Request {
		k := i*conns + w
		r, _ := http.NewRequest("POST", base+"/v1/meter-readings", bytes.NewReader(readingBody(rooms[k%len(rooms)], start.AddDate(0, k/len(rooms), 0))))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	fmt.Printf("  POST /v1/meter-readings                   %s\n", run(d, conns, post, 201))
	return nil
}

// readingBody is the body of POST /v1/meter-readings for a room and month:
// the current values only, so the previous ones come from the room's last
// reading, as in most of a landlord's requests.
func readingBody(room string, month time.Time) []byte {
	body, _ := json.Marshal(map[string]any{"room_id": room, "month": month.Format("2006-01"),
		"electricity": map[string]any{"current": 99999}, "water": map[string]any{"current": 9999}})
	return body
}

// firstNewMonth returns the month after the newest one of the key's
// landlord's latest 100 readings: no room has a reading in it or after it
// when all the readings were seeded or written in month order.
func firstNewMonth(base, key string) (time.Time, error) {
	readings, err := get(base, key, "/v1/meter-readings?limit=100")
	if err != nil {
		return time.Time{}, err
	}
	last := ""
	for _, it := range readings["data"].([]any) {
		last = max(last, it.(map[string]any)["month"].(string))
	}
	lastMonth, err := time.Parse("2006-01", last)
	if err != nil {
		return time.Time{}, fmt.Errorf("month of the newest readings: %w", err)
	}
	return lastMonth.AddDate(0, 1, 0), nil
}

// roomIDs lists the IDs of all the key's landlord's rooms.
func roomIDs(base, key string) ([]string, error) {
	var rooms []string
	for c := ""; ; {
		m, err := get(base, key, "/v1/rooms?limit=100"+c)
		if err != nil {
			return nil, err
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
	if len(rooms) == 0 {
		return nil, fmt.Errorf("the landlord has no rooms")
	}
	return rooms, nil
}

// luaWrites prints, as a Lua table for bench/wrk.lua, each key's rooms and
// the first month none of them has a reading in (as an index, year × 12 +
// month - 1), so that wrk can make every POST /v1/meter-readings a new
// room and month of the landlord of the key it sends; and the body of
// those requests (readingBody) with {room} and {month} to fill in.
func luaWrites(base string, keys []string) error {
	if len(keys) == 0 {
		return fmt.Errorf("lua: no keys")
	}
	month := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	body := strings.Replace(string(readingBody("{room}", month)), month.Format("2006-01"), "{month}", 1)
	var b strings.Builder
	fmt.Fprintf(&b, "return {\n  body = %q,\n  landlords = {\n", body)
	for _, key := range keys {
		start, err := firstNewMonth(base, key)
		if err != nil {
			return err
		}
		rooms, err := roomIDs(base, key)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "    {key = %q, start = %d, rooms = {", key, start.Year()*12+int(start.Month())-1)
		for i, r := range rooms {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q", r)
		}
		b.WriteString("}},\n")
	}
	b.WriteString("  },\n}\n")
	_, err := os.Stdout.WriteString(b.String())
	return err
}
