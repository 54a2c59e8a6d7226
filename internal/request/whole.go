package request

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
)

// Listener returns ln whose connections can hold a response's writes
// until it is whole (see Whole). net/http buffers a response in 4 KB:
// a page of 13 KB left in two writes, the first with the header, and on
// loopback or a LAN each write is a system call and a packet train the
// client wakes for. Serve with ConnContext so that handlers find them.
func Listener(ln net.Listener) net.Listener {
	return holdingListener{ln, &sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}}
}

// ConnContext is an http.Server's ConnContext for a Listener's
// connections: it puts the connection where Whole finds it.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*holdingConn); ok {
		return context.WithValue(ctx, connKey{}, hc)
	}
	return ctx
}

// Field is one header of a response that Whole may write itself (see
// Whole): its name as Go keeps it (http.CanonicalHeaderKey) and a value
// with no line breaks.
type Field struct{ Name, Value string }

// Whole sends the whole of a response: its status, after the header set on
// w (Content-Length included when there is a body) and late, then body.
// When the request came on a Listener's connection and the body is at
// most maxWhole, the header and body leave in one write, and late's
// fields are written into the header by Whole rather than put in w's map:
// net/http's map of a response's header outgrows a small map's eight
// entries with a live answer's eleven, and it and the copy net/http makes
// of it were a third of the bytes a read allocated. Elsewhere (a test's
// server, a longer body, no body) late is set on w's header, and it is
// w.WriteHeader and w.Write.
func Whole(ctx context.Context, w http.ResponseWriter, status int, late []Field, body []byte) (int, error) {
	c, _ := ctx.Value(connKey{}).(*holdingConn)
	if c == nil || len(body) == 0 || len(body) > maxWhole {
		SetFields(w.Header(), late)
		w.WriteHeader(status)
		if len(body) == 0 {
			return 0, nil
		}
		return w.Write(body)
	}
	buf := c.buffers.Get().(*[]byte)
	c.held, c.late = (*buf)[:0], late
	defer func() { // also when a write panics: the connection writes again
		*buf = c.held[:0]
		c.held, c.late = nil, nil
		c.buffers.Put(buf)
	}()
	w.WriteHeader(status)
	n, err := w.Write(body)
	if err == nil {
		// What net/http still buffers (the body's tail) joins the rest.
		if err = http.NewResponseController(w).Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	if c.late != nil {
		// net/http wrote no status line to put late after: the answer
		// cannot go as it should, and the connection must not carry it.
		c.Conn.Close()
		return n, cmp.Or(err, errNoStatusLine)
	}
	if len(c.held) > 0 {
		if _, werr := c.Conn.Write(c.held); werr != nil {
			// net/http took these bytes as written: a connection that
			// sent part of an answer must not carry the next one.
			c.Conn.Close()
			err = cmp.Or(err, werr)
		}
	}
	return n, err
}

// SetFields sets fields on h: where Whole cannot write them itself, and for
// an answer that does not go through Whole (an event stream).
func SetFields(h http.Header, fields []Field) {
	for _, f := range fields {
		h[f.Name] = []string{f.Value}
	}
}

// errNoStatusLine is Whole's error when what net/http wrote had no status
// line to put late's fields after.
var errNoStatusLine = errors.New("request: a held answer has no status line")

// maxWhole bounds the bodies Whole holds: a longer one goes as net/http
// writes it, its pieces large enough that their number matters little.
const maxWhole = 64 << 10

type connKey struct{}

// holdingListener makes holdingConns. buffers are what they hold writes
// in, shared: one each would stay with every idle keep-alive connection.
type holdingListener struct {
	net.Listener
	buffers *sync.Pool
}

func (l holdingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &holdingConn{Conn: c, buffers: l.buffers}, nil
}

// holdingConn is a connection whose writes, while held is not nil, are
// appended to it instead of sent. Only the goroutine serving the
// connection's request writes to it, so held needs no lock.
type holdingConn struct {
	net.Conn
	buffers *sync.Pool
	held    []byte
	// late are header fields the held answer is sent with, put after its
	// status line when that is written (then late is nil).
	late []Field
}

func (c *holdingConn) Write(p []byte) (int, error) {
	if c.held == nil {
		return c.Conn.Write(p)
	}
	n := len(p)
	if c.late != nil {
		if i := bytes.Index(p, crlf); i >= 0 {
			c.held = append(c.held, p[:i+2]...)
			for _, f := range c.late {
				c.held = append(append(append(append(c.held, f.Name...), ": "...), f.Value...), crlf...)
			}
			c.late, p = nil, p[i+2:]
		}
	}
	c.held = append(c.held, p...)
	return n, nil
}

var crlf = []byte("\r\n")

// CloseWrite and ReadFrom are the TCP connection's, which net/http looks
// for: a graceful close sends its FIN first, and a file is sent with
// sendfile.
func (c *holdingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *holdingConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok && c.held == nil {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c}, r)
}
