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
type logBuffer struct {
	mu   sync.Mutex
	out  io.Writer
	buf  []byte
	err  error // the first write to out that failed, reported by Close
	shut bool  // closed: each write goes out at once
	stop chan struct{}
	done chan struct{}
}

// logBufferSize is how much may wait before a write goes out at once.
const logBufferSize = 64 << 10

// newLogBuffer starts flushing to out every interval until Close.
func newLogBuffer(out io.Writer, every time.Duration) *logBuffer {
	b := &logBuffer{out: out, buf: make([]byte, 0, logBufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				b.flush()
			case <-b.stop:
				return
			}
		}
	}()
	return b
}

// Write queues p (one whole log line from slog's handler).
func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if b.shut || len(b.buf) >= logBufferSize {
		b.flushLocked()
	}
	return len(p), nil
}

func (b *logBuffer) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
}

func (b *logBuffer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	if _, err := b.out.Write(b.buf); err != nil && b.err == nil {
		b.err = err
	}
	b.buf = b.buf[:0]
}

// Close stops the flushing and writes what is left; later writes go out
// at once.
func (b *logBuffer) Close() error {
	close(b.stop)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	b.shut = true
	return b.err
}
