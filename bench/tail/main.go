// Command tail reads a Go execution trace of a server under load (rentapi's
// /debug/pprof/trace, or bench/baseline's) and says where its slowest
// requests spent their time: running, runnable (ready, waiting for a
// processor), or waiting on something else, and how many overlapped a
// garbage collection's mark phase. It is what showed that the p99 of reads
// at half the maximum rate is CPU queueing (see bench/README.md).
//
// A request is an HTTP connection's goroutine from its wake-up on the
// network (the request arrived) to its next wait on the network (the
// answer written, the next request awaited). Its own module keeps
// golang.org/x/exp out of the service's.
//
//	curl -o trace.out 'http://127.0.0.1:9464/debug/pprof/trace?seconds=4' &
//	cycle -url ... -key ... -rate 3700 -duration 5s pace
//	go run ./bench/tail trace.out    # from bench/tail: go run . ../../trace.out
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"golang.org/x/exp/trace"
)

// request is one request's time, split by the state its goroutine was in.
type request struct {
	start, end                trace.Time
	running, runnable, waited time.Duration
	// waits are the waited time by the reason the trace gives.
	waits map[string]time.Duration
	// gc is set if a GC mark phase ran during the request.
	gc bool
}

func (r *request) took() time.Duration { return time.Duration(r.end - r.start) }

// goroutine is what is known of a goroutine: its state since when, why it
// waits, and the request it is serving, if any.
type goroutine struct {
	state  trace.GoState
	since  trace.Time
	reason string
	req    *request
}

const markPhase = "GC concurrent mark phase"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tail TRACE")
		os.Exit(2)
	}
	reqs, err := read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "tail:", err)
		os.Exit(1)
	}
	if len(reqs) < 100 {
		fmt.Fprintf(os.Stderr, "tail: %d requests in the trace, too few for a p99\n", len(reqs))
		os.Exit(1)
	}
	slices.SortFunc(reqs, func(a, b *request) int { return int(b.took() - a.took()) })
	n := len(reqs)
	slow, rest := reqs[:n/100], reqs[n/100:]
	fmt.Printf("%d requests: p50 %.2f ms, p99 %.2f ms\n", n, ms(reqs[n/2].took()), ms(reqs[n/100].took()))
	report("slowest 1%", slow, true)
	report("the rest", rest, false)
}

// report prints the mean split of a group of requests.
func report(name string, reqs []*request, reasons bool) {
	var running, runnable, waited time.Duration
	gc := 0
	waits := map[string]time.Duration{}
	for _, r := range reqs {
		running += r.running
		runnable += r.runnable
		waited += r.waited
		if r.gc {
			gc++
		}
		for k, v := range r.waits {
			waits[k] += v
		}
	}
	n := time.Duration(len(reqs))
	fmt.Printf("%-10s (%d): mean running %.3f ms, runnable %.3f ms, waiting %.3f ms; %.1f%% overlap a GC mark phase\n",
		name, len(reqs), ms(running/n), ms(runnable/n), ms(waited/n), 100*float64(gc)/float64(len(reqs)))
	if !reasons {
		return
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range waits {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Printf("    waiting on %-40q %.3f ms\n", k, ms(waits[k]/n))
	}
}

// read returns the requests of the trace in file.
func read(file string) ([]*request, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return nil, err
	}
	gs := map[trace.GoID]*goroutine{}
	var reqs []*request
	marking := false
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			return reqs, nil
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventRangeBegin, trace.EventRangeEnd:
			if ev.Range().Name == markPhase {
				marking = ev.Kind() == trace.EventRangeBegin
			}
			continue
		case trace.EventStateTransition:
		default:
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		from, to := st.Goroutine()
		g := gs[st.Resource.Goroutine()]
		if g == nil {
			g = &goroutine{}
			gs[st.Resource.Goroutine()] = g
		}
		now := ev.Time()
		if q := g.req; q != nil {
			d := time.Duration(now - g.since)
			switch g.state {
			case trace.GoRunning:
				q.running += d
			case trace.GoRunnable:
				q.runnable += d
			case trace.GoWaiting:
				q.waited += d
				q.waits[g.reason] += d
			}
			q.gc = q.gc || marking
		}
		switch {
		case to == trace.GoWaiting && st.Reason == "network":
			if g.req != nil {
				g.req.end = now
				reqs = append(reqs, g.req)
				g.req = nil
			}
		case from == trace.GoWaiting && to == trace.GoRunnable && g.reason == "network" && g.req == nil:
			g.req = &request{start: now, waits: map[string]time.Duration{}}
		}
		g.state, g.since = to, now
		if to == trace.GoWaiting {
			g.reason = st.Reason
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
