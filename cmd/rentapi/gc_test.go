package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPaceFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcPercent},           // nothing measured yet
		{gcFloor, gcPercent},     // three times live is above the floor
		{gcFloor / 3, gcPercent}, // three times live is the floor
		{4 << 20, 700},           // 4 MB live: the goal is the floor, 32 MB
		{5 << 20, 540},           // 5 MB: 32 MB is 6.4 times live
		{gcFloor / 2, gcPercent}, // 16 MB live: 48 MB goal
	} {
		got := paceFor(c.live, gcFloor)
		if got != c.want {
			t.Errorf("paceFor(%d) = %d, want %d", c.live, got, c.want)
		}
		if goal := c.live * uint64(100+got) / 100; c.live > 0 && goal < gcFloor-c.live/100 {
			t.Errorf("paceFor(%d): goal %d below the floor", c.live, goal)
		}
	}
}

// gogc is the pace the collector runs at now.
func gogc() uint64 { return readMetric("/gc/gogc:percent") }

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitPace collects until want holds of the pace and the heap goal (a
// cleanup runs on its own goroutine after the collection that freed its
// object, so the two are read until they agree).
func waitPace(t *testing.T, want func(pace, goal uint64) bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if want(gogc(), readMetric("/gc/heap/goal:bytes")) {
			return
		}
	}
	t.Fatalf("pace stayed %d, heap goal %d", gogc(), readMetric("/gc/heap/goal:bytes"))
}

// Serial: the collector's pace is the whole process's, and the heap it
// is tuned for must be this test's alone.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(old) })

	// The operator's GOGC stands.
	tuneGC(t.Context(), func(k string) string {
		if k == "GOGC" {
			return "100"
		}
		return ""
	})
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC set: pace %d, want the operator's 100", got)
	}

	// Unset: this test's heap is a few MB live, so after a collection the
	// pace is raised for a goal of at least the floor; once ctx ends it
	// goes back to gcPercent.
	ctx, cancel := context.WithCancel(t.Context())
	tuneGC(ctx, func(string) string { return "" })
	waitPace(t, func(pace, goal uint64) bool { return pace > gcPercent && goal >= gcFloor })
	cancel()
	waitPace(t, func(pace, goal uint64) bool { return pace == gcPercent })
}
