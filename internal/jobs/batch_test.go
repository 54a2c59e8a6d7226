package jobs

import (
	"context"
	"sync"
	"testing"
)

// A run that panics, or answers fewer items than it was given, is an error
// for its calls, not a crash of the process or a worker waiting forever;
// after the failed run, each item is run alone, so the others still succeed.
func TestBatchRunThatPanics(t *testing.T) {
	t.Parallel()
	b := &batch[string, string]{
		key: func(s string) string { return s },
		max: 10,
		run: func(_ context.Context, items []string) ([]string, error) {
			out := make([]string, 0, len(items))
			for _, it := range items {
				switch it {
				case "boom":
					panic("boom")
				case "short":
					return out, nil
				}
				out = append(out, it+"!")
			}
			return out, nil
		},
	}
	var wg sync.WaitGroup
	got := map[string]string{}
	var mu sync.Mutex
	for _, it := range []string{"boom", "ok", "short", "fine"} {
		wg.Go(func() {
			res, err := b.do(it)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				got[it] = "error"
			} else {
				got[it] = res
			}
		})
	}
	wg.Wait()
	want := map[string]string{"boom": "error", "ok": "ok!", "short": "error", "fine": "fine!"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if res, err := b.do("again"); err != nil || res != "again!" {
		t.Fatalf("after the failures: %q, %v", res, err)
	}
}
