// Command tail reads a Go execution trace of a server under load (rentapi's
// /debug/pprof/trace, or bench/baseline's) and says where its slowest
// requests spent their time: running, runnable (ready, waiting for a
// processor), or waiting on something else, and how many overlapped a
// garbage collection's mark phase. It is what showed that the p99 of reads
// at half the maximum rate is CPU queueing (see bench/README.md). Then what
// else the processors ran while the slowest requests were open, against
// its share of the whole trace; the longest times no request began; the
// runs of over half a millisecond without a pause, by goroutine; the time
// in system calls while the slowest requests were open, by where they were
// made, against the whole trace's; the short-lived goroutines (a request
// log's flush, a job queue's fetch) alive during the slowest requests,
// against during the rest; the GC's mark phases; the system calls of over
// half a millisecond; and the goroutines started for each request.
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
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
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

// span is a time a goroutine ran on a processor, and what that goroutine is.
type span struct {
	start, end trace.Time
	what       string
	g          *goroutine
}

func (r *request) took() time.Duration { return time.Duration(r.end - r.start) }

// goroutine is what is known of a goroutine: its state since when, why it
// waits, and the request it is serving, if any.
type goroutine struct {
	state  trace.GoState
	since  trace.Time
	reason string
	req    *request
	// what is the function the goroutine runs, the outermost frame of a
	// stack the trace gave for it.
	what string
	// cur is the span it is running, while it runs.
	cur *span
	// sys is where it made its last system call.
	sys string
	// born is when it was started, if the trace saw that.
	born trace.Time
	// insys is the system call it is in, while it is in one.
	insys *span
}

// recording is what read finds in a trace.
type recording struct {
	reqs []*request
	// spans are every time a goroutine ran.
	spans []span
	// marks are the GC mark phases' lengths.
	marks []time.Duration
	// syscalls are the system calls of over half a millisecond, by where
	// they were made (and the goroutine's function): Go gives a processor
	// stuck in one to other goroutines only when its monitor thread next
	// looks, up to 20 ms later when it has been idle.
	syscalls map[string][]time.Duration
	// created counts goroutines started, by function.
	created map[string]int
	// lives are the whole lives, start to end, of goroutines that began
	// and ended in the trace within a second: a background task's run.
	lives []span
	// sys are the times goroutines spent in system calls, what being
	// where the call was made and the goroutine's function.
	sys []span
}

const markPhase = "GC concurrent mark phase"

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tail TRACE")
		os.Exit(2)
	}
	rec, err := read(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "tail:", err)
		os.Exit(1)
	}
	reqs, spans := rec.reqs, rec.spans
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
	whole := busy(slow, spans)
	gaps(reqs, spans)
	runs(spans)
	share("in system calls (cores), during the slowest 1% / over the whole trace", slow, rec.sys, whole)
	lives("background goroutines alive (started and ended within 1 s) during a request, in the slowest 1% / the rest", slow, rest, rec.lives)
	var marked time.Duration
	for _, d := range rec.marks {
		marked += d
	}
	if len(rec.marks) > 0 {
		fmt.Printf("%d GC mark phases, %.2f ms each on average, %.1f%% of the trace\n",
			len(rec.marks), ms(marked)/float64(len(rec.marks)), 100*float64(marked)/float64(whole))
	}
	fmt.Println("system calls of over 0.5 ms (count, total, longest):")
	for _, k := range sortedBy(rec.syscalls, func(ds []time.Duration) time.Duration { return sum(ds) }) {
		ds := rec.syscalls[k]
		fmt.Printf("    %5d %8.2f ms %6.2f ms  %s\n", len(ds), ms(sum(ds)), ms(slices.Max(ds)), k)
	}
	fmt.Printf("goroutines started, a request:\n")
	for _, k := range sortedBy(rec.created, func(n int) int { return n }) {
		fmt.Printf("    %7.3f  %s\n", float64(rec.created[k])/float64(n), k)
	}
}

// sortedBy returns m's keys, largest by(value) first.
func sortedBy[V any, O int | time.Duration](m map[string]V, by func(V) O) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(by(m[b]), by(m[a])) })
	return keys
}

func sum(ds []time.Duration) (t time.Duration) {
	for _, d := range ds {
		t += d
	}
	return t
}

