package api

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

// usageKey names one count a limit reads: a developer's requests of one
// mode over a period of Thailand dates (a month in live mode, a day in test
// mode).
type usageKey struct {
	developer string
	mode      rental.Mode
	from, to  string
}

func (k usageKey) period() store.UsagePeriod {
	return store.UsagePeriod{Developer: k.developer, Mode: k.mode, From: k.from, To: k.to}
}

// cell is where one request is written down: its period's row for the
// application and the day (the rows the portal's usage page shows).
type cell struct {
	key      usageKey
	app, day string
}

// usageFresh is how long a total read from the database is used before it
// is read again: a process that has not flushed for a while learns what
// the others counted at most this late.
const usageFresh = time.Second

// knownTotal is a period's total as last read from the database.
type knownTotal struct {
	n  int64
	at time.Time // wall clock
}

// meter counts requests for the monthly quota and the sandbox's daily limit,
// per developer, mode, application and day in the database (usage_days):
// the one count the quota enforces, the invoices bill and the portal shows.
// Counting happens in memory and is flushed to the database within about a
// second, so no request waits for a write; each flush brings back the
// period's total of every process, and a total older than usageFresh is
// read again (one query per period a second at most), so several processes
// over one database share the quota (overshooting by at most a second of
// traffic).
type meter struct {
	db  *store.DB
	log *slog.Logger

	flushMu sync.Mutex // one flush at a time; a total is read only while none is under way

	mu         sync.Mutex
	known      map[usageKey]knownTotal // totals as last read from the database
	pending    map[cell]int64          // counted here, not yet flushed
	unflushed  map[usageKey]int64      // pending, by period
	writing    map[usageKey]int64      // taken from pending by a flush not yet done
	refreshing map[usageKey]bool       // a read of the total under way
	lastFlush  time.Time               // wall clock
	timer      *time.Timer             // the next flush, when one is due
}

func newMeter(db *store.DB, log *slog.Logger) *meter {
	return &meter{db: db, log: log, known: map[usageKey]knownTotal{}, pending: map[cell]int64{}, unflushed: map[usageKey]int64{},
		writing: map[usageKey]int64{}, refreshing: map[usageKey]bool{}}
}

// total is the count of k: the database's plus this process's unflushed.
// The database's is this process's last reading, read again when older
// than usageFresh (by one request; the others meanwhile use the last).
func (m *meter) total(ctx context.Context, k usageKey) (int64, error) {
	m.mu.Lock()
	t, ok := m.known[k]
	read := !ok || (time.Since(t.at) >= usageFresh && !m.refreshing[k])
	if !read {
		n := t.n + m.unflushed[k] + m.writing[k]
		m.mu.Unlock()
		return n, nil
	}
	m.refreshing[k] = true
	m.mu.Unlock()
	// The total is read while no flush is half way through: one that had
	// added its counts to the database but not yet taken them off writing
	// would have them counted twice. A request never waits for a flush (it
	// may be waiting for a busy database): the cached total serves until
	// the next look.
	idle := m.flushMu.TryLock()
	if !idle && ok {
		m.mu.Lock()
		defer m.mu.Unlock()
		delete(m.refreshing, k)
		return m.known[k].n + m.unflushed[k] + m.writing[k], nil
	}
	at := time.Now()
	n, err := m.db.Read().UsageTotal(ctx, k.period())
	if idle {
		m.flushMu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.refreshing, k)
	if err != nil && !ok {
		return 0, err
	}
	if err == nil {
		if cur, ok := m.known[k]; !ok || cur.at.Before(at) {
			m.known[k] = knownTotal{n, at}
		}
	}
	return m.known[k].n + m.unflushed[k] + m.writing[k], nil
}

// add counts one request, and makes sure a flush follows within a second.
func (m *meter) add(c cell) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending[c]++
	m.unflushed[c.key]++
	m.schedule()
}

