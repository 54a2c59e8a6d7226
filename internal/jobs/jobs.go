// Package jobs is the background work of the service, run by River on the
// service's own database: webhook deliveries (webhook.go, their attempts
// loaded and recorded in batches: batch.go), LINE sends (chat.go), slip
// verifications with the provider (slip.go), the periodic sweeps (overdue
// bills, late fees, payment reminders, expired payments, retention) and
// the developers' monthly invoices (invoice.go). A job is inserted by the
// store in the same transaction as the change that needs it (its
// arguments are store/jobargs.go's), so a crash never loses one; several
// processes over one PostgreSQL database share the work, and each job
// runs once. What an attempt's outcome leads to (a retry, its time, an
// endpoint disabled) is rental's rule.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/chat"
	"rentapi/internal/metric"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/slip"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

// sweepWorker runs one of the periodic sweeps.
type sweepWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	sweep func(context.Context) error
}

// Timeout is none: a sweep over a large database may take a while, and
// running twice is harmless.
func (w *sweepWorker[T]) Timeout(*river.Job[T]) time.Duration { return -1 }

func (w *sweepWorker[T]) Work(ctx context.Context, _ *river.Job[T]) error { return w.sweep(ctx) }

// SweepOverdue marks overdue every issued bill unpaid at 00:00 Thailand time
// after its due date (a sandbox's on its own clock, see Steps), and
// returns how many it marked. Safe to run anywhere
// at any time: a bill turns overdue (and gets its bill.overdue event)
// exactly once however many sweeps overlap.
func SweepOverdue(ctx context.Context, db *store.DB) (int, error) {
	today := rental.DayOf(db.Now())
	landlords, err := db.Read().OverdueLandlords(ctx, today)
	return perLandlord(ctx, db, "overdue bills", landlords, err, func(tx *store.Tx, id string) (int, error) {
		return tx.MarkOverdue(ctx, id)
	})
}

// SweepReminders queues the day's payment reminders of every landlord
// whose reminder hour (09:00 Thailand time, a sandbox's on its own clock)
// has passed and whose reminders of the day are not queued yet, and
// returns how many; a process down at 09:00 queues them when it comes
// back that day. Safe anywhere at any time: each bill's reminder of a day
// is queued once however many sweeps overlap.
func SweepReminders(ctx context.Context, db *store.DB) (int, error) {
	landlords, err := db.Read().ReminderLandlords(ctx, db.Now())
	return perLandlord(ctx, db, "reminders", landlords, err, func(tx *store.Tx, id string) (int, error) {
		return tx.SendReminders(ctx, id)
	})
}

// SweepLateFees brings every unpaid bill's late fee to what its rule
// charges on its landlord's today (a sandbox's on its own clock), and
// returns how many times a bill's fee changed: run every minute and at
// start. A process that was down catches up one day at a time, as the
// sweeps it missed would have (see walkLateFees), so a receiver sees each
// day's amount. Safe to run anywhere at any time: each bill's fee grows
// (with its bill.updated) exactly once a day however many sweeps overlap.
func SweepLateFees(ctx context.Context, db *store.DB) (int, error) {
	landlords, err := db.Read().LateFeeLandlords(ctx, rental.DayOf(db.Now()))
	if err != nil {
		return 0, err
	}
	total := 0
	for _, id := range landlords {
		n, err := walkLateFees(ctx, db, id, "")
		total += n
		if err != nil {
			return total, fmt.Errorf("jobs: late fees of %s: %w", id, err)
		}
	}
	return total, nil
}

// walkLateFees brings a landlord's late fees to last's day (its today
// when empty or later) one day at a time: each day on which a fee grows,
// in order, as the sweep run on that day would have, so a bill gets one
// bill.updated per day its fee grew, with the amount of that day. It
// returns how many times a bill's fee changed.
func walkLateFees(ctx context.Context, db *store.DB, landlordID, last string) (int, error) {
	total, done := 0, ""
	for {
		day, err := db.Read().NextLateFeeDay(ctx, landlordID)
		if err != nil {
			return total, err
		}
		// A day already done ends the walk rather than trying it again: a
		// day after the landlord's today (AccrueLateFees works to today at
		// most, so the next day stays where it is), or one on which a fee
		// could not grow.
		if day == "" || (last != "" && day > last) || day <= done {
			return total, nil
		}
		n, err := accrueLateFees(ctx, db, landlordID, day)
		total += n
		if err != nil {
			return total, err
		}
		done = day
	}
}

