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

// stalledWriter is a log reader that has stopped reading: each Write
// waits until release is closed.
type stalledWriter struct {
	release chan struct{}
	mu      sync.Mutex
	got     []byte
	writes  int
}

func (w *stalledWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	w.mu.Unlock()
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got = append(w.got, p...)
	return len(p), nil
}

// While out is stalled in a write, requests keep adding their lines
// without waiting for it, up to logBufferMax; past that a line's writer
// waits (the log does not grow without bound). Once out reads again,
// every line arrives, in order.
func TestLogBufferLinesDoNotWaitForAStalledOut(t *testing.T) {
	t.Parallel()
	out := &stalledWriter{release: make(chan struct{})}
	b := newLogBuffer(out, time.Hour)
	line := []byte(strings.Repeat("x", 99) + "\n")
	n := 0
	write := func() {
		b.Write(line)
		n++
	}
	for range logBufferSize / len(line) {
		write() // the first batch: the flusher takes it, and stalls in out
	}
	write()
	for { // wait until the flusher holds the first batch
		out.mu.Lock()
		stalled := out.writes == 1
		out.mu.Unlock()
		if stalled {
			break
		}
		time.Sleep(time.Millisecond)
	}
	added := make(chan struct{})
	go func() {
		defer close(added)
		for range (logBufferMax - 2*logBufferSize) / len(line) {
			write() // more than a batch while out is stalled: none waits
		}
	}()
	select {
	case <-added:
	case <-time.After(30 * time.Second):
		t.Fatal("a line waited for a stalled out below logBufferMax")
	}
	blocked := make(chan struct{})
	go func() {
		defer close(blocked)
		for range 3 * logBufferSize / len(line) {
			write() // past logBufferMax: this writer must wait for out
		}
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case <-blocked:
		t.Fatal("lines past logBufferMax did not wait for the stalled out")
	default:
	}
	close(out.release)
	<-blocked
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if want := n * len(line); len(out.got) != want {
		t.Fatalf("%d bytes arrived, want %d", len(out.got), want)
	}
}
