package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// GET /v1/events/stream: the account's events as they commit, as
// server-sent events. Opening it is one request (authenticated, limited,
// counted and logged as any); it holds no place in the overload gate while
// it lasts, and one of the application's store.MaxStreams slots of its
// mode. Each poll reads what the landlord committed after the last event
// sent (see store.StreamEvents), so a stream misses nothing and repeats
// nothing, whichever process wrote the events, and a reconnect with
// Last-Event-ID goes on after that event.

// streamPoll is how often an open stream looks for new events: the most
// an event waits between its commit and its stream.
const streamPoll = 200 * time.Millisecond

// streamHeartbeat is how often an idle stream sends a comment line, which
// keeps proxies from closing it and tells a client the server is there.
const streamHeartbeat = 15 * time.Second

// eventStream is the answer of GET /v1/events/stream once its request has
// passed every check: serve writes it (see Server.serve).
type eventStream struct {
	s      *Server
	r      *http.Request
	caller *caller
	f      store.EventFilter
	after  int64
	id     string
}

func (s *Server) streamEvents(c *call) (int, any, error) {
	types, err := rental.StreamTypeFilter(c.params["type"])
	if err != nil {
		return 0, nil, err
	}
	f := readable(c)
	f.Types = types
	var after int64
	if last := c.r.Header.Get("Last-Event-ID"); last != "" {
		after, err = c.q.StreamStart(c.ctx, c.acct(), f, s.now(), last)
	} else {
		after, err = c.q.LastEventTime(c.ctx, c.acct())
	}
	if err != nil {
		return 0, nil, err
	}
	id := rental.NewID("stream")
	if err := s.db.OpenStream(c.ctx, c.caller.key.App.ID, c.caller.mode, id); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, &eventStream{s: s, r: c.r, caller: c.caller, f: f, after: after, id: id}, nil
}

// serve sends the stream until the client goes, the key or the account
// stops admitting it (checked before each batch of events is sent), or
// its slot is lost; then it gives the slot back.
func (st *eventStream) serve(w http.ResponseWriter) {
	s, ctx := st.s, st.r.Context()
	app, mode := st.caller.key.App.ID, st.caller.mode
	defer s.db.CloseStream(context.WithoutCancel(ctx), app, mode, st.id)
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // the server's write timeout is for answers, not streams
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	poll := time.NewTicker(streamPoll)
	defer poll.Stop()
	quiet, renewed := time.Now(), time.Now()
	var buf bytes.Buffer
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.ending:
			return
		case <-poll.C:
		}
		if time.Since(renewed) >= store.StreamLease/3 {
			if s.db.RenewStream(ctx, app, mode, st.id) != nil {
				return
			}
			renewed = time.Now()
		}
		events, err := s.db.Read().StreamEvents(ctx, st.caller.account, st.f, s.now(), st.after)
		if err != nil {
			return // the client reconnects with Last-Event-ID
		}
		if len(events) > 0 && !st.admitted(ctx) {
			return
		}
		buf.Reset()
		for _, e := range events {
			body, err := json.Marshal(view(st.caller.account, e))
			if err != nil {
				return
			}
			fmt.Fprintf(&buf, "id: %s\nevent: %s\ndata: %s\n\n", e.ID, e.Type, body)
			st.after = e.CreatedAt.UnixMilli()
		}
		if len(events) == 0 {
			if time.Since(quiet) < streamHeartbeat {
				continue
			}
			buf.WriteString(": keep-alive\n\n")
		}
		quiet = time.Now()
		if _, err := w.Write(buf.Bytes()); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// admitted checks the stream's key and account again, as a new request
// would be checked: a key revoked, an application disabled or a link
// ended while the stream is open ends it before it sends another event.
// The scopes read then are the stream's from here on.
func (st *eventStream) admitted(ctx context.Context) bool {
	s := st.s
	fingerprint, hint, err := s.keyRef(st.r)
	if err != nil {
		return false
	}
	now := s.now()
	owner, err := s.db.LookupKey(ctx, fingerprint, hint, now)
	if err != nil || !owner.Key.Usable(now) {
		return false
	}
	cl, err := s.admit(st.r, owner, false)
	if err != nil || cl.account == nil || cl.account.ID != st.caller.account.ID {
		return false
	}
	st.caller = cl
	st.f.Prefixes = cl.scopes.EventPrefixes()
	return true
}
