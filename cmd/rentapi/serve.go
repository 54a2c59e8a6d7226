package main

import (
	"context"
	"errors"
	"flag"
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
	"rentapi/internal/store"
	"rentapi/internal/web"
	"rentapi/internal/webhook"
)

func (e environment) serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", e.or("RENTAPI_ADDR", "127.0.0.1:8080"), "address to listen on (env RENTAPI_ADDR)")
	dbf := e.dbFlags(fs)
	rateLimits, err := newOnOff(fs, "rate-limits", e.getenv("RENTAPI_RATE_LIMITS"), true,
		"on or off: enforce the plans' per-second rate limits; turn off only for capacity benchmarks (env RENTAPI_RATE_LIMITS=off)")
	if err != nil {
		return err
	}
	redisURL := fs.String("redis", e.getenv("RENTAPI_REDIS"),
		"redis:// URL: keep rate limits in Redis, shared by every process of the deployment (env RENTAPI_REDIS; default: in this process's memory)")
	allowLoopback := fs.Bool("webhook-allow-loopback", e.or("RENTAPI_WEBHOOK_ALLOW_LOOPBACK", "off") == "on",
		"let webhook endpoints be http:// or https:// on a loopback address, for local receivers and tests; never in production (env RENTAPI_WEBHOOK_ALLOW_LOOPBACK=on)")
	rescueAfter := fs.Duration("job-rescue-after", time.Minute,
		"how long a job may stay running before it is taken as lost with a crashed process and run again")
	publicURL := fs.String("public-url", e.getenv("RENTAPI_PUBLIC_URL"),
		"the service's address as tenants' phones reach it, for payment page links, e.g. https://pay.example.com (env RENTAPI_PUBLIC_URL; default: http:// and the listening address)")
	providersFile := fs.String("payment-providers", e.getenv("RENTAPI_PAYMENT_PROVIDERS"),
		"file of payment providers whose signed confirmations are taken, one 'name=secret' per line (env RENTAPI_PAYMENT_PROVIDERS; default: none)")
	metricsAddr := fs.String("metrics-addr", e.getenv("RENTAPI_METRICS_ADDR"),
		"address of the operator's own listener serving /metrics in Prometheus's format, e.g. 127.0.0.1:9464; keep it off the public network (env RENTAPI_METRICS_ADDR; default: no metrics)")
	proxiesFlag := fs.String("trusted-proxies", e.getenv("RENTAPI_TRUSTED_PROXIES"),
		"comma-separated addresses or ranges of the reverse proxies in front of the service (a TLS terminator, a load balancer), e.g. 10.0.0.0/8: their X-Forwarded-For tells the client's address for limits and logs (env RENTAPI_TRUSTED_PROXIES; default: none, the peer's address counts)")
	profiling, err := newOnOff(fs, "pprof", e.getenv("RENTAPI_PPROF"), false,
		"on or off: serve Go's profiler at /debug/pprof/ on the --metrics-addr listener (never on the public one), e.g. go tool pprof http://127.0.0.1:9464/debug/pprof/profile?seconds=30 (env RENTAPI_PPROF)")
	if err != nil {
		return err
	}
	lineSecretFile := fs.String("line-channel-secret-file", e.getenv("RENTAPI_LINE_CHANNEL_SECRET_FILE"),
		"file holding the LINE channel secret, which signs LINE's webhooks (env RENTAPI_LINE_CHANNEL_SECRET_FILE; RENTAPI_LINE_CHANNEL_SECRET gives the secret itself)")
	lineTokenFile := fs.String("line-channel-token-file", e.getenv("RENTAPI_LINE_CHANNEL_TOKEN_FILE"),
		"file holding the LINE channel access token, for pushes and replies (env RENTAPI_LINE_CHANNEL_TOKEN_FILE; RENTAPI_LINE_CHANNEL_TOKEN gives the token itself; without one, live chat sends are refused with 503 chat_unavailable)")
	lineAPI := fs.String("line-api-url", e.or("RENTAPI_LINE_API_URL", chat.DefaultAPIURL),
		"base URL of the LINE Messaging API; tests point it at a local server (env RENTAPI_LINE_API_URL)")
	lineFriend := fs.String("line-add-friend-url", e.getenv("RENTAPI_LINE_ADD_FRIEND_URL"),
		"the add-friend link of the service's LINE Official Account, shown to tenants as chat_registration_url, e.g. https://line.me/R/ti/p/@rentapi (env RENTAPI_LINE_ADD_FRIEND_URL)")
	var seller web.Seller
	fs.StringVar(&seller.Name, "invoice-seller-name", e.getenv("RENTAPI_INVOICE_SELLER_NAME"),
		"who the developers' invoices come from, printed on them as the seller (env RENTAPI_INVOICE_SELLER_NAME; default rentapi)")
	fs.StringVar(&seller.Address, "invoice-seller-address", e.getenv("RENTAPI_INVOICE_SELLER_ADDRESS"),
		"the seller's address printed on invoices (env RENTAPI_INVOICE_SELLER_ADDRESS)")
	fs.StringVar(&seller.TaxID, "invoice-seller-tax-id", e.getenv("RENTAPI_INVOICE_SELLER_TAX_ID"),
		"the seller's 13-digit tax ID printed on invoices (env RENTAPI_INVOICE_SELLER_TAX_ID)")
	logLevel := fs.String("log-level", e.or("RENTAPI_LOG_LEVEL", "info"),
		"debug, info, warn or error: the least severe log lines written; River's own are written from warn up unless debug (env RENTAPI_LOG_LEVEL)")
	if err := e.parse(fs, args, "run the service: the API, the payment pages and the background jobs"); err != nil {
		return err
	}
	level, err := parseLevel(*logLevel)
	if err != nil {
		return err
	}
	proxies, err := api.ParseProxies(*proxiesFlag)
	if err != nil {
		return err
	}
	tuneGC(ctx, e.getenv)
	if *profiling && *metricsAddr == "" {
		return errors.New("--pprof serves the profiler on the operator's listener: give --metrics-addr too")
	}
	providers, err := loadProviders(*providersFile)
	if err != nil {
		return err
	}
	lineSecret, err := e.secretValue("RENTAPI_LINE_CHANNEL_SECRET", *lineSecretFile)
	if err != nil {
		return err
	}
	lineToken, err := e.secretValue("RENTAPI_LINE_CHANNEL_TOKEN", *lineTokenFile)
	if err != nil {
		return err
	}
	var line *chat.Client
	if lineToken != "" {
		if line, err = chat.NewClient(lineToken, *lineAPI); err != nil {
			return err
		}
	}
	if err := checkPublicURL(*publicURL, *addr); err != nil {
		return err
	}
	// Bind before anything is written: a new database's demo application
	// must not be made while its key has nowhere to be used (the key is
	// shown once).
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	if *publicURL == "" {
		*publicURL = base
	}
	var metricsLn net.Listener
	if *metricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", *metricsAddr); err != nil {
			return fmt.Errorf("metrics listen: %w", err)
		}
		defer metricsLn.Close()
	}
	logs := newLogBuffer(e.stderr, logFlushEvery)
	defer logs.Close()
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: level}))
	riverLog := jobs.RiverLog(log, level == slog.LevelDebug)
	dbf.log, dbf.riverLog = log, riverLog
	if !bool(*rateLimits) {
		log.Warn("per-second rate limits are off: use this only to measure capacity")
	}
	if line == nil || lineSecret == "" {
		log.Warn("no LINE channel is configured (--line-channel-token-file and --line-channel-secret-file): live chat sends answer 503 chat_unavailable and tenants cannot register; test mode works without one")
	}
	guard := webhook.Guard{AllowLoopback: *allowLoopback}
	if guard.AllowLoopback {
		log.Warn("webhook endpoints on loopback addresses and over plain http are allowed: use this only for local development and tests")
	}
	dbf.addFriendURL = *lineFriend
	sec, db, err := e.openData(ctx, dbf)
	if err != nil {
		return err
	}
	defer db.Close()
	if db.Engine() == store.Postgres && *redisURL == "" {
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
	buckets, err := bucket.Open(ctx, *redisURL, "rentapi:")
	if err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	if c, ok := buckets.(io.Closer); ok {
		defer c.Close()
	}
	srv, err := api.NewServer(api.Config{DB: db, Secret: sec, Log: log, NoRateLimits: !bool(*rateLimits), Buckets: buckets, Guard: guard,
		TrustedProxies: proxies, PublicURL: *publicURL, Providers: providers, Metrics: metrics, ChatLive: line != nil,
		LINE: line, LineChannelSecret: lineSecret})
	if err != nil {
		return err
	}
	jobClient, err := jobs.New(db, log, jobs.Options{Secret: sec, Sender: webhook.NewSender(guard, nil), RescueAfter: *rescueAfter,
		RiverLog: riverLog, Metrics: metrics, LINE: line})
	if err != nil {
		return err
	}
	// Everything that can fail before serving has been done: now the demo
	// and its key, back to back.
	app, created, err := bootstrap(ctx, db)
	if err != nil {
		return err
	}
	if created {
		key, err := createKey(ctx, db, sec, app.ID, rental.ModeTest, "all", "Sandbox key", "", 0)
		if err != nil {
			return fmt.Errorf("%w (the demo application %s was made without a key: make one with `rentapi admin create-key --mode test`)", err, app.ID)
		}
		fmt.Fprintf(e.stdout, "rentapi: new database: created a demo developer, application %s and its sandbox account %s.\n", app.ID, app.SandboxAccountID)
		fmt.Fprintf(e.stdout, "rentapi: sandbox test key (shown once; keep it): %s\n", key)
		fmt.Fprintf(e.stdout, "rentapi: try: curl -sS -H 'Authorization: Bearer %s' %s/v1/account\n", key, base)
		fmt.Fprintln(e.stdout, "rentapi: lost it? `rentapi admin create-key --mode test` makes another")
	}
	if err := jobClient.Start(ctx); err != nil {
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
			Handler:           operatorHandler(metrics.Handler(log), bool(*profiling)),
			ReadHeaderTimeout: 10 * time.Second,
			WriteTimeout:      2 * time.Minute, // a 30-second CPU profile fits
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		go func() { errc <- ms.Serve(metricsLn) }()
		fmt.Fprintf(e.stdout, "rentapi: metrics on http://%s/metrics\n", metricsLn.Addr())
	}
	fmt.Fprintf(e.stdout, "rentapi: listening on %s\n", base)

	hs := &http.Server{
		Handler:           web.New(web.Config{DB: db, Log: log, PublicURL: *publicURL, Buckets: buckets, Secret: sec, Guard: guard, TrustedProxies: proxies, Seller: seller}, srv),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    1 << 20, // the API answers over 64 KB in its envelope
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	// Starting made garbage (migrations parsed, templates, River's
	// set-up) that would set the first heap goal at three times itself,
	// 60 MB: collected now, the first requests do not grow the heap to it.
	runtime.GC()
	go func() { errc <- hs.Serve(ln) }()
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