// accrueLateFees brings a landlord's late fees to what they are on day
// (the landlord's today when empty), a batch a transaction so its other
// writers wait for one batch at most, and returns how many bills changed.
func accrueLateFees(ctx context.Context, db *store.DB, landlordID, day string) (int, error) {
	total := 0
	for more := true; more; {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			n, left, err := tx.AccrueLateFees(ctx, landlordID, day)
			total, more = total+n, left
			return err
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// SweepExpiredPayments expires every pending payment past its expiry and
// returns how many; each gets its payment.failed exactly once, as above.
func SweepExpiredPayments(ctx context.Context, db *store.DB) (int, error) {
	landlords, err := db.Read().ExpiringLandlords(ctx, db.Now())
	return perLandlord(ctx, db, "expired payments", landlords, err, func(tx *store.Tx, id string) (int, error) {
		return tx.ExpirePayments(ctx, id)
	})
}

// perLandlord runs a sweep's work one landlord per transaction, so one
// landlord's writes are never held up by another's, and adds up its count.
func perLandlord(ctx context.Context, db *store.DB, what string, landlords []string, err error, do func(*store.Tx, string) (int, error)) (int, error) {
	if err != nil {
		return 0, err
	}
	total := 0
	for _, id := range landlords {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			n, err := do(tx, id)
			total += n
			return err
		})
		if err != nil {
			return total, fmt.Errorf("jobs: %s of %s: %w", what, id, err)
		}
	}
	return total, nil
}

// retain deletes what is past its retention.
func retain(ctx context.Context, db *store.DB) error {
	if _, err := db.PurgeEvents(ctx); err != nil {
		return err
	}
	if _, err := db.PurgeDeliveries(ctx); err != nil {
		return err
	}
	if _, err := db.PurgeIdempotency(ctx); err != nil {
		return err
	}
	if _, err := db.PurgeSlipImages(ctx); err != nil {
		return err
	}
	if _, err := db.PurgeRequests(ctx); err != nil {
		return err
	}
	_, err := db.PurgeSessions(ctx)
	return err
}

// Options tune the job client.
type Options struct {
	// OverdueEvery is how often the overdue sweep runs, and the reminder
	// sweep; default a minute.
	OverdueEvery time.Duration
	// LateFeeEvery is how often the late-fee sweep runs; default a minute.
	LateFeeEvery time.Duration
	// ExpiryEvery is how often pending payments past their expiry are
	// expired; default 30 seconds.
	ExpiryEvery time.Duration
	// RetentionEvery is how often old data is deleted; default an hour.
	RetentionEvery time.Duration
	// Workers is the number of sweeps worked at once; default 10.
	Workers int
	// DeliveryWorkers is the number of webhook deliveries in flight at once;
	// default 200. A delivery mostly waits on its receiver, and the workers
	// load their deliveries and record their attempts in batches, so more
	// workers make bigger batches rather than more database connections.
	DeliveryWorkers int
	// Secret opens the endpoints' sealed signing secrets. Required.
	Secret *secret.Secret
	// Sender posts deliveries; default one that reaches only public
	// HTTPS addresses.
	Sender *webhook.Sender
	// RescueAfter is how long a job may stay running before it is deemed
	// lost with a crashed process and run again; default a minute.
	RescueAfter time.Duration
	// RiverLog is River's own logger; default RiverLog(log, false).
	RiverLog *slog.Logger
	// Metrics counts webhook attempts; nil counts nothing.
	Metrics *metric.Set
	// LINE pushes live notifications; nil when no channel is configured
	// (live sends then wait in their retries, test mode needs none).
	LINE *chat.Client
	// ChatWorkers is the number of LINE pushes in flight at once; default 20.
	ChatWorkers int
	// Slips verifies live slips; nil when no provider is configured (live
	// slips then wait in their retries, test mode needs none).
	Slips *slip.Client
	// SlipWorkers is the number of slip verifications in flight at once;
	// default 20.
	SlipWorkers int
}

