package api

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"rentapi/internal/bucket"
	"rentapi/internal/metric"
)

// fallback is the store of the API's limits: the shared one (Redis, when
// several processes run) and, when that does not answer, this process's
// own buckets. So while Redis is down the per-second limits, failed-key
// protection and the chat sending limit still hold, each process counting
// alone, instead of not at all; the first decision taken alone is logged
// as an error, every one is counted in the metrics, and the first the
// shared store answers again is logged too.
type fallback struct {
	shared  bucket.Store
	local   *bucket.Memory
	log     *slog.Logger
	metrics *metric.Set
	alone   atomic.Bool
}

// Take takes from the shared store, or from this process's own when the
// shared one fails.
func (f *fallback) Take(ctx context.Context, name string, l bucket.Limit, n int, now time.Time) (bucket.State, error) {
	st, err := f.shared.Take(ctx, name, l, n, now)
	if err == nil {
		if f.alone.CompareAndSwap(true, false) {
			f.log.InfoContext(ctx, "rate limit store is back: the limits are shared by every process again")
		}
		return st, nil
	}
	if ctx.Err() != nil { // the client gave up: nothing to say of the store, and no decision that matters
		return f.local.Take(ctx, name, l, n, now)
	}
	if !f.alone.Swap(true) {
		f.log.ErrorContext(ctx, "rate limit store failed: the limits are kept in this process's memory until it answers again", "error", err.Error())
	}
	f.metrics.LimitFallback()
	return f.local.Take(ctx, name, l, n, now)
}
