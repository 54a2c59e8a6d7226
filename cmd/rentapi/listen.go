package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/webhook"
)

// listen forwards an account's events to a URL on the developer's machine
// as webhook deliveries, without registering an endpoint or letting the
// service reach that machine: it holds GET /v1/events/stream open and
// POSTs each event to --forward-to with the headers and signature a
// delivery has, signed with a secret made for the session, one event at a
// time in the stream's order. When the stream drops it reconnects with
// Last-Event-ID, so nothing is skipped or repeated.
func (e environment) listen(ctx context.Context, args []string) error {
	f := e.flags("listen")
	var key, forward, events, base, account string
	f.String(&key, "api-key", "RENTAPI_API_KEY", "", "the API key whose account's events are forwarded: a test key's sandbox, or a live key's account", "")
	f.String(&forward, "forward-to", "RENTAPI_FORWARD_TO", "", "the URL each event is POSTed to as a signed webhook delivery", "")
	f.String(&events, "events", "RENTAPI_LISTEN_EVENTS", "", "the event types to forward, comma-separated (such as bill.*,payment.paid)", "empty: every type the key may read")
	f.String(&base, "api-base", "RENTAPI_API_BASE", "http://127.0.0.1:8080", "the service's base URL", "")
	f.String(&account, "account", "RENTAPI_ACCOUNT", "", "the account, for a live key bound to none (sent as SERVICE-Account)", "")
	if err := f.parse(args, "rentapi listen --api-key svc_… --forward-to http://localhost:3000/hook [flags]"); err != nil {
		return err
	}
	if key == "" || forward == "" {
		return errors.New("listen needs --api-key and --forward-to")
	}
	if u, err := url.Parse(forward); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--forward-to must be an http:// or https:// URL, not %q", forward)
	}
	stream, err := url.Parse(strings.TrimSuffix(base, "/") + "/v1/events/stream")
	if err != nil || stream.Host == "" {
		return fmt.Errorf("--api-base must be the service's URL, not %q", base)
	}
	if events != "" {
		stream.RawQuery = url.Values{"type": {events}}.Encode()
	}
	l := &listener{stream: stream.String(), key: key, account: account, forward: forward,
		secret: rental.NewSigningSecret(), sender: webhook.NewLocalSender(), out: e.stdout, client: &http.Client{}}
	fmt.Fprintf(e.stdout, "Forwarding events to %s\nWebhook signing secret for this session: %s\n", forward, l.secret)
	return l.run(ctx)
}

// listener is one `rentapi listen` session.
type listener struct {
	stream, key, account, forward, secret string
	sender                                *webhook.Sender
	client                                *http.Client
	out                                   io.Writer
	// last is the last event forwarded: where a reconnect goes on.
	last string
}

// listenBackoff bounds the wait between reconnects.
const listenBackoff = 10 * time.Second

