package request

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// countingListener counts the writes to its connections.
type countingListener struct {
	net.Listener
	mu     sync.Mutex
	writes int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, l}, nil
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (c countingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.l.mu.Unlock()
	return c.Conn.Write(p)
}

// A response written with Whole leaves in one write, header and body,
// whatever its size up to maxWhole, on a server serving a Listener with
// ConnContext; over maxWhole, or with no body, it still arrives whole. The
// client gets the same bytes and header fields either way, late ones
// included, on one keep-alive connection; on a held answer the late ones
// never were in the header's map.
func TestWholeIsOneWrite(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counted := &countingListener{Listener: ln}
	srv := &http.Server{ConnContext: ConnContext, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		body := bytes.Repeat([]byte("0123456789abcdef"), n/16)
		if n > 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.Header().Set("X-Early", "set")
		sw := &StatusWriter{ResponseWriter: w}
		late := []Field{{"X-Late-One", "1"}, {"X-Late-Two", strconv.Itoa(n)}}
		if m, err := Whole(r.Context(), sw, http.StatusCreated, late, body); m != len(body) || err != nil {
			t.Errorf("Whole: %d of %d, %v", m, len(body), err)
		}
		held := n > 0 && n <= maxWhole
		if _, inMap := w.Header()["X-Late-One"]; inMap == held || sw.Status != http.StatusCreated {
			t.Errorf("n=%d: late fields in the map %v, status %d", n, inMap, sw.Status)
		}
	})}
	go srv.Serve(Listener(counted))
	defer srv.Close()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	for _, n := range []int{16, 2048, 4096, 5120, 13312, maxWhole, 2 * maxWhole, 0} {
		counted.mu.Lock()
		counted.writes = 0
		counted.mu.Unlock()
		if _, err := io.WriteString(c, "GET /?n="+strconv.Itoa(n)+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(body) != n || n > 0 && !strings.HasPrefix(string(body), "0123456789abcdef") {
			t.Fatalf("n=%d: %d bytes, %v", n, len(body), err)
		}
		if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Early") != "set" || resp.Header.Get("X-Late-One") != "1" ||
			resp.Header.Get("X-Late-Two") != strconv.Itoa(n) || len(resp.Header["X-Late-One"]) != 1 {
			t.Errorf("n=%d: %d %v", n, resp.StatusCode, resp.Header)
		}
		counted.mu.Lock()
		writes := counted.writes
		counted.mu.Unlock()
		if n <= maxWhole && writes != 1 {
			t.Errorf("n=%d: %d writes, want 1", n, writes)
		}
	}
	// A HEAD's answer is the header alone, late fields in it.
	if _, err := io.WriteString(c, "HEAD /?n=13312 HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(rd, &http.Request{Method: http.MethodHead})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("X-Late-Two") != "13312" || resp.ContentLength != 13312 {
		t.Errorf("HEAD: %d %v", resp.StatusCode, resp.Header)
	}
}

// failingConn fails every write and remembers being closed.
type failingConn struct {
	net.Conn
	closed bool
}

func (c *failingConn) Write([]byte) (int, error) { return 0, errors.New("connection reset") }
func (c *failingConn) Close() error              { c.closed = true; return nil }

// connWriter is a ResponseWriter writing straight to a connection, as
// net/http's does in the end.
type connWriter struct {
	http.ResponseWriter
	c net.Conn
}

func (w connWriter) Write(p []byte) (int, error) { return w.c.Write(p) }
func (w connWriter) WriteHeader(int)             {}

// A held answer that the connection fails to send closes the connection:
// net/http took the bytes as written, and a connection that sent part of an
// answer must not carry the next one. The error is Whole's.
func TestWholeFailedWriteCloses(t *testing.T) {
	fc := &failingConn{}
	l := Listener(nil).(holdingListener)
	hc := &holdingConn{Conn: fc, buffers: l.buffers}
	ctx := ConnContext(t.Context(), hc)
	if _, err := Whole(ctx, connWriter{c: hc}, http.StatusOK, nil, []byte("a body")); err == nil || !fc.closed {
		t.Fatalf("Whole: %v, closed %v; want an error and the connection closed", err, fc.closed)
	}
	if hc.held != nil {
		t.Fatal("the connection still holds its writes")
	}
}
