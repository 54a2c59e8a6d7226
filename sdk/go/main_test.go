package rentapi_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"
)

// The SDK is tested against the real service: TestMain builds rentapi from
// this repository (or takes RENTAPI_BIN), starts `rentapi serve` on a new
// SQLite database, and hands its address and sandbox key to the tests and
// the examples through RENTAPI_BASE_URL and RENTAPI_KEY, which the
// examples read as a developer's program would.
var (
	bin     string
	baseURL string
	testKey string
	// serverLog is what the service wrote to stderr, shown when a test
	// fails.
	serverLog = &syncBuffer{}
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rentapi sdk tests:", err)
		fmt.Fprintln(os.Stderr, serverLog.String())
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	dir, err := os.MkdirTemp("", "rentapi-sdk-go-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	bin = os.Getenv("RENTAPI_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "rentapi")
		build := exec.Command("go", "build", "-o", bin, "./cmd/rentapi")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("building rentapi: %v\n%s", err, out)
		}
	}
	srv := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--webhook-allow-loopback", "--log-level", "warn")
	srv.Env = append(os.Environ(), "RENTAPI_DB=sqlite:"+filepath.Join(dir, "rentapi.db"), "RENTAPI_SECRET_FILE="+filepath.Join(dir, "secret"))
	srv.Stderr = serverLog
	out, err := srv.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := srv.Start(); err != nil {
		return 0, err
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	key := regexp.MustCompile(`sandbox test key .*: (svc_test_\S+)`)
	ready := make(chan struct{})
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			if m := listening.FindStringSubmatch(lines.Text()); m != nil {
				baseURL = m[1]
			}
			if m := key.FindStringSubmatch(lines.Text()); m != nil {
				testKey = m[1]
			}
			if baseURL != "" && testKey != "" {
				close(ready)
				io.Copy(io.Discard, out)
				return
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		return 0, fmt.Errorf("rentapi serve printed no address and key in a minute")
	}
	os.Setenv("RENTAPI_BASE_URL", baseURL)
	os.Setenv("RENTAPI_KEY", testKey)
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "the service's log:\n%s\n", serverLog)
	}
	return code, nil
}

// syncBuffer is a buffer two goroutines may write and read.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
