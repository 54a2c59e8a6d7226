package api_test

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// 50 concurrent identical POSTs with one key, half to a second server over
// the same database (another process, whose requests meet the key's row,
// not this process's own list of keys in use), create exactly one property
// and one property.created event; the others replay it or get 409.
func TestIdempotentConcurrentCreates(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		two := secondServer(t, h)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		var (
			mu      sync.Mutex
			created [][]byte
			replays [][]byte
			busy    int
			wg      sync.WaitGroup
		)
		for i := range 50 {
			wg.Go(func() {
				server := h
				if i%2 == 1 {
					server = two
				}
				res, err := server.send(req{key: key, method: "POST", path: "/v1/properties", body: property("Once"), headers: []string{"Idempotency-Key: create-once"}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case res.status == 201 && res.header.Get("Idempotent-Replayed") == "false":
					created = append(created, res.body)
				case res.status == 201 && res.header.Get("Idempotent-Replayed") == "true":
					replays = append(replays, res.body)
				case res.status == 409 && res.code() == "idempotency_in_progress":
					busy++
				default:
					t.Errorf("unexpected %d %s", res.status, res.body)
				}
			})
		}
		wg.Wait()
		if len(created) != 1 || len(created)+len(replays)+busy != 50 {
			t.Fatalf("%d created, %d replayed, %d in progress", len(created), len(replays), busy)
		}
		for _, r := range replays {
			if !bytes.Equal(r, created[0]) {
				t.Fatalf("replay differs:\n%s\n%s", r, created[0])
			}
		}
		list := h.do(req{key: key, method: "GET", path: "/v1/properties"}).json()["data"].([]any)
		if len(list) != 3 { // the one created and the two sample properties
			t.Fatalf("%d properties", len(list))
		}
		n, err := e.DB.Read().CountEvents(t.Context(), f.Sandbox(t, e.DB), "property.created")
		if err != nil || n != 1 {
			t.Fatalf("%d property.created events (%v)", n, err)
		}
		t.Logf("%s: 1 created, %d replayed, %d in progress", e.Name, len(replays), busy)
	})
}

// whileRunning sends rq and then (at once, if given) other while the
// account's landlord is taken by another writer, so the first of the two
// to arrive waits for its turn, still running, and returns the other's
// answer. Then the writer lets go and the waiting request must succeed
// (2xx).
func (h *harness) whileRunning(acct *rental.Account, rq req, other ...req) *result {
	h.t.Helper()
	writer, err := h.e.DB.BeginClaimed(h.t.Context(), acct)
	if err != nil {
		h.t.Fatal(err)
	}
	defer writer.Rollback()
	answers := make(chan *result, 2)
	for _, rq := range append([]req{rq}, append(other, rq)[0]) {
		go func() {
			res, err := h.send(rq)
			if err != nil {
				h.t.Error(err)
			}
			answers <- res
		}()
	}
	first := <-answers
	writer.Rollback()
	if second := <-answers; second == nil || second.status/100 != 2 {
		h.t.Errorf("the request that waited: %+v", second)
	}
	return first
}

func TestIdempotencyRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		ik := func(k string) []string { return []string{"Idempotency-Key: " + k} }

		first := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("A"), headers: ik("k1")})
		want(t, first, http.StatusCreated)
		again := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("A"), headers: ik("k1")})
		want(t, again, http.StatusCreated)
		if !bytes.Equal(first.body, again.body) || again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("X-Request-ID") == first.header.Get("X-Request-ID") {
			t.Fatalf("replay: %v %s", again.header, again.body)
		}
		id := first.data()["id"].(string)
		// The replay made nothing: a retry runs as if its key were free
		// until the commit finds it taken, and that work is rolled back.
		named := 0
		for _, p := range h.do(req{key: key, method: "GET", path: "/v1/properties?limit=100"}).json()["data"].([]any) {
			if p.(map[string]any)["name"] == property("A")["name"] {
				named++
			}
		}
		if named != 1 {
			t.Fatalf("%d properties made by a request and its replay, want 1", named)
		}
		// A different body, method or path with the same key is 422.
		for _, rq := range []req{
			{method: "POST", path: "/v1/properties", body: property("B")},
			{method: "PATCH", path: "/v1/properties/" + id, body: property("A")},
			{method: "DELETE", path: "/v1/properties/" + id},
		} {
			rq.key, rq.headers = key, ik("k1")
			want(t, h.do(rq), http.StatusUnprocessableEntity, "idempotency_key_reused")
		}
		// 4xx responses are stored and replayed too.
		bad := h.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": "x"}, headers: ik("k2")})
		want(t, bad, http.StatusBadRequest, "parameter_missing")
		badAgain := h.do(req{key: key, method: "POST", path: "/v1/properties", body: map[string]any{"name": "x"}, headers: ik("k2")})
		if !bytes.Equal(bad.body, badAgain.body) || badAgain.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("4xx replay: %s", badAgain.body)
		}
		// A DELETE's 204 replays as 204, and the property is deleted once.
		want(t, h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + id, headers: ik("k3")}), http.StatusNoContent)
		rep := h.do(req{key: key, method: "DELETE", path: "/v1/properties/" + id, headers: ik("k3")})
		want(t, rep, http.StatusNoContent)
		if rep.header.Get("Idempotent-Replayed") != "true" {
			t.Fatal("204 not replayed")
		}
		// Same key while the first request still runs.
		running := req{key: key, method: "POST", path: "/v1/properties", body: property("A"), headers: ik("running")}
		want(t, h.whileRunning(f.Sandbox(t, e.DB), running), http.StatusConflict, "idempotency_in_progress")
		// ... and another request with that key while it runs.
		reused := req{key: key, method: "POST", path: "/v1/properties", body: property("B"), headers: ik("running-2")}
		running.headers = ik("running-2")
		want(t, h.whileRunning(f.Sandbox(t, e.DB), running, reused), http.StatusUnprocessableEntity, "idempotency_key_reused")
		// Keys must be 1-255 printable ASCII characters.
		for _, k := range []string{strings.Repeat("a", 256), "tab\there", "ไทย"} {
			want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("A"), headers: ik(k)}), http.StatusBadRequest, "invalid_idempotency_key")
		}
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("max"), headers: ik(strings.Repeat("k", 255))}), http.StatusCreated)
		// Keys are scoped to the account: the same key in another application runs anew.
		other := h.testKey(h.fixture(rental.PlanEnterprise))
		res := h.do(req{key: other, method: "POST", path: "/v1/properties", body: property("A"), headers: ik("k1")})
		want(t, res, http.StatusCreated)
		if res.header.Get("Idempotent-Replayed") != "false" {
			t.Fatal("another account's key replayed")
		}
	})
}