// busy prints what the processors ran while the slowest requests were open,
// in cores (the mean number of processors running it then), against the
// same over the whole trace: what runs more than its share during the slow
// requests is what they waited behind.
// It returns the trace's length.
func busy(slow []*request, spans []span) time.Duration {
	first, last := spans[0].start, spans[0].end
	for _, s := range spans {
		first, last = min(first, s.start), max(last, s.end)
	}
	whole := time.Duration(last - first)
	share("cores running, during the slowest 1% / over the whole trace", slow, spans, whole)
	return whole
}

// share prints how many cores spans of each kind took while the slowest
// requests were open, against over the whole trace.
func share(title string, slow []*request, spans []span, whole time.Duration) {
	idx := index(spans)
	all := map[string]time.Duration{}
	for _, s := range spans {
		all[s.what] += time.Duration(s.end - s.start)
	}
	during := map[string]time.Duration{}
	var open time.Duration
	for _, r := range slow {
		open += r.took()
		for k, d := range idx.overlaps(r) {
			during[k] += d
		}
	}
	fmt.Println(title + ":")
	for _, k := range sortedBy(during, func(d time.Duration) time.Duration { return d })[:min(len(during), 12)] {
		fmt.Printf("    %-90s %.3f / %.3f\n", k, float64(during[k])/float64(open), float64(all[k])/float64(whole))
	}
}

// lives prints, for each function of short-lived goroutines, the share of
// the slowest requests and of the rest that overlapped one of its runs.
func lives(title string, slow, rest []*request, spans []span) {
	idx := index(spans)
	count := func(reqs []*request) map[string]int {
		n := map[string]int{}
		for _, r := range reqs {
			for k := range idx.overlaps(r) {
				n[k]++
			}
		}
		return n
	}
	inSlow, inRest := count(slow), count(rest)
	fmt.Println(title + ":")
	for _, k := range sortedBy(inSlow, func(n int) int { return n })[:min(len(inSlow), 10)] {
		fmt.Printf("    %5.1f%% / %5.1f%%  %s\n", 100*float64(inSlow[k])/float64(len(slow)), 100*float64(inRest[k])/float64(len(rest)), k)
	}
}

// runs prints, for the functions whose goroutines ran longest without a
// pause, how many of their runs took over 0.5 ms, in all, and the longest:
// a processor taken from the requests that long (or a thread the kernel
// took from the process while it ran).
func runs(spans []span) {
	long := map[string][]time.Duration{}
	for _, s := range spans {
		if d := time.Duration(s.end - s.start); d > 500*time.Microsecond {
			long[s.what] = append(long[s.what], d)
		}
	}
	fmt.Println("runs of over 0.5 ms on a processor without a pause (count, total, longest):")
	for _, k := range sortedBy(long, func(ds []time.Duration) time.Duration { return sum(ds) })[:min(len(long), 8)] {
		fmt.Printf("    %5d %8.2f ms %6.2f ms  %s\n", len(long[k]), ms(sum(long[k])), ms(slices.Max(long[k])), k)
	}
}

// spanIndex is spans sorted by start, with the longest one's length: the
// spans that overlap a time begin at most that long before it.
type spanIndex struct {
	spans   []span
	longest trace.Time
}

func index(spans []span) spanIndex {
	slices.SortFunc(spans, func(a, b span) int { return int(a.start - b.start) })
	x := spanIndex{spans: spans}
	for _, s := range spans {
		x.longest = max(x.longest, s.end-s.start)
	}
	return x
}

// overlaps is how long spans of each kind overlapped r.
func (x spanIndex) overlaps(r *request) map[string]time.Duration {
	out := map[string]time.Duration{}
	i, _ := slices.BinarySearchFunc(x.spans, r.start-x.longest, func(s span, t trace.Time) int { return int(s.start - t) })
	for ; i < len(x.spans) && x.spans[i].start < r.end; i++ {
		s := x.spans[i]
		if d := min(s.end, r.end) - max(s.start, r.start); d > 0 {
			out[s.what] += time.Duration(d)
		}
	}
	return out
}

// caller is the innermost function of a stack outside the runtime and the
// sync package: what a goroutine waits in.
func caller(s trace.Stack) string {
	for f := range s.Frames() {
		if !strings.HasPrefix(f.Func, "runtime.") && !strings.HasPrefix(f.Func, "sync.") && !strings.HasPrefix(f.Func, "internal/") && !strings.HasPrefix(f.Func, "modernc.org/libc") && !strings.HasPrefix(f.Func, "syscall.") {
			return f.Func
		}
	}
	return ""
}

