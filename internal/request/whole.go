package request

import (
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

// Whole writes body to w, the whole of a response whose header is set
// (Content-Length included), so that the header and body leave in one
// write when the request came on a Listener's connection. Elsewhere (a
// test's server, a body over maxWhole) it is w.Write.
func Whole(ctx context.Context, w http.ResponseWriter, body []byte) (int, error) {
	c, _ := ctx.Value(connKey{}).(*holdingConn)
	if c == nil || len(body) > maxWhole {
		return w.Write(body)
	}
	buf := c.buffers.Get().(*[]byte)
	c.held = (*buf)[:0]
	defer func() { // also when a write panics: the connection writes again
		*buf = c.held[:0]
		c.held = nil
		c.buffers.Put(buf)
	}()
	n, err := w.Write(body)
	if err == nil {
		// What net/http still buffers (the body's tail) joins the rest.
		if err = http.NewResponseController(w).Flush(); errors.Is(err, http.ErrNotSupported) {
			err = nil
		}
	}
	if len(c.held) > 0 {
		if _, werr := c.Conn.Write(c.held); werr != nil {
			// net/http took these bytes as written: a connection that
			// sent part of an answer must not carry the next one.
			c.Conn.Close()
			if err == nil {
				err = werr
			}
		}
	}
	return n, err
}

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
}

func (c *holdingConn) Write(p []byte) (int, error) {
	if c.held != nil {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

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
