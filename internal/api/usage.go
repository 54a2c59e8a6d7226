package api

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// bangkok is Thailand's time (UTC+7 all year): quotas are counted per
// calendar month and day there.
var bangkok = time.FixedZone("ICT", 7*60*60)

// sandboxDailyLimit is the test-mode requests a developer may make per day.
const sandboxDailyLimit = 20_000

// usageKey names one counter: a developer in one period.
type usageKey struct{ developer, period string }

// meter counts requests for the monthly quota and the sandbox's daily limit.
// Counting happens in memory and is flushed to the database about once a
// second, so no request waits for a write; each flush brings back the total
// of every process, so several processes over one database share the quota
// (overshooting by at most a second of traffic).
type meter struct {
	db  *store.DB
	log *slog.Logger

	mu        sync.Mutex
	known     map[usageKey]int64 // totals as last read from the database
	pending   map[usageKey]int64 // counted here, not yet flushed
	writing   map[usageKey]int64 // taken from pending by a flush not yet done
	lastFlush time.Time
	flushing  bool
}

func newMeter(db *store.DB, log *slog.Logger) *meter {
	return &meter{db: db, log: log, known: map[usageKey]int64{}, pending: map[usageKey]int64{}, writing: map[usageKey]int64{}}
}

// total is the count of k: the database's plus this process's unflushed.
func (m *meter) total(ctx context.Context, k usageKey) (int64, error) {
	m.mu.Lock()
	n, ok := m.known[k]
	p := m.pending[k] + m.writing[k]
	m.mu.Unlock()
	if ok {
		return n + p, nil
	}
	n, err := m.db.Read().UsageCount(ctx, k.developer, k.period)
	if err != nil {
		return 0, err
	}
	m.mu.Lock()
	if _, ok := m.known[k]; !ok {
		m.known[k] = n
	}
	n = m.known[k]
	m.mu.Unlock()
	return n + p, nil
}

// add counts one request, and starts a flush when the last is a second old.
func (m *meter) add(k usageKey, now time.Time) {
	m.mu.Lock()
	m.pending[k]++
	start := !m.flushing && now.Sub(m.lastFlush) >= time.Second
	if start {
		m.flushing, m.lastFlush = true, now
	}
	m.mu.Unlock()
	if start {
		go func() {
			if err := m.flush(context.Background()); err != nil {
				m.log.Error("usage flush", "error", err.Error())
			}
		}()
	}
}

// flush writes the pending counts and learns the new totals.
func (m *meter) flush(ctx context.Context) error {
	m.mu.Lock()
	batch := m.pending
	m.pending = map[usageKey]int64{}
	for k, n := range batch {
		m.writing[k] += n // still counted while it is written
	}
	m.mu.Unlock()
	var failed error
	for k, n := range batch {
		total, err := m.db.AddUsage(ctx, k.developer, k.period, n)
		m.mu.Lock()
		if m.writing[k] -= n; m.writing[k] == 0 {
			delete(m.writing, k)
		}
		if err != nil {
			m.pending[k] += n // keep it for the next flush
			failed = err
		} else {
			m.known[k] = total
		}
		m.mu.Unlock()
	}
	m.mu.Lock()
	m.flushing = false
	m.mu.Unlock()
	return failed
}

// Close flushes what is left; the process calls it on shutdown.
func (s *Server) Close(ctx context.Context) error { return s.meter.flush(ctx) }

// quota checks the caller's period count before a request: the sandbox's
// daily limit in test mode, the monthly quota in live mode (with the
// X-Quota headers). It returns the counter the request counts towards.
func (s *Server) quota(ctx context.Context, h http.Header, c *caller, now time.Time) (usageKey, error) {
	local := now.In(bangkok)
	if c.mode == rental.ModeTest {
		k := usageKey{c.key.Developer.ID, "test:" + local.Format(time.DateOnly)}
		n, err := s.meter.total(ctx, k)
		if err != nil || n < sandboxDailyLimit {
			return k, err
		}
		tomorrow := time.Date(local.Year(), local.Month(), local.Day()+1, 0, 0, 0, 0, bangkok)
		e := rental.Errorf(rental.KindRateLimited, "sandbox_limit", "The sandbox allows %d requests per day; the count restarts at midnight Thailand time.", sandboxDailyLimit)
		e.RetryAfter = int(tomorrow.Sub(now).Seconds()) + 1
		return k, e
	}
	plan := c.key.Developer.Plan.Limits()
	k := usageKey{c.key.Developer.ID, "live:" + local.Format("2006-01")}
	n, err := s.meter.total(ctx, k)
	if err != nil {
		return k, err
	}
	reset := time.Date(local.Year(), local.Month()+1, 1, 0, 0, 0, 0, bangkok)
	h.Set("X-Quota-Limit", strconv.FormatInt(plan.MonthlyIncluded, 10))
	h.Set("X-Quota-Remaining", strconv.FormatInt(max(0, plan.MonthlyIncluded-n-1), 10))
	h.Set("X-Quota-Reset", strconv.FormatInt(reset.Unix(), 10))
	if plan.StopsAtIncluded && n >= plan.MonthlyIncluded {
		h.Set("X-Quota-Remaining", "0")
		e := rental.Errorf(rental.KindRateLimited, "monthly_quota_exceeded",
			"The free plan's %d requests for this month are used; the quota restarts on the 1st (Thailand time).", plan.MonthlyIncluded)
		e.RetryAfter = int(reset.Sub(now).Seconds()) + 1
		return k, e
	}
	return k, nil
}

// billable reports whether a served request counts: live requests that
// reached an account and were answered 2xx or 4xx other than 401 and 429;
// in test mode every request not refused with 429 counts towards the daily
// limit (and is never billed).
func billable(status int) bool {
	return status >= 200 && status < 500 && status != http.StatusUnauthorized && status != http.StatusTooManyRequests
}