// deliveryFetchPoll is how often the delivery queue looks for new jobs. The
// store inserts jobs in its own transactions through a driver without
// LISTEN/NOTIFY, so nothing wakes the queue when one commits: this poll is
// the floor of the delay from an event's commit to its first attempt. A
// fetch that finds nothing is one indexed query, so 20 a second per process
// cost little.
const deliveryFetchPoll = 50 * time.Millisecond

// deliveryFetchCooldown is the least time between two fetches of the
// delivery queue. River fetches again as soon as a worker frees up, but no
// sooner than this; with River's default of 100 ms the queue could take at
// most DeliveryWorkers jobs per 100 ms (500 a second with 50 workers),
// however fast the receivers answer.
const deliveryFetchCooldown = 2 * time.Millisecond

// Client runs the service's jobs. It is River's client over the store's
// write pool, so jobs are inserted in the store's transactions.
type Client = river.Client[*sql.Tx]

// New builds the job client for the store's engine, with every worker and
// the periodic sweeps; the workers log to log. Start it with Start and stop
// it with Stop.
func New(db *store.DB, log *slog.Logger, opts Options) (*Client, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.RiverLog == nil {
		opts.RiverLog = RiverLog(log, false)
	}
	if opts.OverdueEvery <= 0 {
		opts.OverdueEvery = time.Minute
	}
	if opts.LateFeeEvery <= 0 {
		opts.LateFeeEvery = time.Minute
	}
	if opts.ExpiryEvery <= 0 {
		opts.ExpiryEvery = 30 * time.Second
	}
	if opts.RetentionEvery <= 0 {
		opts.RetentionEvery = time.Hour
	}
	if opts.Workers <= 0 {
		opts.Workers = 10
	}
	if opts.DeliveryWorkers <= 0 {
		opts.DeliveryWorkers = 200
	}
	if opts.ChatWorkers <= 0 {
		opts.ChatWorkers = 20
	}
	if opts.SlipWorkers <= 0 {
		opts.SlipWorkers = 20
	}
	if opts.Sender == nil {
		opts.Sender = webhook.NewSender(webhook.Guard{}, nil)
	}
	if opts.RescueAfter <= 0 {
		opts.RescueAfter = time.Minute
	}
	if opts.Secret == nil {
		return nil, errors.New("jobs: a server secret is needed to sign webhook deliveries")
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &sweepWorker[store.OverdueArgs]{sweep: func(ctx context.Context) error {
		_, err := SweepOverdue(ctx, db)
		return err
	}})
	river.AddWorker(workers, &sweepWorker[store.ReminderArgs]{sweep: func(ctx context.Context) error {
		_, err := SweepReminders(ctx, db)
		return err
	}})
	river.AddWorker(workers, &sweepWorker[store.LateFeeArgs]{sweep: func(ctx context.Context) error {
		_, err := SweepLateFees(ctx, db)
		return err
	}})
	river.AddWorker(workers, &sweepWorker[store.ExpiryArgs]{sweep: func(ctx context.Context) error {
		_, err := SweepExpiredPayments(ctx, db)
		return err
	}})
	river.AddWorker(workers, &sweepWorker[store.CloseMonthArgs]{sweep: func(ctx context.Context) error {
		_, err := CloseLastMonth(ctx, db)
		return err
	}})
	river.AddWorker(workers, &sweepWorker[store.RetentionArgs]{sweep: func(ctx context.Context) error { return retain(ctx, db) }})
	river.AddWorker(workers, &deliveryWorker{db: db, sender: opts.Sender, secret: opts.Secret, log: log, metrics: opts.Metrics,
		works: workLoader(db), attempts: attemptLog(db)})
	river.AddWorker(workers, &sendWorker{db: db, line: opts.LINE, timeout: sendTimeoutFor(opts.RescueAfter)})
	river.AddWorker(workers, &slipWorker{db: db, provider: opts.Slips, log: log})
	cfg := &river.Config{
		Logger: opts.RiverLog,
		Queues: map[string]river.QueueConfig{
			river.QueueDefault:  {MaxWorkers: opts.Workers},
			store.DeliveryQueue: {MaxWorkers: opts.DeliveryWorkers, FetchCooldown: deliveryFetchCooldown, FetchPollInterval: deliveryFetchPoll},
			store.ChatQueue:     {MaxWorkers: opts.ChatWorkers},
			// A tenant waits for a slip's answer: polled as deliveries are.
			store.SlipQueue: {MaxWorkers: opts.SlipWorkers, FetchCooldown: deliveryFetchCooldown, FetchPollInterval: deliveryFetchPoll},
		},
		Workers:              workers,
		FetchPollInterval:    250 * time.Millisecond,
		JobTimeout:           opts.RescueAfter / 2,
		RescueStuckJobsAfter: opts.RescueAfter,
		PeriodicJobs: []*river.PeriodicJob{
			river.NewPeriodicJob(river.PeriodicInterval(opts.OverdueEvery),
				func() (river.JobArgs, *river.InsertOpts) { return store.OverdueArgs{}, nil }, &river.PeriodicJobOpts{ID: "overdue", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(opts.OverdueEvery),
				func() (river.JobArgs, *river.InsertOpts) { return store.ReminderArgs{}, nil }, &river.PeriodicJobOpts{ID: "reminders", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(opts.LateFeeEvery),
				func() (river.JobArgs, *river.InsertOpts) { return store.LateFeeArgs{}, nil }, &river.PeriodicJobOpts{ID: "late_fees", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(opts.ExpiryEvery),
				func() (river.JobArgs, *river.InsertOpts) { return store.ExpiryArgs{}, nil }, &river.PeriodicJobOpts{ID: "payment_expiry", RunOnStart: true}),
			river.NewPeriodicJob(river.PeriodicInterval(opts.RetentionEvery),
				func() (river.JobArgs, *river.InsertOpts) { return store.RetentionArgs{}, nil }, &river.PeriodicJobOpts{ID: "retention", RunOnStart: true}),
			// At 00:00 on the 1st, Thailand time, and at start (a process
			// that was down then catches up; a month closed already is left).
			river.NewPeriodicJob(monthly{},
				func() (river.JobArgs, *river.InsertOpts) { return store.CloseMonthArgs{}, nil }, &river.PeriodicJobOpts{ID: "invoice_close", RunOnStart: true}),
		},
	}
	cfg.Test.Time = db.QueueTime()
	return river.NewClient(db.RiverDriver(), cfg)
}

// RiverLog is the logger to give River, writing where log writes: River's
// lines at warning and above (all of them when debug), marked
// "component":"river", less one. River warns each time a job returns an
// error and will be retried; for a webhook delivery that is a receiver
// failing, which is expected, and the delivery worker logs every attempt
// itself (and every other error of its runs), so that warning is dropped.
func RiverLog(log *slog.Logger, debug bool) *slog.Logger {
	floor := slog.LevelWarn
	if debug {
		floor = slog.LevelDebug
	}
	return slog.New(riverHandler{next: log.Handler().WithAttrs([]slog.Attr{slog.String("component", "river")}), floor: floor})
}

// riverHandler is River's log handler; see RiverLog.
type riverHandler struct {
	next  slog.Handler
	floor slog.Level
}

func (h riverHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.floor && h.next.Enabled(ctx, l)
}

func (h riverHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn && strings.HasSuffix(r.Message, "Job errored; retrying") && isDelivery(r) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h riverHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return riverHandler{next: h.next.WithAttrs(attrs), floor: h.floor}
}

func (h riverHandler) WithGroup(name string) slog.Handler {
	return riverHandler{next: h.next.WithGroup(name), floor: h.floor}
}

// isDelivery reports whether River's record is about a webhook delivery job.
func isDelivery(r slog.Record) bool {
	delivery := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "job_kind" {
			delivery = a.Value.String() == store.DeliveryArgs{}.Kind()
			return false
		}
		return true
	})
	return delivery
}
