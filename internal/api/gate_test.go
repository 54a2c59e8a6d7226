package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// One developer trickling request bodies over many connections (each
// promising 100 bytes and sending one) holds no place in the overload gate:
// another developer's requests, and the attacker's own ordinary ones, keep
// answering 2xx, and each trickled request ends with 408 once its body is
// late.
func TestSlowBodiesStarveNoOne(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) {
			c.MaxInFlight, c.OverloadWait, c.BodyTimeout = 8, time.Second, 2*time.Second
		})
		attacker := h.testKey(h.fixture(rental.PlanEnterprise))
		victim := h.testKey(h.fixture(rental.PlanEnterprise))
		addr := strings.TrimPrefix(h.url, "http://")
		conns := make([]net.Conn, 60)
		for i := range conns {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/properties HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{", addr, attacker)
			conns[i] = c
		}
		time.Sleep(100 * time.Millisecond) // every trickled request has reached its handler
		for i := range 20 {
			for _, key := range []string{victim, attacker} {
				start := time.Now()
				res := h.do(req{key: key, method: "GET", path: "/v1/properties?limit=1"})
				if res.status != http.StatusOK {
					t.Fatalf("request %d of %s… during the attack: %d %s after %s", i, key[:12], res.status, res.body, time.Since(start))
				}
			}
		}
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Go(func() {
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Errorf("trickled request: %v", err)
					return
				}
				defer resp.Body.Close()
				var env struct{ Error struct{ Code string } }
				json.NewDecoder(resp.Body).Decode(&env)
				if resp.StatusCode != http.StatusRequestTimeout || env.Error.Code != "request_timeout" {
					t.Errorf("trickled request: %d %q, want 408 request_timeout", resp.StatusCode, env.Error.Code)
				}
			})
		}
		wg.Wait()
	})
}

// A developer whose requests are slow fills only their own share of the
// gate (a quarter of it): their next request waits and gets 503, while
// another developer's requests are served.
func TestFairShareOfTheGate(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.MaxInFlight, c.OverloadWait = 4, 300*time.Millisecond })
		busy := h.fixture(rental.PlanEnterprise)
		busyKey := h.testKey(busy)
		other := h.testKey(h.fixture(rental.PlanEnterprise))
		tx, err := e.DB.Begin(t.Context()) // the busy developer's writes wait for this lock
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := tx.Claim(t.Context(), busy.Sandbox(t, e.DB)); err != nil {
			t.Fatal(err)
		}
		done := make(chan *result, 1)
		go func() {
			res, _ := h.send(req{key: busyKey, method: "POST", path: "/v1/properties", body: property("Waits")})
			done <- res
		}()
		res := h.do(req{key: busyKey, method: "GET", path: "/v1/properties"})
		for deadline := time.Now().Add(10 * time.Second); res.status == http.StatusOK && time.Now().Before(deadline); {
			res = h.do(req{key: busyKey, method: "GET", path: "/v1/properties"})
		}
		want(t, res, http.StatusServiceUnavailable, "service_unavailable")
		if res.header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
		for range 10 {
			want(t, h.do(req{key: other, method: "GET", path: "/v1/properties"}), http.StatusOK)
		}
		tx.Rollback()
		if res := <-done; res == nil || res.status != http.StatusCreated {
			t.Fatalf("the waiting write: %+v", res)
		}
	})
}