// A stored 429 replays with its Retry-After.
func TestReplayKeepsRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, storetest.SQLite(t))
	key := h.testKey(h.fixture(rental.PlanEnterprise))
	for i := range 18 {
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property(string(rune('a' + i)))}), http.StatusCreated)
	}
	first := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("full"), headers: []string{"Idempotency-Key: full"}})
	again := h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("full"), headers: []string{"Idempotency-Key: full"}})
	want(t, first, http.StatusTooManyRequests, "sandbox_limit")
	want(t, again, http.StatusTooManyRequests, "sandbox_limit")
	if again.header.Get("Retry-After") == "" || again.header.Get("Retry-After") != first.header.Get("Retry-After") {
		t.Fatalf("Retry-After %q then %q", first.header.Get("Retry-After"), again.header.Get("Retry-After"))
	}
}

// TestIdempotencyInProgressAcrossProcesses: a request with the same
// Idempotency-Key as one that still runs on another process is answered
// at once, 409 idempotency_in_progress, not with the first's answer once
// that is done. Here the two are sent to two processes together while a
// third holds their landlord, so the first to reach the database waits
// there, running; the other is refused, the same request or another one
// with the key. Then the first is answered, and retries replay its answer
// on either process. On SQLite, where one process serves a database file,
// both go to one server.
func TestIdempotencyInProgressAcrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		one := newHarness(t, e)
		two, third := one, e.DB
		if e.Name == "postgres" {
			two = secondServer(t, one)
			db, err := store.Open(t.Context(), e.DSN, store.Options{Now: e.Clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			third = db
		}
		f := one.fixture(rental.PlanEnterprise)
		key := one.testKey(f)
		for _, c := range []struct {
			name  string
			other string // the other request's body
		}{
			{"same-request", "Once"},
			{"other-request", "Another"},
		} {
			first := req{key: key, method: "POST", path: "/v1/properties", body: property("Once"), headers: []string{"Idempotency-Key: " + c.name}}
			other := first
			other.body = property(c.other)
			writer, err := third.BeginClaimed(t.Context(), f.Sandbox(t, e.DB))
			if err != nil {
				t.Fatal(err)
			}
			type answer struct {
				h   *harness
				rq  req
				res *result
			}
			answers := make(chan answer, 2)
			for i, rq := range []req{first, other} {
				h := []*harness{one, two}[i]
				go func() {
					res, err := h.send(rq)
					if err != nil {
						t.Error(err)
					}
					answers <- answer{h, rq, res}
				}()
			}
			var refused answer
			select {
			case refused = <-answers:
			case <-time.After(5 * time.Second):
				writer.Rollback()
				t.Fatalf("%s: no answer while the first request ran: the other waited for it", c.name)
			}
			writer.Rollback()
			ran := <-answers
			if refused.res == nil || ran.res == nil {
				t.Fatalf("%s: %+v %+v", c.name, refused.res, ran.res)
			}
			if code := refused.res.code(); refused.res.status != http.StatusConflict || code != "idempotency_in_progress" {
				// In one process, a different request with a key in use is
				// told so at once.
				if one != two || c.other == "Once" || code != "idempotency_key_reused" {
					t.Fatalf("%s: the request refused while the first ran: %d %s", c.name, refused.res.status, refused.res.body)
				}
			}
			if refused.res.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%s: the refusal was kept: %v", c.name, refused.res.header)
			}
			want(t, ran.res, http.StatusCreated)
			if ran.res.header.Get("Idempotent-Replayed") != "false" {
				t.Fatalf("%s: the request that ran: %v", c.name, ran.res.header)
			}
			for _, h := range []*harness{one, two} {
				again := h.do(ran.rq)
				if again.status != http.StatusCreated || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, ran.res.body) {
					t.Fatalf("%s: retry of the request that ran: %d %v %s", c.name, again.status, again.header, again.body)
				}
			}
			// The refused request, retried: the same one replays, another is 422.
			if retry := refused.h.do(refused.rq); c.other == "Once" {
				if retry.status != http.StatusCreated || !bytes.Equal(retry.body, ran.res.body) {
					t.Fatalf("%s: retry of the refused request: %d %s", c.name, retry.status, retry.body)
				}
			} else {
				want(t, retry, http.StatusUnprocessableEntity, "idempotency_key_reused")
			}
		}
	})
}
