package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// Step is one kind of time-driven work, run for one account whose clock
// moved from from to to: what the background jobs do for every landlord
// as real time passes, done at once for a sandbox whose clock a developer
// advanced. Run is the very code the job runs for live mode, for that one
// landlord: its transactions claim the landlord, so their "now" is the
// sandbox's clock (see store's Tx.Claim), and it is exactly once however
// many processes (an advance in each, the periodic sweeps) run it at the
// same time, by the same conditions and claims the jobs rely on.
type Step struct {
	Name string
	Run  func(ctx context.Context, db *store.DB, acct *rental.Account, from, to time.Time) error
}

// Steps is every time-driven step, in the order they fall due on one
// day: a bill turns overdue before its late fee is added or a reminder
// goes, and payments expire and notifications are sent after. This list
// is the one place a new kind of time-driven work is added to (late fees
// after "overdue bills", reminders after them), so that advancing a
// sandbox's clock catches up on it too.
func Steps() []Step {
	return []Step{
		{Name: "overdue bills", Run: func(ctx context.Context, db *store.DB, acct *rental.Account, _, _ time.Time) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.MarkOverdue(ctx, acct.LandlordID)
				return err
			})
		}},
		{Name: "late fees", Run: catchUpLateFees},
		{Name: "reminders", Run: catchUpReminders},
		{Name: "payment expiry", Run: func(ctx context.Context, db *store.DB, acct *rental.Account, _, _ time.Time) error {
			return db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.ExpirePayments(ctx, acct.LandlordID)
				return err
			})
		}},
		{Name: "notification sends", Run: catchUpSends},
		{Name: "slip verifications", Run: catchUpSlips},
	}
}

// CatchUp runs every step for acct, whose clock moved from from to to, in
// order; the first error stops it (the periodic jobs, which take their
// "now" from the same clock, finish what it left).
func CatchUp(ctx context.Context, db *store.DB, acct *rental.Account, from, to time.Time) error {
	for _, s := range Steps() {
		if err := s.Run(ctx, db, acct, from, to); err != nil {
			return fmt.Errorf("jobs: catch up on %s: %w", s.Name, err)
		}
	}
	return nil
}

// catchUpReminders queues the reminders of each day whose 09:00 (Thailand
// time) the clock moved past, day by day in order, each paced from that
// morning, so that the "notification sends" step after it sends those
// whose slot is past too. A day's reminders queued already (by the
// periodic sweep, or another process's advance) are not queued again.
func catchUpReminders(ctx context.Context, db *store.DB, acct *rental.Account, from, to time.Time) error {
	for _, day := range rental.ReminderDays(from, to) {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.CatchUpReminders(ctx, acct, day)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// catchUpLateFees brings the account's late fees to to's day one day at
// a time (walkLateFees), in transactions of their own. The events carry
// the clock's time, as every event of a catch-up does: the landlord's
// clock only moves on, so that its events list in the order they were
// made.
func catchUpLateFees(ctx context.Context, db *store.DB, acct *rental.Account, _, to time.Time) error {
	_, err := walkLateFees(ctx, db, acct.LandlordID, rental.DayOf(to))
	return err
}

// catchUpSends makes every attempt of the account's queued notifications
// that their retry schedule puts at or before to (rental.SendsDue), each
// as one run of its job makes it; the jobs' own runs later find the
// attempts recorded, or the notification done. A sandbox never calls LINE
// (see push), so no channel is needed.
func catchUpSends(ctx context.Context, db *store.DB, acct *rental.Account, _, to time.Time) error {
	sends, err := db.Read().QueuedSends(ctx, acct.LandlordID)
	if err != nil {
		return err
	}
	for _, s := range sends {
		for range rental.SendsDue(s.Attempts, s.Last, to) {
			again, err := sendOnce(ctx, db, nil, s.ID, false)
			if err != nil {
				return err
			}
			if again == "" {
				break
			}
		}
	}
	return nil
}

// catchUpSlips settles the account's slips whose verification schedule
// has run out by to (rental.VerifyGivesUpAt): each is judged as the job's
// last attempt judges it, by the sandbox's simulated provider, so a
// test_provider_unavailable slip ends rejected with provider_unavailable.
// Slips whose schedule runs on past to are left to their job. Only a
// sandbox's clock is advanced, so the provider is never called.
func catchUpSlips(ctx context.Context, db *store.DB, acct *rental.Account, _, to time.Time) error {
	schedule := rental.VerifyGivesUpAt(to).Sub(to)
	ids, err := db.Read().PendingSlips(ctx, acct.LandlordID, to.Add(-schedule))
	if err != nil {
		return err
	}
	w := &slipWorker{db: db, log: slog.New(slog.DiscardHandler)}
	for _, id := range ids {
		if err := w.attempt(ctx, id, true); err != nil {
			return err
		}
	}
	return nil
}
