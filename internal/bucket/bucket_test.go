package bucket_test

import (
	"errors"
	"testing"
	"time"

	"rentapi/internal/bucket"
	"rentapi/internal/bucket/buckettest"
)

// When Redis goes away, the first take finds out (ErrUnavailable) and the
// next ones are told at once, without waiting on the client's retries;
// when it comes back, takes reach it again by themselves.
func TestRedisDownAndBack(t *testing.T) {
	t.Parallel()
	srv := buckettest.StartRedis(t)
	r, err := bucket.NewRedis(t.Context(), srv.URL, "test:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l := bucket.Limit{Rate: 10, Per: time.Second, Burst: 10}
	take := func() (bucket.State, error) { return r.Take(t.Context(), "b", l, 1, time.Now()) }
	if st, err := take(); err != nil || !st.Allowed {
		t.Fatalf("up: %+v %v", st, err)
	}
	srv.Stop()
	if _, err := take(); !errors.Is(err, bucket.ErrUnavailable) {
		t.Fatalf("down: %v", err)
	}
	for range 20 {
		start := time.Now()
		if _, err := take(); !errors.Is(err, bucket.ErrUnavailable) {
			t.Fatalf("still down: %v", err)
		}
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Fatalf("a take while Redis is known down took %v", d)
		}
	}
	srv.Start()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err := take()
		if err == nil {
			if !st.Allowed {
				t.Fatalf("back: %+v", st)
			}
			break
		}
		if !errors.Is(err, bucket.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Redis is back, takes are not: %v", err)
		}
	}
}
