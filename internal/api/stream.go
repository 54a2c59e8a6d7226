package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
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
	// after is the time of the last event sent (or skipped as the
	// stream's start): the stream sends the events after it.
	after int64
	// first, when not empty, is the event the stream starts after, sent
	// as an ID alone so that a client reconnecting before any event came
	// resumes from where this stream began.
	first string
}

func (s *Server) streamEvents(c *call) (int, any, error) {
	types, err := rental.StreamTypeFilter(c.params["type"])
	if err != nil {
		return 0, nil, err
	}
	f := readable(c)
	f.Types = types
	st := &eventStream{s: s, r: c.r, caller: c.caller, f: f}
	if last := c.r.Header.Get("Last-Event-ID"); last != "" {
		st.after, err = c.q.StreamStart(c.ctx, c.acct(), f, s.now(), last)
	} else {
		st.first, st.after, err = c.q.LastVisibleEvent(c.ctx, c.acct(), f, s.now())
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, st, nil
}

// serve takes one of the application's stream slots (429 rate_limited
// when all are taken: it is taken here, once the request is answered for
// sure, so that a request run twice takes one) and sends the stream until
// the client goes, the server shuts down, the key or the account stops
// admitting it (checked before each batch of events is sent, and every
// StreamLease/3 when none come), or its slot is lost; then it gives the
// slot back.
func (st *eventStream) serve(w http.ResponseWriter) {
	s, ctx := st.s, st.r.Context()
	app, mode := st.caller.key.App.ID, st.caller.mode
	id := rental.NewID("stream")
	if err := s.db.OpenStream(ctx, app, mode, id); err != nil {
		s.writeError(w, st.r, err)
		return
	}
	defer s.db.CloseStream(context.WithoutCancel(ctx), app, mode, id)
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Time{}) // the server's write timeout is for answers, not streams
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if st.first != "" {
		fmt.Fprintf(w, "id: %s\n\n", st.first)
	}
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
			if s.db.RenewStream(ctx, app, mode, id) != nil || !st.admitted(ctx) {
				return
			}
			renewed = time.Now()
		}
		events, err := st.next(ctx)
		if err != nil {
			return // the client reconnects with Last-Event-ID
		}
		if len(events) > 0 {
			before := st.f.Prefixes
			if !st.admitted(ctx) {
				return
			}
			if !slices.Equal(before, st.f.Prefixes) { // the scopes changed: read again with the new ones
				if events, err = st.next(ctx); err != nil {
					return
				}
			}
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

// next reads the events after the last one sent. A landlord's clock behind
// that event's time was taken back by a sandbox's reset, which deleted
// every event before it: every event stored now is new, and the stream
// goes on from the first.
func (st *eventStream) next(ctx context.Context) ([]store.StoredEvent, error) {
	s := st.s
	clock, err := s.db.Read().LandlordClock(ctx, st.caller.account.LandlordID)
	if err != nil {
		return nil, err
	}
	if clock < st.after {
		st.after = 0
	}
	return s.db.Read().StreamEvents(ctx, st.caller.account, st.f, s.now(), st.after)
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
