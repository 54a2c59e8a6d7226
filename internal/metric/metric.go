// Package metric is what the service tells its operators in numbers: API
// requests, refusals, the job queue, webhook attempts and the database
// pools, in Prometheus's text format on a listener of the operator's own,
// never on the public one. The metrics live in a registry of their own, not
// Prometheus's global default, so that nothing registers into them by
// importing a package, and tests can make as many as they like.
package metric

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"rentapi/internal/store"
)

// Unmatched is the route label of a request no route matched, so that
// made-up paths cannot each add a series.
const Unmatched = "unmatched"

// overloadCode is the error code of a refusal for overload.
const overloadCode = "service_unavailable"

// limitCodes are the error codes of refusals by a rate limit or a quota.
var limitCodes = []string{"rate_limited", "too_many_failed_attempts", "monthly_quota_exceeded", "sandbox_limit"}

// Set is the service's metrics. A nil *Set records nothing, so tests and
// tools that have no operator to tell need not make one.
type Set struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	overload prometheus.Counter
	limited  *prometheus.CounterVec
	attempts *prometheus.CounterVec
	fallback prometheus.Counter
	// series holds each route, status and mode's counter and histogram
	// once looked up: finding them by their labels hashed and compared
	// three strings twice on every request. Its keys are bounded as the
	// series themselves are (routes, statuses, modes).
	series sync.Map // seriesKey → *series
}

type seriesKey struct {
	route  string
	status int
	mode   string
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// New makes the metrics on a new registry, with the Go runtime's and the
// process's own.
func New() *Set {
	m := &Set{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rentapi_api_requests_total",
			Help: "API requests answered, by route pattern, status and mode (test, live, or none before a key was recognised).",
		}, []string{"route", "status", "mode"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rentapi_api_request_duration_seconds",
			Help: "Time to answer API requests, by route pattern, status and mode.",
			// Up to the 10 s an overloaded request may wait, and past it.
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "status", "mode"}),
		overload: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rentapi_api_overload_refusals_total",
			Help: "API requests refused 503 service_unavailable: no in-flight place or database connection within the wait.",
		}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rentapi_api_limit_refusals_total",
			Help: "API requests refused by a rate limit or quota, by error code.",
		}, []string{"code"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rentapi_webhook_attempts_total",
			Help: "Webhook delivery attempts, by result: success (a 2xx answer) or failure.",
		}, []string{"result"}),
		fallback: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "rentapi_rate_limit_fallbacks_total",
			Help: "API rate-limit decisions this process took from its own buckets because the shared store (Redis) did not answer: while it grows, every limit is this process's alone.",
		}),
	}
	// Series that exist from the start read 0, not "no data", in rates and alerts.
	for _, code := range limitCodes {
		m.limited.WithLabelValues(code)
	}
	m.attempts.WithLabelValues("success")
	m.attempts.WithLabelValues("failure")
	m.reg.MustRegister(m.requests, m.duration, m.overload, m.limited, m.attempts, m.fallback,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Request counts one API request answered with status after d. route is
// the pattern it matched (Unmatched for none); mode is "test", "live", or
// "" before a key was recognised.
func (m *Set) Request(route string, status int, mode string, d time.Duration) {
	if m == nil {
		return
	}
	if mode == "" {
		mode = "none"
	}
	k := seriesKey{route, status, mode}
	v, ok := m.series.Load(k)
	if !ok {
		code := strconv.Itoa(status)
		v, _ = m.series.LoadOrStore(k, &series{m.requests.WithLabelValues(route, code, mode), m.duration.WithLabelValues(route, code, mode)})
	}
	sr := v.(*series)
	sr.requests.Inc()
	sr.duration.Observe(d.Seconds())
}

// Refused counts a refusal by the error code answered: overload, or one of
// the rate limits and quotas. Other codes are not refusals and are ignored.
func (m *Set) Refused(code string) {
	if m == nil {
		return
	}
	if code == overloadCode {
		m.overload.Inc()
		return
	}
	for _, c := range limitCodes {
		if c == code {
			m.limited.WithLabelValues(code).Inc()
		}
	}
}

// WebhookAttempt counts one delivery attempt.
func (m *Set) WebhookAttempt(ok bool) {
	if m == nil {
		return
	}
	result := "failure"
	if ok {
		result = "success"
	}
	m.attempts.WithLabelValues(result).Inc()
}

// LimitFallback counts one rate-limit decision taken from this process's
// own buckets because the shared store failed.
func (m *Set) LimitFallback() {
	if m == nil {
		return
	}
	m.fallback.Inc()
}

// WatchInFlight reports the API requests being served, read from the
// server when scraped. One server per Set.
func (m *Set) WatchInFlight(inFlight func() int) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "rentapi_api_requests_in_flight",
		Help: "API requests holding an in-flight place now.",
	}, func() float64 { return float64(inFlight()) }))
}

// WatchDB reports the database's connection pools (go_sql_* by db_name, the
// pool's name) and the depth of its job queue, both read when scraped.
func (m *Set) WatchDB(db *store.DB) error {
	if m == nil {
		return nil
	}
	for name, pool := range db.Pools() {
		if err := m.reg.Register(collectors.NewDBStatsCollector(pool, name)); err != nil {
			return err
		}
	}
	return m.reg.Register(&queueCollector{db: db, desc: prometheus.NewDesc("rentapi_job_queue_depth",
		"Jobs waiting or running, by kind and state (available, retryable, scheduled, running); each state counted up to "+
			strconv.Itoa(store.MaxCountedJobs)+".", []string{"kind", "state"}, nil)})
}

// queueWait bounds the queue's count at a scrape, well within Prometheus's
// default scrape timeout of 10 s.
const queueWait = 5 * time.Second

// queueCollector counts the job queue at every scrape: River keeps its
// state in the database, shared by every process, so any process can tell.
type queueCollector struct {
	db   *store.DB
	desc *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueWait)
	defer cancel()
	counts, err := c.db.QueueDepth(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n.Jobs), n.Kind, n.State)
	}
}

// Handler serves GET /metrics, and nothing else, for the operator's
// listener. A metric that cannot be read (the database is down) is left
// out and logged; the others are still served.
func (m *Set) Handler(log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:            slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
		Timeout:             queueWait + 2*time.Second,
	}))
	return mux
}
