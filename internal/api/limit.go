package api

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"rentapi/internal/rental"
)

// rateLimiter holds one token bucket per developer and mode: limits apply to
// the developer account as a whole, and test and live traffic are limited
// separately.
type rateLimiter struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newRateLimiter() *rateLimiter {
	return &rateLimiter{buckets: map[string]*rate.Limiter{}}
}

// allow takes a token for the caller and writes the X-RateLimit headers;
// without a token it returns 429 rate_limited with Retry-After. A nil
// limiter (limits turned off by the operator) allows everything.
func (l *rateLimiter) allow(h http.Header, c *caller, now time.Time) error {
	plan := c.key.Developer.Plan.Limits()
	if l == nil {
		h.Set("X-RateLimit-Limit", strconv.Itoa(plan.Burst))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(plan.Burst))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(now.Unix(), 10))
		return nil
	}
	name := c.key.Developer.ID + "/" + string(c.mode)
	l.mu.Lock()
	b, ok := l.buckets[name]
	if !ok || b.Burst() != plan.Burst || b.Limit() != rate.Limit(plan.RatePerSecond) {
		b = rate.NewLimiter(rate.Limit(plan.RatePerSecond), plan.Burst)
		l.buckets[name] = b
	}
	allowed := b.AllowN(now, 1)
	tokens := b.TokensAt(now)
	l.mu.Unlock()

	full := now.Add(time.Duration((float64(plan.Burst) - tokens) / float64(plan.RatePerSecond) * float64(time.Second)))
	h.Set("X-RateLimit-Limit", strconv.Itoa(plan.Burst))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(0, int(math.Floor(tokens)))))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(int64(math.Ceil(float64(full.UnixMilli())/1000)), 10))
	if allowed {
		return nil
	}
	e := rental.Errorf(rental.KindRateLimited, "rate_limited", "Too many requests: the plan allows %d per second (bursts of %d).", plan.RatePerSecond, plan.Burst)
	e.RetryAfter = max(1, int(math.Ceil((1-tokens)/float64(plan.RatePerSecond))))
	return e
}

// Failed-key protection: more than failureLimit requests with invalid keys
// from one address within failureWindow are refused.
const (
	failureLimit  = 30
	failureWindow = time.Minute
)

// failureCounter remembers, per client address, the times of its recent
// requests with invalid keys.
type failureCounter struct {
	mu    sync.Mutex
	times map[string][]time.Time
	swept time.Time
}

func newFailureCounter() *failureCounter {
	return &failureCounter{times: map[string][]time.Time{}}
}

// recent returns the failures of ip within the window, dropping older ones.
func (f *failureCounter) recent(ip string, now time.Time) []time.Time {
	ts := f.times[ip]
	i := 0
	for i < len(ts) && !ts[i].After(now.Add(-failureWindow)) {
		i++
	}
	ts = ts[i:]
	if len(ts) == 0 {
		delete(f.times, ip)
	} else {
		f.times[ip] = ts
	}
	return ts
}

// add counts one failure of ip.
func (f *failureCounter) add(ip string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if now.Sub(f.swept) > failureWindow {
		for other := range f.times {
			f.recent(other, now)
		}
		f.swept = now
	}
	ts := f.recent(ip, now)
	if len(ts) >= failureLimit {
		ts = ts[1:]
	}
	f.times[ip] = append(ts, now)
}

// blocked reports whether ip has used up its failures, and if so how many
// seconds until the oldest one leaves the window.
func (f *failureCounter) blocked(ip string, now time.Time) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.recent(ip, now)
	if len(ts) < failureLimit {
		return 0, false
	}
	return max(1, int(math.Ceil(ts[0].Add(failureWindow).Sub(now).Seconds()))), true
}
