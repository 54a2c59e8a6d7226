// Package buckettest starts Redis servers of a test's own, so a test can
// stop one and start it again: what the service does while its Redis is
// down, and after it comes back, is tested without touching the Redis
// every other test shares (RENTAPI_TEST_REDIS), which must never stop.
package buckettest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// Redis is a redis-server of the test's own, on a port of its own, keeping
// nothing on disk.
type Redis struct {
	// URL reaches it, whether it is running or not.
	URL  string
	t    testing.TB
	port int
	dir  string
	cmd  *exec.Cmd
}

// StartRedis starts a redis-server on a free loopback port, stopped when
// the test ends. Without the redis-server program the test is skipped,
// unless RENTAPI_TEST_REDIS is set (CI, where Redis is installed): then
// it fails.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("RENTAPI_TEST_REDIS") != "" {
			t.Fatal("redis-server is not installed, and RENTAPI_TEST_REDIS says Redis is there")
		}
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	r := &Redis{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), t: t, port: port, dir: t.TempDir()}
	t.Cleanup(r.Stop)
	r.Start()
	return r
}

// Start starts the server again on its port, and waits until it answers.
func (r *Redis) Start() {
	r.t.Helper()
	if r.cmd != nil {
		r.t.Fatal("buckettest: Redis is already running")
	}
	r.cmd = exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(r.port),
		"--save", "", "--appendonly", "no", "--dir", r.dir)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(r.port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			r.Stop()
			r.t.Fatalf("buckettest: redis-server did not start on port %d: %v", r.port, err)
		}
	}
}

// Stop kills the server (as a crash would: no goodbye to its clients) and
// waits until it is gone. Stopping a stopped server does nothing.
func (r *Redis) Stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}
