package api

import (
	"context"
	"sync"
	"time"

	"rentapi/internal/rental"
)

// gate bounds the requests served at once, and gives each developer a fair
// share of them: one developer's slow or heavy requests can fill their own
// share, never the whole gate, so other developers' requests still find a
// place. A request waits up to wait for a place, then gets 503.
type gate struct {
	all   chan struct{}
	share int
	wait  time.Duration

	mu  sync.Mutex
	per map[string]*shareSlots
	// spare are shareSlots no developer uses, empty, for the next to join:
	// a developer whose requests come one at a time would otherwise make
	// new ones for each.
	spare []*shareSlots
}

// maxSpare bounds the spare shareSlots kept.
const maxSpare = 64

// shareSlots are one developer's places, kept while anyone holds or waits
// for one.
type shareSlots struct {
	slots chan struct{}
	users int
}

// newGate makes a gate of size places, of which one developer may hold at
// most a quarter (at least one).
func newGate(size int, wait time.Duration) *gate {
	return &gate{all: make(chan struct{}, size), share: max(1, size/4), wait: wait, per: map[string]*shareSlots{}}
}

// inFlight is the number of requests holding a place.
func (g *gate) inFlight() int { return len(g.all) }

// enter takes a place for a request of the developer, first within the
// developer's share, then in the gate, waiting up to the gate's time in all.
// The returned func gives the place back.
func (g *gate) enter(ctx context.Context, developer string) (func(), error) {
	own := g.join(developer)
	timeout := &lazyTimer{d: g.wait}
	defer timeout.stop()
	if !take(ctx, own.slots, timeout) {
		g.leave(developer)
		return nil, refusal(ctx)
	}
	if !take(ctx, g.all, timeout) {
		<-own.slots
		g.leave(developer)
		return nil, refusal(ctx)
	}
	return func() {
		<-g.all
		<-own.slots
		g.leave(developer)
	}, nil
}

// lazyTimer is a timer started only when first waited on: a request that
// finds a place at once, nearly every one, makes none (a timer a request
// was 3 % of what a read allocated).
type lazyTimer struct {
	d time.Duration
	t *time.Timer
}

// c is the timer's channel, the timer started now if it was not yet.
func (l *lazyTimer) c() <-chan time.Time {
	if l.t == nil {
		l.t = time.NewTimer(l.d)
	}
	return l.t.C
}

func (l *lazyTimer) stop() {
	if l.t != nil {
		l.t.Stop()
	}
}

// take puts a token in c, at once when there is room, else unless the
// timeout or the request's end comes first.
func take(ctx context.Context, c chan struct{}, timeout *lazyTimer) bool {
	select {
	case c <- struct{}{}:
		return true
	default:
	}
	select {
	case c <- struct{}{}:
		return true
	case <-timeout.c():
	case <-ctx.Done():
	}
	return false
}

func (g *gate) join(developer string) *shareSlots {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.per[developer]
	if s == nil {
		if n := len(g.spare); n > 0 {
			s, g.spare = g.spare[n-1], g.spare[:n-1]
		} else {
			s = &shareSlots{slots: make(chan struct{}, g.share)}
		}
		g.per[developer] = s
	}
	s.users++
	return s
}

func (g *gate) leave(developer string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if s := g.per[developer]; s != nil {
		if s.users--; s.users == 0 {
			// Its last user gave its place back before leaving: empty.
			delete(g.per, developer)
			if len(g.spare) < maxSpare {
				g.spare = append(g.spare, s)
			}
		}
	}
}

// refusal is why no place was taken: the client went away (a client
// abort), or the wait ran out (503).
func refusal(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return overloaded()
}

func overloaded() error {
	return rental.Overloaded()
}
