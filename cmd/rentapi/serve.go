package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"

	"rentapi/internal/api"
	"rentapi/internal/bucket"
	"rentapi/internal/chat"
	"rentapi/internal/jobs"
	"rentapi/internal/metric"
	"rentapi/internal/rental"
	// The tests of this package have a type of that name.
	httprequest "rentapi/internal/request"
	"rentapi/internal/secret"
	"rentapi/internal/slip"
	"rentapi/internal/store"
	"rentapi/internal/web"
	"rentapi/internal/webhook"
)

// serve runs the service until ctx ends: parseServe reads and checks
// everything it is told, then runServe binds, opens and serves.
func (e environment) serve(ctx context.Context, args []string) error {
	c, err := e.parseServe(args)
	if err != nil {
		return err
	}
	return e.runServe(ctx, c)
}

// serveConfig is what serve is told by its flags and the environment,
// read and checked by parseServe before anything is bound, opened or
// written.
type serveConfig struct {
	addr          string
	db            *dbFlags
	rateLimits    onOff
	keptAnswers   onOff
	redisURL      string
	allowLoopback bool
	rescueAfter   time.Duration
	// publicURL is empty when not given: runServe makes it http:// and
	// the address it listens on.
	publicURL   string
	metricsAddr string
	profiling   onOff
	seller      web.Seller

	// Read from the flags' text by parseServe.
	level     slog.Level
	proxies   httprequest.Proxies
	providers map[string]string
	// line is the LINE client, nil without a channel token; lineSecret
	// signs LINE's webhooks.
	line       *chat.Client
	lineSecret string
	// slips is the slip-verification provider's client, nil without a key.
	slips *slip.Client
}

