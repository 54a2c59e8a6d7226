package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lines from many goroutines all arrive whole and in each writer's order:
// within the interval while the service runs, the rest at Close, and at
// once after it.
func TestLogBufferDeliversEveryLine(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	b := newLogBuffer(&out, 10*time.Millisecond)
	b.Write([]byte("first\n"))
	deadline := time.Now().Add(5 * time.Second)
	for out.String() != "first\n" {
		if time.Now().After(deadline) {
			t.Fatalf("a line waited more than 5 s: %q", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2000 { // 8 × 2,000 lines of ~40 bytes: several full buffers
				fmt.Fprintf(b, "writer %d line %04d ..................\n", w, i)
			}
		})
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b.Write([]byte("after close\n"))
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+8*2000+1 || lines[0] != "first" || lines[len(lines)-1] != "after close" {
		t.Fatalf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	next := map[int]int{}
	for _, l := range lines[1 : len(lines)-1] {
		var w, i int
		if _, err := fmt.Sscanf(l, "writer %d line %d", &w, &i); err != nil {
			t.Fatalf("torn line %q", l)
		}
		if i != next[w] {
			t.Fatalf("writer %d: line %d after %d", w, i, next[w]-1)
		}
		next[w]++
	}
}