// schedule sets a flush for a second after the last one, unless one is
// set already. The caller holds mu.
func (m *meter) schedule() {
	if m.timer != nil || len(m.pending) == 0 {
		return
	}
	m.timer = time.AfterFunc(max(0, usageFresh-time.Since(m.lastFlush)), func() {
		m.mu.Lock()
		m.timer = nil
		m.mu.Unlock()
		if err := m.flush(context.Background()); err != nil {
			m.log.Error("usage flush", "error", err.Error())
		}
	})
}

// flush writes the pending counts, one transaction per period, and learns
// the periods' new totals.
func (m *meter) flush(ctx context.Context) error {
	m.flushMu.Lock()
	defer m.flushMu.Unlock()
	m.mu.Lock()
	batch := map[usageKey]map[store.UsageCell]int64{}
	for c, n := range m.pending {
		if batch[c.key] == nil {
			batch[c.key] = map[store.UsageCell]int64{}
		}
		batch[c.key][store.UsageCell{Application: c.app, Day: c.day}] += n
		m.writing[c.key] += n // still counted while it is written
	}
	m.pending, m.unflushed, m.lastFlush = map[cell]int64{}, map[usageKey]int64{}, time.Now()
	m.mu.Unlock()
	var failed error
	for k, counts := range batch {
		at := time.Now()
		total, err := m.db.AddUsage(ctx, k.period(), counts)
		m.mu.Lock()
		for uc, n := range counts {
			if m.writing[k] -= n; m.writing[k] == 0 {
				delete(m.writing, k)
			}
			if err != nil { // kept for the next flush
				m.pending[cell{key: k, app: uc.Application, day: uc.Day}] += n
				m.unflushed[k] += n
			}
		}
		if err != nil {
			failed = err
		} else {
			m.known[k] = knownTotal{total, at}
		}
		m.mu.Unlock()
	}
	m.mu.Lock()
	m.schedule() // what was counted meanwhile, or failed
	m.mu.Unlock()
	return failed
}

// Close flushes what is left (the usage counts, the request log); the
// process calls it on shutdown.
func (s *Server) Close(ctx context.Context) error {
	return errors.Join(s.meter.flush(ctx), s.requests.close(ctx))
}

// todayAt is the calendar day now falls in, worked out again only when
// now is outside the last one asked for: formatting a request's dates was
// a hundredth of a read's CPU. A sandbox clock set to another day is
// answered as truly, if not as fast.
func (s *Server) todayAt(now time.Time) *rental.Today {
	if t := s.today.Load(); t != nil && t.Holds(now) {
		return t
	}
	t := rental.TodayAt(now)
	s.today.Store(t)
	return t
}

// quota checks the caller's period count before a request (see
// rental.QuotaAt): the sandbox's daily limit in test mode, the monthly
// quota in live mode, with the X-Quota headers that describe it (as late
// fields of the request's answer: see response.write). It returns the
// counter the request counts towards.
func (s *Server) quota(ctx context.Context, c *caller, now time.Time) (cell, error) {
	today := s.todayAt(now)
	q := today.Quota(c.mode, c.key.Developer.Plan)
	k := cell{key: usageKey{c.key.Developer.ID, c.mode, q.From, q.To}, app: c.key.App.ID, day: today.Date}
	n, err := s.meter.total(ctx, k.key)
	if err != nil {
		return k, err
	}
	if c.mode == rental.ModeLive {
		inf := info(ctx)
		inf.lateFields = [...]request.Field{{Name: "X-Quota-Limit", Value: strconv.FormatInt(q.Limit, 10)},
			{Name: "X-Quota-Remaining", Value: strconv.FormatInt(q.Remaining(n), 10)}, {Name: "X-Quota-Reset", Value: strconv.FormatInt(q.Reset.Unix(), 10)}}
		inf.late = inf.lateFields[:]
	}
	return k, q.Check(n, now)
}