// run holds the stream until ctx ends, reconnecting after a drop (half a
// second after the first, twice as long after each next one without an
// event between, up to listenBackoff) or after the wait a 429 or 503
// asks. A refusal of the Last-Event-ID sent (the event is gone) starts
// again from now; any other refusal no wait will change (a bad key, a
// missing scope) ends it.
func (l *listener) run(ctx context.Context) error {
	wait := time.Duration(0)
	for {
		forwarded, retryAfter, err := l.follow(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused *streamRefusal
		if errors.As(err, &refused) && refused.lostPlace() && l.last != "" {
			// The event to resume after is gone (a sandbox reset deleted
			// it, or it is past retention): go on from now.
			fmt.Fprintf(l.out, "%s  %s is no longer stored; streaming from now on\n", time.Now().Format(time.TimeOnly), l.last)
			l.last = ""
			continue
		}
		if errors.As(err, &refused) && !refused.passing() {
			return err
		}
		if forwarded > 0 {
			wait = 0
		}
		wait = max(retryAfter, min(max(2*wait, 500*time.Millisecond), listenBackoff))
		fmt.Fprintf(l.out, "%s  stream ended (%v); reconnecting in %v\n", time.Now().Format(time.TimeOnly), err, wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// streamRefusal is an answer other than 200 to the stream's request.
type streamRefusal struct {
	status int
	body   string
}

func (r *streamRefusal) Error() string {
	return fmt.Sprintf("the service answered %d: %s", r.status, strings.TrimSpace(r.body))
}

// passing reports whether waiting may change the answer: a limit, an
// unavailable service, or a server error.
func (r *streamRefusal) passing() bool {
	return r.status == http.StatusTooManyRequests || r.status >= 500
}

// lostPlace reports whether the refusal is of the Last-Event-ID sent.
func (r *streamRefusal) lostPlace() bool {
	var e struct {
		Error struct{ Param string } `json:"error"`
	}
	return r.status == http.StatusBadRequest && json.Unmarshal([]byte(r.body), &e) == nil && e.Error.Param == "Last-Event-ID"
}

// streamSilence is how long a stream may send nothing, not even its
// keep-alive comment (every 15 seconds), before listen takes the
// connection for dead (a server gone without closing it, a laptop that
// slept) and reconnects.
const streamSilence = 45 * time.Second

// follow opens the stream (after l.last) and forwards its events until it
// ends, returning how many it forwarded, the wait a 429 or 503 asked for,
// and why it ended.
func (l *listener) follow(ctx context.Context) (int, time.Duration, error) {
	parent := ctx // deliveries' own: a slow receiver is no dead stream
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	silent := errors.New("nothing came for " + streamSilence.String())
	watchdog := time.AfterFunc(streamSilence, func() { cancel(silent) })
	defer watchdog.Stop()
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, l.stream, nil)
	if err != nil {
		return 0, 0, err
	}
	r.Header.Set("Authorization", "Bearer "+l.key)
	r.Header.Set("Accept", "text/event-stream")
	if l.account != "" {
		r.Header.Set("SERVICE-Account", l.account)
	}
	if l.last != "" {
		r.Header.Set("Last-Event-ID", l.last)
	}
	res, err := l.client.Do(r)
	if err != nil {
		return 0, 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		secs, _ := strconv.Atoi(res.Header.Get("Retry-After"))
		return 0, time.Duration(secs) * time.Second, &streamRefusal{status: res.StatusCode, body: string(body)}
	}
	if l.last == "" {
		fmt.Fprintf(l.out, "%s  ready: streaming the events from now on\n", time.Now().Format(time.TimeOnly))
	} else {
		fmt.Fprintf(l.out, "%s  ready: streaming the events after %s\n", time.Now().Format(time.TimeOnly), l.last)
	}
	forwarded := 0
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var id, typ, data string
	for sc.Scan() {
		watchdog.Reset(streamSilence)
		line := sc.Text()
		switch {
		case line == "":
			if id != "" && data != "" {
				l.deliver(parent, id, typ, data)
				watchdog.Reset(streamSilence)
				forwarded++
			}
			if id != "" { // an ID alone is where the stream began
				l.last = id
			}
			id, typ, data = "", "", ""
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
		case strings.HasPrefix(line, "event: "):
			typ = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return forwarded, 0, err
	}
	if err := sc.Err(); err != nil {
		return forwarded, 0, err
	}
	return forwarded, 0, io.ErrUnexpectedEOF
}

// deliver POSTs one event to the forward URL as a delivery of it, and
// prints what the URL answered. An event the URL does not take is not
// sent again: listen shows it, and the developer's receiver is theirs to
// fix.
func (l *listener) deliver(ctx context.Context, id, typ, data string) {
	if !json.Valid([]byte(data)) {
		fmt.Fprintf(l.out, "%s  %s  %s  skipped: not JSON\n", time.Now().Format(time.TimeOnly), typ, id)
		return
	}
	res := l.sender.Send(ctx, webhook.Delivery{URL: l.forward, Body: []byte(data), EventID: id, EventType: typ,
		DeliveryID: rental.NewID(rental.PrefixDelivery), Attempt: 1, Secrets: []string{l.secret}, Now: time.Now()})
	answer := strconv.Itoa(res.StatusCode)
	if res.StatusCode == 0 {
		answer = res.Err
	}
	fmt.Fprintf(l.out, "%s  %s  %s  → %s\n", time.Now().Format(time.TimeOnly), typ, id, answer)
}
