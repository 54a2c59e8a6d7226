// Package bucket keeps token buckets by name: the API's per-second rate
// limits and failed-key protection, and the pages' sign-in throttling. The
// in-memory store serves one process; the Redis store lets several
// processes share every bucket, as if they were one service.
package bucket

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// Limit is a token bucket's shape: Rate tokens per Per, holding at most
// Burst.
type Limit struct {
	Rate  int
	Per   time.Duration
	Burst int
}

// State is a bucket after a take.
type State struct {
	Allowed    bool
	Remaining  int
	RetryAfter time.Duration // until the next token, when not allowed
	ResetAfter time.Duration // until the bucket is full again
}

// Store keeps token buckets by name. Take with n = 0 only looks.
type Store interface {
	Take(ctx context.Context, name string, l Limit, n int, now time.Time) (State, error)
}

// Open returns the store for a redis:// URL (prefix separates this
// deployment's or test's buckets from others in the same Redis), or this
// process's memory when url is empty.
func Open(ctx context.Context, url, prefix string) (Store, error) {
	if url == "" {
		return NewMemory(), nil
	}
	return NewRedis(ctx, url, prefix)
}

// Memory is token buckets in this process's memory.
type Memory struct {
	mu    sync.Mutex
	all   map[string]*rate.Limiter
	swept time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{all: map[string]*rate.Limiter{}} }

// Take takes n tokens from the bucket name, at the process's idea of now.
func (m *Memory) Take(_ context.Context, name string, l Limit, n int, now time.Time) (State, error) {
	perSecond := float64(l.Rate) / l.Per.Seconds()
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
	if !ok || b.Burst() != l.Burst || b.Limit() != rate.Limit(perSecond) {
		b = rate.NewLimiter(rate.Limit(perSecond), l.Burst)
		m.all[name] = b
	}
	st := State{Allowed: true}
	if n > 0 {
		st.Allowed = b.AllowN(now, n)
	}
	tokens := b.TokensAt(now)
	st.Remaining = max(0, int(math.Floor(tokens)))
	st.ResetAfter = seconds((float64(l.Burst) - tokens) / perSecond)
	if !st.Allowed {
		st.RetryAfter = seconds((float64(n) - tokens) / perSecond)
	}
	return st, nil
}

func seconds(f float64) time.Duration { return time.Duration(max(0, f) * float64(time.Second)) }

// Redis is token buckets (GCRA) in Redis, shared by every process that
// uses the same Redis; Redis's clock is the one that counts.
type Redis struct {
	limiter *redis_rate.Limiter
	prefix  string
}

// NewRedis connects to a redis:// URL.
func NewRedis(ctx context.Context, url, prefix string) (*Redis, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, err
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	return &Redis{limiter: redis_rate.NewLimiter(rdb), prefix: prefix}, nil
}

// Take takes n tokens from the bucket name, at Redis's idea of now.
func (r *Redis) Take(ctx context.Context, name string, l Limit, n int, _ time.Time) (State, error) {
	res, err := r.limiter.AllowN(ctx, r.prefix+name, redis_rate.Limit{Rate: l.Rate, Period: l.Per, Burst: l.Burst}, n)
	if err != nil {
		return State{}, err
	}
	return State{Allowed: n == 0 || res.Allowed >= n, Remaining: res.Remaining, RetryAfter: max(0, res.RetryAfter), ResetAfter: max(0, res.ResetAfter)}, nil
}