// gaps prints the longest times no request began, and what ran in them:
// a server that stops picking up requests, or a client or kernel that
// stops sending them (then nothing runs).
func gaps(reqs []*request, spans []span) {
	starts := make([]trace.Time, len(reqs))
	for i, r := range reqs {
		starts[i] = r.start
	}
	slices.Sort(starts)
	type gap struct{ at, end trace.Time }
	var gs []gap
	for i := 1; i < len(starts); i++ {
		gs = append(gs, gap{starts[i-1], starts[i]})
	}
	slices.SortFunc(gs, func(a, b gap) int { return int((b.end - b.at) - (a.end - a.at)) })
	for _, g := range gs[:min(5, len(gs))] {
		ran := map[string]time.Duration{}
		for _, s := range spans {
			if d := min(s.end, g.end) - max(s.start, g.at); d > 0 {
				ran[s.what] += time.Duration(d)
			}
		}
		fmt.Printf("no request began for %.2f ms at %.3f s; ran then (cores):", ms(time.Duration(g.end-g.at)), float64(g.at-starts[0])/1e9)
		for k, d := range ran {
			if c := float64(d) / float64(g.end-g.at); c >= 0.01 {
				fmt.Printf(" %s %.2f;", k, c)
			}
		}
		fmt.Println()
	}
}

// entry is the outermost function of a goroutine's stack, "" if the trace
// gave none.
func entry(s trace.Stack) string {
	what := ""
	for f := range s.Frames() {
		if f.Func != "runtime.goexit" {
			what = f.Func
		}
	}
	return what
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
	for _, k := range slices.Sorted(maps.Keys(waits)) {
		fmt.Printf("    waiting on %-100q %.3f ms\n", k, ms(waits[k]/n))
	}
}

// read returns what the trace in file holds.
func read(file string) (*recording, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := trace.NewReader(f)
	if err != nil {
		return nil, err
	}
	rec := &recording{syscalls: map[string][]time.Duration{}, created: map[string]int{}}
	gs := map[trace.GoID]*goroutine{}
	var ran []*span
	var markStart trace.Time
	marking := false
	for {
		ev, err := r.ReadEvent()
		if err == io.EOF {
			for _, s := range ran {
				if s.end != 0 {
					s.what = cmp.Or(s.g.what, "(no stack in the trace)")
					rec.spans = append(rec.spans, *s)
				}
			}
			return rec, nil
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind() {
		case trace.EventRangeBegin, trace.EventRangeEnd:
			if ev.Range().Name == markPhase {
				marking = ev.Kind() == trace.EventRangeBegin
				if marking {
					markStart = ev.Time()
				} else if markStart != 0 {
					rec.marks = append(rec.marks, time.Duration(ev.Time()-markStart))
				}
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
		if from == trace.GoNotExist && to == trace.GoRunnable {
			rec.created[entry(st.Stack)]++
		}
		if w := entry(st.Stack); w != "" {
			g.what = w
		}
		if g.cur != nil {
			g.cur.end, g.cur = now, nil
		}
		if to == trace.GoSyscall {
			g.sys = caller(ev.Stack())
			g.insys = &span{start: now, g: g}
		}
		if from == trace.GoNotExist {
			g.born = now
		}
		if g.insys != nil && to != trace.GoSyscall {
			g.insys.end = now
			g.insys.what = g.sys + " (in " + cmp.Or(g.what, "?") + ")"
			rec.sys = append(rec.sys, *g.insys)
			g.insys = nil
		}
		if to == trace.GoNotExist && g.born != 0 && now-g.born < trace.Time(time.Second) {
			rec.lives = append(rec.lives, span{start: g.born, end: now, what: cmp.Or(g.what, "(no stack in the trace)")})
		}
		if g.state == trace.GoSyscall {
			if d := time.Duration(now - g.since); d > 500*time.Microsecond && g.sys != "os/signal.signal_recv" {
				k := g.sys + " (in " + g.what + ")"
				rec.syscalls[k] = append(rec.syscalls[k], d)
			}
		}
		if to == trace.GoRunning {
			g.cur = &span{start: now, g: g}
			ran = append(ran, g.cur)
		}
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
				rec.reqs = append(rec.reqs, g.req)
				g.req = nil
			}
		case from == trace.GoWaiting && to == trace.GoRunnable && strings.HasPrefix(g.reason, "network") && g.req == nil:
			g.req = &request{start: now, waits: map[string]time.Duration{}}
		}
		g.state, g.since = to, now
		if to == trace.GoWaiting {
			g.reason = st.Reason
			if f := caller(ev.Stack()); f != "" {
				g.reason += " in " + f
			}
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
