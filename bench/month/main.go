// Command month measures a whole property's month over the API, the two
// ways a client can do it: (a) a reading POST and a bill POST per room,
// and (b) one readings batch and one bill run. Each way gets a property
// of its own with the same rooms and tenants, made beforehand; the
// report gives each way's wall time, requests and the server's CPU time
// (utime + stime of -pid from /proc, when given). See bench/month.sh.
//
//	month -url http://127.0.0.1:8080 -key svc_live_… -rooms 500 -c 8 -pid 1234 -month 2026-10
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	base := flag.String("url", "", "service URL")
	key := flag.String("key", "", "live key bound to the landlord's account")
	rooms := flag.Int("rooms", 500, "rooms of each property")
	conns := flag.Int("c", 8, "requests in flight at once for (a)")
	pid := flag.Int("pid", 0, "the server's process ID, for its CPU time")
	month := flag.String("month", "2026-10", "the month billed (YYYY-MM)")
	flag.Parse()
	c := &client{base: *base, key: *key}
	if err := run(c, *rooms, *conns, *pid, *month); err != nil {
		fmt.Fprintln(os.Stderr, "month:", err)
		os.Exit(1)
	}
}

// client sends JSON requests with the key, counting them.
type client struct {
	base, key string
	requests  atomic.Int64
}

// do sends one request and decodes the "data" of its answer into out,
// failing unless the status is want.
func (c *client) do(method, path string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return err
	}
	r.Header.Set("Authorization", "Bearer "+c.key)
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	c.requests.Add(1)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out == nil {
		return nil
	}
	// One pass over the answer, as a client's SDK decodes it.
	return json.Unmarshal(b, &struct{ Data any }{out})
}

// property makes a property of n occupied rooms and returns their IDs.
func property(c *client, name string, n, conns int) ([]string, error) {
	var p struct{ ID string }
	if err := c.do("POST", "/v1/properties", map[string]any{"name": name, "address": "1 Bench Road", "electricity_rate": 800,
		"water_rate": 1800, "due_day": 5}, http.StatusCreated, &p); err != nil {
		return nil, err
	}
	ids := make([]string, n)
	err := parallel(n, conns, func(i int) error {
		var r struct{ ID string }
		if err := c.do("POST", "/v1/properties/"+p.ID+"/rooms", map[string]any{"number": strconv.Itoa(1000 + i), "monthly_rent": 350000},
			http.StatusCreated, &r); err != nil {
			return err
		}
		ids[i] = r.ID
		return c.do("POST", "/v1/rooms/"+r.ID+"/tenant", map[string]any{"name": fmt.Sprint("Tenant ", i), "phone": fmt.Sprintf("081%07d", i)},
			http.StatusCreated, nil)
	})
	return append(ids, p.ID), err
}

// parallel runs do for 0..n-1, conns at a time; the first error wins.
func parallel(n, conns int, do func(int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// reading is room i's reading body of the month.
func reading(room, month string, i int) map[string]any {
	return map[string]any{"room_id": room, "month": month,
		"electricity": map[string]any{"previous": 1000, "current": 1100 + i%50}, "water": map[string]any{"previous": 100, "current": 110 + i%5}}
}

// cpu is the process's user and system time so far; zero without a pid.
func cpu(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and stime
	// are the 14th and 15th of the line, in clock ticks (100 a second).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// measured runs one way of doing the month and prints its line.
func measured(c *client, pid int, name string, do func() error) error {
	n0, cpu0, t0 := c.requests.Load(), cpu(pid), time.Now()
	if err := do(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	wall, reqs, used := time.Since(t0), c.requests.Load()-n0, cpu(pid)-cpu0
	fmt.Printf("%-28s wall %8.3f s  requests %5d  server cpu %7.3f s\n", name, wall.Seconds(), reqs, used.Seconds())
	return nil
}

func run(c *client, rooms, conns, pid int, month string) error {
	a, err := property(c, "Month (a)", rooms, conns)
	if err != nil {
		return err
	}
	b, err := property(c, "Month (b)", rooms, conns)
	if err != nil {
		return err
	}
	aRooms, bRooms, bProp := a[:rooms], b[:rooms], b[rooms]
	err = measured(c, pid, fmt.Sprintf("(a) %d + %d POSTs, c=%d", rooms, rooms, conns), func() error {
		if err := parallel(rooms, conns, func(i int) error {
			return c.do("POST", "/v1/meter-readings", reading(aRooms[i], month, i), http.StatusCreated, nil)
		}); err != nil {
			return err
		}
		return parallel(rooms, conns, func(i int) error {
			return c.do("POST", "/v1/bills", map[string]any{"room_id": aRooms[i], "month": month}, http.StatusCreated, nil)
		})
	})
	if err != nil {
		return err
	}
	var batchWall time.Duration
	defer func() {
		if batchWall > 0 {
			fmt.Printf("%-28s wall %8.3f s of it the batch\n", "", batchWall.Seconds())
		}
	}()
	return measured(c, pid, "(b) one batch + one bill run", func() error {
		t0 := time.Now()
		batch := make([]map[string]any, rooms)
		for i, r := range bRooms {
			batch[i] = reading(r, month, i)
		}
		var items []struct{ Status int }
		if err := c.do("POST", "/v1/meter-readings/batch", map[string]any{"readings": batch}, http.StatusOK, &items); err != nil {
			return err
		}
		for i, it := range items {
			if it.Status != http.StatusCreated {
				return fmt.Errorf("batch item %d: %d", i, it.Status)
			}
		}
		batchWall = time.Since(t0)
		var run struct{ Created []string }
		if err := c.do("POST", "/v1/properties/"+bProp+"/bills", map[string]any{"month": month}, http.StatusOK, &run); err != nil {
			return err
		}
		if len(run.Created) != rooms {
			return fmt.Errorf("the bill run made %d bills of %d", len(run.Created), rooms)
		}
		return nil
	})
}
