package main

import (
	"io"
	"sync"
	"time"
)

// logBuffer gathers the service's log lines and writes them out in
// batches: a line a request, each its own write (a system call), cost
// the API a measurable part of its throughput. Lines reach out within every, at
// once when logBufferSize bytes are waiting, and all of them on Close,
// which serve defers; a process killed outright loses at most the last
// interval's lines.
//
// A request adding its line never waits for out: the batch is taken from
// under the lock and written by the flushing goroutine while new lines
// gather in the other buffer. Only when out falls logBufferMax behind (a
// stalled log reader) do writers wait for it, so that a log never grows
// without bound.
type logBuffer struct {
	mu   sync.Mutex
	out  io.Writer
	buf  []byte // the lines waiting
	err  error  // the first write to out that failed, reported by Close
	shut bool   // closed: each write goes out at once
	// spare is the buffer last written, emptied, for the next batch.
	spare []byte
	// writing keeps the batches in order, one write to out at a time.
	writing sync.Mutex
	// full asks the flushing goroutine to write now.
	full chan struct{}
	stop chan struct{}
	done chan struct{}
}

const (
	// logBufferSize is how much may wait before the batch is written at
	// once.
	logBufferSize = 64 << 10
	// logBufferMax is how much may wait while out is still writing the
	// batch before: beyond it, the writer of a line writes what waits.
	logBufferMax = 16 * logBufferSize
)

// newLogBuffer starts flushing to out every interval until Close.
func newLogBuffer(out io.Writer, every time.Duration) *logBuffer {
	b := &logBuffer{out: out, buf: make([]byte, 0, logBufferSize), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-b.full:
			case <-b.stop:
				return
			}
			b.flush()
		}
	}()
	return b
}

// Write queues p (one whole log line from slog's handler).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	n, shut := len(b.buf), b.shut
	b.mu.Unlock()
	switch {
	case shut || n >= logBufferMax:
		b.flush()
	case n >= logBufferSize:
		select {
		case b.full <- struct{}{}:
		default: // already asked
		}
	}
	return len(p), nil
}

// flush writes what waits, after any batch taken before it.
func (b *logBuffer) flush() {
	b.writing.Lock()
	defer b.writing.Unlock()
	b.mu.Lock()
	batch := b.buf
	if len(batch) == 0 {
		b.mu.Unlock()
		return
	}
	b.buf, b.spare = b.spare[:0], nil
	b.mu.Unlock()
	_, err := b.out.Write(batch)
	b.mu.Lock()
	if err != nil && b.err == nil {
		b.err = err
	}
	if cap(batch) <= logBufferMax { // one grown past it by a stall is let go
		b.spare = batch[:0]
	}
	b.mu.Unlock()
}

// Close stops the flushing and writes what is left; later writes go out
// at once.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	b.mu.Lock()
	b.shut = true
	b.mu.Unlock()
	b.flush()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}
