package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is the collector's pace unless the operator set GOGC: the
// heap may grow to three times what is live before a collection. The
// service allocates a page's worth per request, so Go's default of 100
// spent a fifth of the CPU collecting.
const gcPercent = 200

// gcFloor is the smallest heap goal the pace is raised to. The service
// keeps about 5 MB live between requests, so three times that was a
// collection every 40 ms at 5,000 reads a second, and requests that ran
// during one waited for the collector's share of the two cores. With the
// goal at least this, collections are several times rarer (GET bills at
// 5,000/s on SQLite, interleaved: p99 -21 %, CPU a request -3 %; a 64 MB
// floor was slower and passed 100 MB resident). The goal is still three
// times the live heap whenever that is larger, so an overload with
// thousands of requests waiting never meets a limit below what it keeps
// alive (a 64 MiB memory limit did: the collector ran without pause and
// the service answered 5 requests a second).
const gcFloor = 32 << 20

// tuneGC sets the collector's pace unless the operator set GOGC: at least
// gcPercent, raised after each collection so that the next goal is at
// least gcFloor. It stops raising when ctx ends.
func tuneGC(ctx context.Context, getenv func(string) string) {
	if getenv("GOGC") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var watch func()
	watch = func() {
		// A cleanup runs after the collection that found its object
		// unreachable: once per cycle, the next one armed from it.
		runtime.AddCleanup(new([16]byte), func(struct{}) {
			if ctx.Err() != nil {
				debug.SetGCPercent(gcPercent)
				return
			}
			metrics.Read(live)
			debug.SetGCPercent(paceFor(live[0].Value.Uint64(), gcFloor))
			watch()
		}, struct{}{})
	}
	watch()
}

// paceFor is the GOGC percentage that puts the next heap goal at three
// times live, or at floor when that is more.
func paceFor(live, floor uint64) int {
	if live == 0 || live*(100+gcPercent)/100 >= floor {
		return gcPercent
	}
	return int(floor*100/live) - 100
}
