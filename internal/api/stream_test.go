package api_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// sse is one server-sent event as a stream client reads it.
type sse struct {
	id, typ string
	data    map[string]any
}

// stream is an open GET /v1/events/stream, read in the background.
type stream struct {
	t      *testing.T
	res    *http.Response
	events chan sse
	ended  chan struct{}
	// start is the ID the stream began with, before any event (the
	// latest event it will not send), when it sent one.
	start chan string
}

// openStream opens a stream with the key, the query and the headers
// ("Name: value"), and fails the test unless it is answered 200.
func openStream(t *testing.T, h *harness, key, query string, headers ...string) *stream {
	t.Helper()
	r, _ := http.NewRequestWithContext(t.Context(), "GET", h.url+"/v1/events/stream"+query, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	for _, hv := range headers {
		name, value, _ := strings.Cut(hv, ": ")
		r.Header.Set(name, value)
	}
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		res.Body.Close()
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	s := &stream{t: t, res: res, events: make(chan sse, 100), ended: make(chan struct{}), start: make(chan string, 1)}
	t.Cleanup(s.close)
	go func() {
		defer close(s.ended)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var e sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if e.id != "" && e.data != nil {
					s.events <- e
				} else if e.id != "" {
					s.start <- e.id
				}
				e = sse{}
			case strings.HasPrefix(line, "id: "):
				e.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				e.typ = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e.data); err != nil {
					t.Errorf("data of %s: %v", e.id, err)
				}
			}
		}
	}()
	return s
}

func (s *stream) close() { s.res.Body.Close() }

// next is the stream's next event, or the test fails after a few seconds.
func (s *stream) next() sse {
	s.t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-s.ended:
		s.t.Fatal("the stream ended")
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10 s")
	}
	return sse{}
}

// until reads events up to the first of type typ, and returns it.
func (s *stream) until(typ string) sse {
	s.t.Helper()
	for {
		if e := s.next(); e.typ == typ {
			return e
		}
	}
}

// types reads n events and returns their types.
func (s *stream) types(n int) []string {
	s.t.Helper()
	var out []string
	for range n {
		out = append(out, s.next().typ)
	}
	return out
}

// quiet fails the test if an event comes within d.
func (s *stream) quiet(d time.Duration) {
	s.t.Helper()
	select {
	case e := <-s.events:
		s.t.Fatalf("unexpected event %s %s", e.typ, e.id)
	case <-time.After(d):
	}
}

