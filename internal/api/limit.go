package api

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"rentapi/internal/rental"
)

// bucketLimit is a token bucket's shape: rate tokens per period, holding at
// most burst.
type bucketLimit struct {
	rate  int
	per   time.Duration
	burst int
}

// bucketState is a bucket after a take.
type bucketState struct {
	allowed    bool
	remaining  int
	retryAfter time.Duration // until the next token, when not allowed
	resetAfter time.Duration // until the bucket is full again
}

// buckets keeps token buckets by name. The in-memory store serves one
// process; the Redis store lets several processes share every limit, as if
// they were one. take with n = 0 only looks.
type buckets interface {
	take(ctx context.Context, name string, l bucketLimit, n int, now time.Time) (bucketState, error)
}

// memoryBuckets are token buckets in this process's memory.
type memoryBuckets struct {
	mu    sync.Mutex
	all   map[string]*rate.Limiter
	swept time.Time
}

func newMemoryBuckets() *memoryBuckets { return &memoryBuckets{all: map[string]*rate.Limiter{}} }

func (m *memoryBuckets) take(_ context.Context, name string, l bucketLimit, n int, now time.Time) (bucketState, error) {
	perSecond := float64(l.rate) / l.per.Seconds()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.swept) > time.Minute {
		for k, b := range m.all {
			if b.TokensAt(now) >= float64(b.Burst()) {
				delete(m.all, k) // a full bucket is the same as a new one
			}
		}
		m.swept = now
	}
	b, ok := m.all[name]
	if !ok || b.Burst() != l.burst || b.Limit() != rate.Limit(perSecond) {
		b = rate.NewLimiter(rate.Limit(perSecond), l.burst)
		m.all[name] = b
	}
	st := bucketState{allowed: true}
	if n > 0 {
		st.allowed = b.AllowN(now, n)
	}
	tokens := b.TokensAt(now)
	st.remaining = max(0, int(math.Floor(tokens)))
	st.resetAfter = seconds((float64(l.burst) - tokens) / perSecond)
	if !st.allowed {
		st.retryAfter = seconds((float64(n) - tokens) / perSecond)
	}
	return st, nil
}

func seconds(f float64) time.Duration { return time.Duration(max(0, f) * float64(time.Second)) }

// redisBuckets are token buckets (GCRA) in Redis, shared by every process
// that uses the same Redis; Redis's clock is the one that counts.
type redisBuckets struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// newRedisBuckets connects to a redis:// URL. prefix separates this
// deployment's (or test's) buckets from others in the same Redis.
func newRedisBuckets(ctx context.Context, url, prefix string) (*redisBuckets, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	return &redisBuckets{limiter: redis_rate.NewLimiter(rdb), prefix: prefix}, nil
}

func (r *redisBuckets) take(ctx context.Context, name string, l bucketLimit, n int, _ time.Time) (bucketState, error) {
	res, err := r.limiter.AllowN(ctx, r.prefix+name, redis_rate.Limit{Rate: l.rate, Period: l.per, Burst: l.burst}, n)
	if err != nil {
		return bucketState{}, err
	}
	return bucketState{allowed: n == 0 || res.Allowed >= n, remaining: res.Remaining, retryAfter: max(0, res.RetryAfter), resetAfter: max(0, res.ResetAfter)}, nil
}

// limits applies the per-second rate limits and the failed-key protection
// over one bucket store. When the store fails (Redis down), requests are let
// through and the failure is logged: the limits protect the service, they
// must not be what takes it down.
type limits struct {
	store buckets
	log   *slog.Logger
	off   bool // per-second limits turned off by the operator
}

// allow takes a token for the caller's developer and mode (limits apply to
// the developer account as a whole, test and live separately) and writes
// the X-RateLimit headers; without a token it is 429 rate_limited.
func (l *limits) allow(ctx context.Context, h http.Header, c *caller, now time.Time) error {
	plan := c.key.Developer.Plan.Limits()
	st := bucketState{allowed: true, remaining: plan.Burst}
	if !l.off {
		var err error
		st, err = l.store.take(ctx, "rate:"+c.key.Developer.ID+":"+string(c.mode), bucketLimit{plan.RatePerSecond, time.Second, plan.Burst}, 1, now)
		if err != nil {
			l.log.ErrorContext(ctx, "rate limit store", "error", err.Error())
			st = bucketState{allowed: true, remaining: plan.Burst}
		}
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(plan.Burst))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(st.remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(int64(math.Ceil(float64(now.Add(st.resetAfter).UnixMilli())/1000)), 10))
	if st.allowed {
		return nil
	}
	e := rental.Errorf(rental.KindRateLimited, "rate_limited", "Too many requests: the plan allows %d per second (bursts of %d).", plan.RatePerSecond, plan.Burst)
	e.RetryAfter = max(1, int(math.Ceil(st.retryAfter.Seconds())))
	return e
}

// failedKeys is the bucket of requests with invalid keys each client
// address may make: 30 per minute.
var failedKeys = bucketLimit{rate: 30, per: time.Minute, burst: 30}

// blocked reports whether ip has used up its failed attempts, and for how
// many seconds it stays so.
func (l *limits) blocked(ctx context.Context, ip string, now time.Time) (int, bool) {
	st, err := l.store.take(ctx, "failed:"+ip, failedKeys, 0, now)
	if err != nil {
		l.log.ErrorContext(ctx, "rate limit store", "error", err.Error())
		return 0, false
	}
	if st.remaining >= 1 {
		return 0, false
	}
	return max(1, int(math.Ceil((failedKeys.per / time.Duration(failedKeys.rate)).Seconds()))), true
}

// failed counts one request with an invalid key from ip.
func (l *limits) failed(ctx context.Context, ip string, now time.Time) {
	if _, err := l.store.take(ctx, "failed:"+ip, failedKeys, 1, now); err != nil {
		l.log.ErrorContext(ctx, "rate limit store", "error", err.Error())
	}
}
