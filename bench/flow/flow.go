// Package flow measures work that leaves the service through its job queue
// (webhook deliveries, chat sends) as it reaches a receiver on this machine:
// the throughput of a burst, and, at a steady rate, the delay from the
// commit to the first arrival. The webhook and chat benchmarks share it.
package flow

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Arrivals records when each numbered item first reached the receiver.
type Arrivals struct {
	mu    sync.Mutex
	first map[int]time.Time
	total int
	done  chan struct{}
	want  int
}

// NewArrivals returns a record expecting nothing yet.
func NewArrivals() *Arrivals {
	a := &Arrivals{}
	a.expect(0)
	return a
}

// Arrive records an arrival of item seq (a repeat counts in the total only).
func (a *Arrivals) Arrive(seq int) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total++
	if _, seen := a.first[seq]; !seen {
		a.first[seq] = now
		if len(a.first) == a.want {
			close(a.done)
		}
	}
}

// expect resets the record for a run of n items.
func (a *Arrivals) expect(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.first, a.total, a.want, a.done = map[int]time.Time{}, 0, n, make(chan struct{})
}

// Words name what a run measures in its report: the items ("events"),
// what a burst's rate counts ("deliveries"), the receiver's requests
// ("requests"), and the moment measured ("first delivery attempt").
type Words struct {
	Items, PerSecond, Requests, Arrival string
}

// Run measures: a burst of burst items committed at once (in transactions
// of up to 500) and taken as fast as the workers go; then rate items a
// second for duration, each in its own transaction. queue commits items
// from to from+n-1. It prints what it saw.
func Run(a *Arrivals, queue func(from, n int) error, burst, rate int, duration time.Duration, w Words) error {
	commits := map[int]time.Time{}
	commit := func(from, n int) error {
		err := queue(from, n)
		now := time.Now()
		for i := from; i < from+n; i++ {
			commits[i] = now
		}
		return err
	}
	a.expect(burst)
	start := time.Now()
	for i := 0; i < burst; i += 500 {
		if err := commit(i, min(500, burst-i)); err != nil {
			return err
		}
	}
	committed := time.Since(start)
	if err := a.wait(5*time.Minute, w); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("  burst of %d %s (committed in %v): taken in %v = %.0f %s/s (%d %s)\n", burst, w.Items,
		committed.Round(time.Millisecond), took.Round(time.Millisecond), float64(burst)/took.Seconds(), w.PerSecond, a.total, w.Requests)

	n := int(duration.Seconds() * float64(rate))
	a.expect(n)
	clear(commits)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range n {
		<-tick.C
		if err := commit(burst+i, 1); err != nil {
			return err
		}
	}
	tick.Stop()
	if err := a.wait(2*time.Minute, w); err != nil {
		return err
	}
	var delays []time.Duration
	a.mu.Lock()
	for seq, at := range a.first {
		delays = append(delays, at.Sub(commits[seq]))
	}
	a.mu.Unlock()
	slices.SortFunc(delays, func(x, y time.Duration) int { return cmp.Compare(x, y) })
	q := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))].Round(time.Millisecond) }
	fmt.Printf("  %d %s at %d/s: commit to %s p50 %v, p99 %v, max %v\n", n, w.Items, rate, w.Arrival, q(0.5), q(0.99), q(1))
	return nil
}

// wait waits for every expected item, or fails after limit.
func (a *Arrivals) wait(limit time.Duration, w Words) error {
	a.mu.Lock()
	done := a.done
	a.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-time.After(limit):
		a.mu.Lock()
		defer a.mu.Unlock()
		return fmt.Errorf("only %d of %d %s arrived", len(a.first), a.want, w.Items)
	}
}

// Drain measures the taking of a backlog alone: with the queue held, n
// items (numbered from from) are committed in transactions of up to 500;
// then the queue is released and timed until every item has arrived. Run's
// burst times the commits too, which on a busy machine can take longer
// than the taking; this is the rate of the workers themselves.
func Drain(a *Arrivals, queue func(from, n int) error, hold, release func() error, from, n int, w Words) error {
	if err := hold(); err != nil {
		return err
	}
	a.expect(n)
	for i := 0; i < n; i += 500 {
		if err := queue(from+i, min(500, n-i)); err != nil {
			return err
		}
	}
	start := time.Now()
	if err := release(); err != nil {
		return err
	}
	if err := a.wait(5*time.Minute, w); err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Printf("  backlog of %d %s, queued then released: taken in %v = %.0f %s/s (%d %s)\n", n, w.Items,
		took.Round(time.Millisecond), float64(n)/took.Seconds(), w.PerSecond, a.total, w.Requests)
	return nil
}
