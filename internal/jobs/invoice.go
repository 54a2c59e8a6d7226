package jobs

import (
	"context"
	"fmt"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// monthly is River's schedule of the monthly close: 00:00 on the 1st of
// each month, Asia/Bangkok.
type monthly struct{}

// Next is the first 1st-of-the-month midnight in Thailand after t.
func (monthly) Next(t time.Time) time.Time { return rental.NextMonthStart(t) }

// CloseMonth makes every developer's invoice for month (YYYY-MM, ended) and
// returns how many it made. Safe to run anywhere at any time, as often as
// wished: each developer's month is closed under its row lock and only if
// it has no invoice yet (store.Tx.CloseMonth), so however many closes
// overlap, each developer gets one invoice per month, numbered without gaps.
func CloseMonth(ctx context.Context, db *store.DB, month string) (int, error) {
	devs, err := db.Read().DevelopersToClose(ctx, month)
	if err != nil {
		return 0, err
	}
	made := 0
	for _, id := range devs {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			inv, err := tx.CloseMonth(ctx, id, month)
			if inv != nil {
				made++
			}
			return err
		})
		if err != nil {
			return made, fmt.Errorf("jobs: close %s of %s: %w", month, id, err)
		}
	}
	return made, nil
}

// CloseLastMonth closes the month that ended last by the store's clock.
func CloseLastMonth(ctx context.Context, db *store.DB) (int, error) {
	return CloseMonth(ctx, db, rental.MonthBefore(db.Now()))
}