// parseServe reads serve's flags and environment and checks them: the
// files they name are read (payment providers, LINE credentials), and
// nothing is bound, opened or written, so that a mistake is told before
// the service touches its database.
func (e environment) parseServe(args []string) (*serveConfig, error) {
	fs := e.flags("serve")
	c := &serveConfig{db: e.dbFlags(fs)}
	var logLevel, proxies, providersFile, lineAPI, lineData string
	var lineSecret, lineToken, slipKey secretFlag
	var slipURL string
	fs.String(&c.addr, "addr", "RENTAPI_ADDR", "127.0.0.1:8080", "address to listen on", "")
	fs.OnOff(&c.rateLimits, "rate-limits", "RENTAPI_RATE_LIMITS", true,
		"on or off: enforce the plans' per-second rate limits; turn off only for capacity benchmarks", "")
	fs.OnOff(&c.keptAnswers, "answer-cache", "RENTAPI_ANSWER_CACHE", true,
		"on or off: keep recent answers of reads (16 MB) by their ETag, which the landlord's every write changes, and answer the same read from them; off only to measure what it saves", "")
	fs.String(&c.redisURL, "redis", "RENTAPI_REDIS", "",
		"redis:// URL: keep rate limits in Redis, shared by every process of the deployment", "default: in this process's memory")
	fs.Bool(&c.allowLoopback, "webhook-allow-loopback", "RENTAPI_WEBHOOK_ALLOW_LOOPBACK",
		"let webhook endpoints be http:// or https:// on a loopback address, for local receivers and tests; never in production", "")
	fs.set.DurationVar(&c.rescueAfter, "job-rescue-after", time.Minute,
		"how long a job may stay running before it is taken as lost with a crashed process and run again")
	fs.String(&c.publicURL, "public-url", "RENTAPI_PUBLIC_URL", "",
		"the service's address as tenants' phones reach it, for payment page links, e.g. https://pay.example.com", "default: http:// and the listening address")
	fs.String(&providersFile, "payment-providers", "RENTAPI_PAYMENT_PROVIDERS", "",
		"file of payment providers whose signed confirmations are taken, one 'name=secret' per line", "default: none")
	fs.String(&c.metricsAddr, "metrics-addr", "RENTAPI_METRICS_ADDR", "",
		"address of the operator's own listener serving /metrics in Prometheus's format, e.g. 127.0.0.1:9464; keep it off the public network", "default: no metrics")
	fs.String(&proxies, "trusted-proxies", "RENTAPI_TRUSTED_PROXIES", "",
		"comma-separated addresses or ranges of the reverse proxies in front of the service (a TLS terminator, a load balancer), e.g. 10.0.0.0/8: their X-Forwarded-For tells the client's address for limits and logs",
		"default: none, the peer's address counts")
	fs.OnOff(&c.profiling, "pprof", "RENTAPI_PPROF", false,
		"on or off: serve Go's profiler at /debug/pprof/ on the --metrics-addr listener (never on the public one), e.g. go tool pprof http://127.0.0.1:9464/debug/pprof/profile?seconds=30", "")
	fs.Secret(&lineSecret, "line-channel-secret-file", "RENTAPI_LINE_CHANNEL_SECRET_FILE", "RENTAPI_LINE_CHANNEL_SECRET", "secret",
		"file holding the LINE channel secret, which signs LINE's webhooks", "")
	fs.Secret(&lineToken, "line-channel-token-file", "RENTAPI_LINE_CHANNEL_TOKEN_FILE", "RENTAPI_LINE_CHANNEL_TOKEN", "token",
		"file holding the LINE channel access token, for pushes and replies", "without one, live chat sends are refused with 503 chat_unavailable")
	fs.Secret(&slipKey, "slip-provider-key-file", "RENTAPI_SLIP_PROVIDER_KEY_FILE", "RENTAPI_SLIP_PROVIDER_KEY", "key",
		"file holding the slip-verification provider's API key (EasySlip)", "without one, live slips are refused with 409 slips_not_available")
	fs.String(&slipURL, "slip-provider-url", "RENTAPI_SLIP_PROVIDER_URL", slip.DefaultBaseURL,
		"base URL of the slip-verification provider (EasySlip's verify API); tests point it at a local server", "")
	fs.String(&lineAPI, "line-api-url", "RENTAPI_LINE_API_URL", chat.DefaultAPIURL,
		"base URL of the LINE Messaging API; tests point it at a local server", "")
	fs.String(&lineData, "line-data-url", "RENTAPI_LINE_DATA_URL", chat.DefaultDataURL,
		"base URL of LINE's content API, where the slip pictures tenants send are fetched; tests point it at a local server", "")
	fs.String(&c.db.addFriendURL, "line-add-friend-url", "RENTAPI_LINE_ADD_FRIEND_URL", "",
		"the add-friend link of the service's LINE Official Account, shown to tenants as chat_registration_url, e.g. https://line.me/R/ti/p/@rentapi", "")
	fs.String(&c.seller.Name, "invoice-seller-name", "RENTAPI_INVOICE_SELLER_NAME", "",
		"who the developers' invoices come from, printed on them as the seller", "default rentapi")
	fs.String(&c.seller.Address, "invoice-seller-address", "RENTAPI_INVOICE_SELLER_ADDRESS", "",
		"the seller's address printed on invoices", "")
	fs.String(&c.seller.TaxID, "invoice-seller-tax-id", "RENTAPI_INVOICE_SELLER_TAX_ID", "",
		"the seller's 13-digit tax ID printed on invoices", "")
	fs.String(&logLevel, "log-level", "RENTAPI_LOG_LEVEL", "info",
		"debug, info, warn or error: the least severe log lines written; River's own are written from warn up unless debug", "")
	if err := fs.parse(args, "run the service: the API, the payment pages and the background jobs"); err != nil {
		return nil, err
	}
	if err := c.db.check(); err != nil {
		return nil, err
	}
	var err error
	if c.level, err = parseLevel(logLevel); err != nil {
		return nil, err
	}
	if c.proxies, err = httprequest.ParseProxies(proxies); err != nil {
		return nil, err
	}
	if c.profiling && c.metricsAddr == "" {
		return nil, errors.New("--pprof serves the profiler on the operator's listener: give --metrics-addr too")
	}
	if c.providers, err = loadProviders(providersFile); err != nil {
		return nil, err
	}
	if c.lineSecret, err = lineSecret.value(e.getenv); err != nil {
		return nil, err
	}
	token, err := lineToken.value(e.getenv)
	if err != nil {
		return nil, err
	}
	if token != "" {
		if c.line, err = chat.NewClient(token, lineAPI, lineData); err != nil {
			return nil, err
		}
	}
	key, err := slipKey.value(e.getenv)
	if err != nil {
		return nil, err
	}
	if key != "" {
		if c.slips, err = slip.New(slipURL, key); err != nil {
			return nil, err
		}
	}
	if err := checkPublicURL(c.publicURL, c.addr); err != nil {
		return nil, err
	}
	return c, nil
}