// A stream sends each event as it commits, in order, as GET /v1/events
// shows it; only the types its key may read and its filter keeps; goes on
// after Last-Event-ID with nothing skipped or repeated; 5 streams an
// application and mode, the 6th refused; a revoked key's stream ends
// before its next event.
func TestEventStream(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e, func(c *api.Config) { c.NoRateLimits = true })
		f := h.fixture(rental.PlanPro)
		key := h.testKey(f)
		narrow := h.testKey(f, rental.ScopePropertiesRead, rental.ScopePropertiesWrite, rental.ScopeRoomsWrite,
			rental.ScopeMetersWrite, rental.ScopeBillsWrite)
		all := openStream(t, h, key, "")
		noBills := openStream(t, h, narrow, "")
		filtered := openStream(t, h, key, "?type=property.created&type=bill.*,meter.reading.created")
		post := func(path string, body map[string]any) map[string]any {
			res := h.do(req{key: narrow, method: "POST", path: path, body: body})
			want(t, res, http.StatusCreated)
			return res.data()
		}
		prop := post("/v1/properties", property("Baan Stream"))["id"].(string)
		room := post("/v1/properties/"+prop+"/rooms", map[string]any{"number": "101", "monthly_rent": 350000})["id"].(string)
		post("/v1/meter-readings", map[string]any{"room_id": room, "month": "2026-10",
			"electricity": map[string]any{"current": 1200}, "water": map[string]any{"current": 100}})
		bill := post("/v1/bills", map[string]any{"room_id": room, "month": "2026-10"})

		first := all.next()
		if first.typ != "property.created" || first.data["object"] != "event" || first.data["id"] != first.id {
			t.Fatalf("first event %+v", first)
		}
		got, err := h.send(req{key: key, method: "GET", path: "/v1/events/" + first.id})
		if err != nil || !jsonEqual(got.data(), first.data) {
			t.Fatalf("the streamed event is not GET /v1/events/{id}'s: %v, %v", first.data, got)
		}
		rest := all.next()
		if rest.typ != "room.created" {
			t.Fatalf("second event %s", rest.typ)
		}
		if ts := all.types(2); strings.Join(ts, " ") != "meter.reading.created bill.created" {
			t.Fatalf("then %v", ts)
		}
		if ts := filtered.types(3); strings.Join(ts, " ") != "property.created meter.reading.created bill.created" {
			t.Fatalf("filtered: %v", ts)
		}
		if ts := noBills.types(1); ts[0] != "property.created" {
			t.Fatalf("without bills:read: %v", ts)
		}
		noBills.quiet(500 * time.Millisecond) // rooms:read and meters:read are not its either: nothing more

		// A reconnect after the second event gets the third and fourth, once.
		all.close()
		again := openStream(t, h, key, "", "Last-Event-ID: "+rest.id)
		if e := again.next(); e.typ != "meter.reading.created" {
			t.Fatalf("resumed with %s", e.typ)
		}
		if e := again.next(); e.typ != "bill.created" || e.data["data"].(map[string]any)["object"].(map[string]any)["id"] != bill["id"] {
			t.Fatalf("resumed with %+v", e)
		}
		again.quiet(500 * time.Millisecond)
		want(t, h.do(req{key: key, method: "GET", path: "/v1/events/stream", headers: []string{"Last-Event-ID: evt_000000000000000000000000"}}),
			http.StatusBadRequest, "invalid_parameter")
		want(t, h.do(req{key: key, method: "GET", path: "/v1/events/stream?type=bill.*x"}), http.StatusBadRequest, "invalid_parameter")

		// Open now: noBills, filtered, again; two more make 5, a 6th is refused.
		openStream(t, h, key, "")
		last := openStream(t, h, narrow, "")
		want(t, h.do(req{key: key, method: "GET", path: "/v1/events/stream"}), http.StatusTooManyRequests, "rate_limited")
		// A live key of the same application has its own 5.
		live := h.liveKey(f, f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes).ID)
		openStream(t, h, live, "").close()

		// narrow is revoked: its streams end before the next event.
		revokeKeys(t, e, f, func(k rental.APIKey) bool { return strings.HasSuffix(narrow, k.Last4) })
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan After")}), http.StatusCreated)
		select {
		case ev := <-last.events:
			t.Fatalf("a revoked key's stream sent %s", ev.typ)
		case <-last.ended:
		case <-time.After(10 * time.Second):
			t.Fatal("a revoked key's stream is still open")
		}
		if e := filtered.next(); e.typ != "property.created" {
			t.Fatalf("the other key's stream got %s", e.typ)
		}
		// Its slots are free again: a new stream opens, starting after the
		// latest event, whose ID it sends first.
		latest := list(t, h, key, "/v1/events?limit=1")[0]["id"]
		fresh := openStream(t, h, key, "")
		select {
		case id := <-fresh.start:
			if id != latest {
				t.Fatalf("the stream starts after %s, not the latest event %s", id, latest)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the stream sent no ID to start from")
		}

		// A sandbox moved ahead, then reset: its events are deleted and its
		// clock is back to real time. The stream goes on with the new ones.
		want(t, h.do(req{key: key, method: "POST", path: "/v1/test-helpers/clock/advance", body: map[string]any{"days": 30}}), http.StatusOK)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Ahead")}), http.StatusCreated)
		fresh.until("property.created") // after the bill's overdue and late events
		want(t, h.do(req{key: key, method: "POST", path: "/v1/test-helpers/sandbox/reset", body: map[string]any{}}), http.StatusOK)
		want(t, h.do(req{key: key, method: "POST", path: "/v1/properties", body: property("Baan Reset")}), http.StatusCreated)
		if e := fresh.until("property.created"); e.data["data"].(map[string]any)["object"].(map[string]any)["name"] != "Baan Reset" {
			t.Fatalf("after the reset: %+v", e)
		}
	})
}
