// Package bucket keeps token buckets by name: the API's per-second rate
// limits and failed-key protection, and the pages' sign-in throttling. The
// in-memory store serves one process; the Redis store lets several
// processes share every bucket, as if they were one service.
package bucket

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
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
// uses the same Redis; Redis's clock is the one that counts. Once Redis
// fails to answer, takes fail at once with ErrUnavailable (not after the
// client's retries, a second or two each) until a ping, every second,
// finds it back.
type Redis struct {
	rdb     *redis.Client
	limiter *redis_rate.Limiter
	prefix  string
	// down is the error that found Redis down; nil while it answers.
	down atomic.Pointer[error]
}

// ErrUnavailable says that the shared store could not be asked: what the
// caller does instead (its own buckets, or no answer) is its to decide.
var ErrUnavailable = errors.New("bucket: the shared store is unavailable")

// pingEvery is how often a Redis found down is asked whether it is back.
const pingEvery = time.Second

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
	return &Redis{rdb: rdb, limiter: redis_rate.NewLimiter(rdb), prefix: prefix}, nil
}

// Take takes n tokens from the bucket name, at Redis's idea of now.
func (r *Redis) Take(ctx context.Context, name string, l Limit, n int, _ time.Time) (State, error) {
	if down := r.down.Load(); down != nil {
		return State{}, fmt.Errorf("%w: %w", ErrUnavailable, *down)
	}
	res, err := r.limiter.AllowN(ctx, r.prefix+name, redis_rate.Limit{Rate: l.Rate, Period: l.Per, Burst: l.Burst}, n)
	if err != nil {
		if ctx.Err() != nil { // the caller gave up: that says nothing of Redis
			return State{}, err
		}
		if r.down.CompareAndSwap(nil, &err) {
			go r.watch()
		}
		return State{}, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return State{Allowed: n == 0 || res.Allowed >= n, Remaining: res.Remaining, RetryAfter: max(0, res.RetryAfter), ResetAfter: max(0, res.ResetAfter)}, nil
}

// watch pings Redis, found down, every pingEvery until it answers, and
// then lets takes through to it again; it stops when the store is closed.
func (r *Redis) watch() {
	for {
		time.Sleep(pingEvery)
		ctx, cancel := context.WithTimeout(context.Background(), pingEvery)
		err := r.rdb.Ping(ctx).Err()
		cancel()
		switch {
		case err == nil:
			r.down.Store(nil)
			return
		case errors.Is(err, redis.ErrClosed):
			return
		}
		r.down.Store(&err)
	}
}

// Close closes the connections to Redis; takes fail after it.
func (r *Redis) Close() error { return r.rdb.Close() }

// LogTo makes the Redis client write its own notices (a failed dial, say)
// to log as warnings, instead of as plain text on stderr. The client has
// one logger for the whole process, so this is for main to call, once.
func LogTo(log *slog.Logger) { redis.SetLogger(redisLog{log}) }

// redisLog is the Redis client's logger over slog.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "redis")
}
