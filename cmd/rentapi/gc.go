package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is the collector's pace unless the operator set GOGC: the
// heap may grow to three times what is live before a collection. The
// service allocates a page's worth per request, so at Go's default of 100
// collecting took a large share of the CPU.
const gcPercent = 200

// gcFloor is the smallest heap goal the pace is raised to. The service
// keeps only a few megabytes live between requests, so three times that
// meant collections many times a second under a high read rate, and
// requests that ran during one waited for the collector's share of the two
// cores. With the goal at least this, collections are several times rarer,
// and reads' tail latency and CPU went down; a higher floor was slower and
// grew the resident memory (the figures are in bench/README.md, "Past
// measurements"). The goal is still three times the live heap whenever
// that is larger, so an overload with thousands of requests waiting never
// meets a limit below what it keeps alive (a memory limit did: the
// collector ran without pause and the service all but stopped answering).
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