// runServe runs the service parseServe described until ctx ends, then
// shuts it down gracefully.
func (e environment) runServe(ctx context.Context, c *serveConfig) error {
	tuneGC(ctx, e.getenv)
	// Bind before anything is written: a new database's demo application
	// must not be made while its key has nowhere to be used (the key is
	// shown once).
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	publicURL := c.publicURL
	if publicURL == "" {
		publicURL = base
	}
	var metricsLn net.Listener
	if c.metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", c.metricsAddr); err != nil {
			return fmt.Errorf("metrics listen: %w", err)
		}
		defer metricsLn.Close()
	}
	logs := newLogBuffer(e.stderr, logFlushEvery)
	defer logs.Close()
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: c.level}))
	riverLog := jobs.RiverLog(log, c.level == slog.LevelDebug)
	c.db.log, c.db.riverLog, c.db.publicURL = log, riverLog, publicURL
	if !bool(c.rateLimits) {
		log.Warn("per-second rate limits are off: use this only to measure capacity")
	}
	if c.line == nil || c.lineSecret == "" {
		log.Warn("no LINE channel is configured (--line-channel-token-file and --line-channel-secret-file): live chat sends answer 503 chat_unavailable and tenants cannot register; test mode works without one")
	}
	if c.slips == nil {
		log.Warn("no slip-verification provider is configured (--slip-provider-key-file): live slips answer 409 slips_not_available; test mode works without one")
	}
	guard := webhook.Guard{AllowLoopback: c.allowLoopback}
	if guard.AllowLoopback {
		log.Warn("webhook endpoints on loopback addresses and over plain http are allowed: use this only for local development and tests")
	}
	sec, db, err := e.openData(ctx, c.db)
	if err != nil {
		return err
	}
	defer db.Close()
	if db.Engine() == store.Postgres && c.redisURL == "" {
		log.Warn(noRedisWarning)
	}

	var metrics *metric.Set
	if metricsLn != nil {
		metrics = metric.New()
		if err := metrics.WatchDB(db); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	bucket.LogTo(log) // the Redis client's own notices (a failed dial) as JSON lines too
	buckets, err := bucket.Open(ctx, c.redisURL, "rentapi:")
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if closer, ok := buckets.(io.Closer); ok {
		defer closer.Close()
	}
	srv, err := api.NewServer(api.Config{DB: db, Secret: sec, Log: log, NoRateLimits: !bool(c.rateLimits), NoKeptAnswers: !bool(c.keptAnswers), Buckets: buckets, Guard: guard,
		TrustedProxies: c.proxies, PublicURL: publicURL, Providers: c.providers, Metrics: metrics, ChatLive: c.line != nil,
		LINE: c.line, LineChannelSecret: c.lineSecret, SlipsLive: c.slips != nil})
	if err != nil {
		return err
	}
	jobClient, err := jobs.New(db, log, jobs.Options{Secret: sec, Sender: webhook.NewSender(guard, nil), RescueAfter: c.rescueAfter,
		RiverLog: riverLog, Metrics: metrics, LINE: c.line, Slips: c.slips})
	if err != nil {
		return err
	}
	// Everything that can fail before serving has been done: now the demo
	// and its key, back to back.
	if err := e.demo(ctx, db, sec, base); err != nil {
		return err
	}
	// River cancels the jobs it is running when the context given to Start
	// ends: started on the signal's context, a SIGTERM would cut a sweep or
	// a delivery short (and log it as failed) before the graceful Stop
	// below had its chance. Stop alone ends the jobs.
	if err := jobClient.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	defer func() {
		stopping, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
		defer cancel()
		if err := jobClient.Stop(stopping); err != nil {
			log.Error("stopping jobs", "error", err.Error())
		}
	}()
	errc := make(chan error, 2)
	var ms *http.Server
	if metricsLn != nil {
		ms = &http.Server{
			Handler:           operatorHandler(metrics.Handler(log), bool(c.profiling)),
			ReadHeaderTimeout: 10 * time.Second,
			WriteTimeout:      2 * time.Minute, // a 30-second CPU profile fits
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		go func() { errc <- ms.Serve(metricsLn) }()
		fmt.Fprintf(e.stdout, "rentapi: metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	fmt.Fprintf(e.stdout, "rentapi: listening on %s\n", base)

	hs := &http.Server{
		Handler: web.New(web.Config{DB: db, Log: log, PublicURL: publicURL, Buckets: buckets, Secret: sec, Guard: guard,
			TrustedProxies: c.proxies, Seller: c.seller, SlipsLive: c.slips != nil}, srv),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20, // the API answers over 64 KB in its envelope
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       httprequest.ConnContext,
	}
	hs.RegisterOnShutdown(srv.EndStreams)
	// Starting made garbage (migrations parsed, templates, River's
	// set-up) that would set the first heap goal at three times itself:
	// collected now, the first requests do not grow the heap to it.
	runtime.GC()
	go func() { errc <- hs.Serve(httprequest.Listener(ln)) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if ms != nil {
		if err := ms.Shutdown(shutdown); err != nil {
			return fmt.Errorf("shutdown metrics: %w", err)
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	return srv.Close(shutdown)
}

// demo gives a new database its demo developer, application and sandbox
// key, and prints the key (the only time it is shown) with a first request
// to try against base.
func (e environment) demo(ctx context.Context, db *store.DB, sec *secret.Secret, base string) error {
	app, created, err := bootstrap(ctx, db)
	if err != nil || !created {
		return err
	}
	key, err := createKey(ctx, db, sec, app.ID, rental.ModeTest, "all", "Sandbox key", "", 0)
	if err != nil {
		return fmt.Errorf("%w (the demo application %s was made without a key: make one with `rentapi admin create-key --mode test`)", err, app.ID)
	}
	fmt.Fprintf(e.stdout, "rentapi: new database: created a demo developer, application %s and its sandbox account %s.\n", app.ID, app.SandboxAccountID)
	fmt.Fprintf(e.stdout, "rentapi: sandbox test key (shown once; keep it): %s\n", key)
	fmt.Fprintf(e.stdout, "rentapi: try: curl -sS -H 'Authorization: Bearer %s' %s/v1/account\n", key, base)
	fmt.Fprintln(e.stdout, "rentapi: lost it? `rentapi admin create-key --mode test` makes another")
	return nil
}

// noRedisWarning is serve's warning when it runs over PostgreSQL, where
// other processes may serve the same database, with no Redis to count the
// limits together.
const noRedisWarning = "PostgreSQL without --redis: every limit (per-second rate limits, failed-key protection, the chat sending limit, " +
	"the sign-in limits) is counted by this process alone, so N processes over this database allow N times each limit. " +
	"Give every process the same --redis (env RENTAPI_REDIS) unless this is the only one"

// logFlushEvery is how long a log line may wait in the buffer.
const logFlushEvery = 50 * time.Millisecond

// parseLevel reads --log-level.
func parseLevel(s string) (slog.Level, error) {
	switch s {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
}

// bootstrap gives a new database its demo developer and application (with
// the application's sandbox). created is false when the database already
// had a developer.
func bootstrap(ctx context.Context, db *store.DB) (app *rental.Application, created bool, err error) {
	n, err := db.Read().CountDevelopers(ctx)
	if err != nil || n > 0 {
		return nil, false, err
	}
	err = db.InTx(ctx, func(tx *store.Tx) error {
		dev, err := tx.CreateDeveloper(ctx, "Demo developer", rental.PlanDeveloper)
		if err != nil {
			return err
		}
		app, err = tx.CreateApplication(ctx, store.ApplicationSpec{
			DeveloperID: dev.ID, Name: "Demo application", Company: "Demo company", Scopes: rental.AllScopes,
		})
		if err != nil {
			return err
		}
		return tx.SetDemoApplication(ctx, app.ID)
	})
	if err != nil {
		return nil, false, fmt.Errorf("bootstrap: %w", err)
	}
	return app, true, nil
}

// operatorHandler is what the operator's listener serves: the metrics, and
// with profiling on, Go's profiler under /debug/pprof/ (CPU and heap
// profiles, goroutines, traces), which the public listener never serves.
func operatorHandler(metrics http.Handler, profiling bool) http.Handler {
	if !profiling {
		return metrics
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics)
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}
