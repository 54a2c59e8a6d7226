package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

// A sandbox's clock is the landlord's clock offset (landlords.clock_offset,
// milliseconds ahead of real time, 0 until moved and for every live
// landlord). It needs no code of its own anywhere else: Claim adds it to
// real time, so every write of the sandbox, every sweep and every job run
// for it takes its Now from the sandbox's clock, through the one code path
// live landlords take too.

// ClockOffset is how far the landlord's clock runs ahead of real time.
func (q *Queries) ClockOffset(ctx context.Context, landlordID string) (time.Duration, error) {
	var offset int64
	err := q.c.QueryRowContext(ctx, `SELECT clock_offset FROM landlords WHERE id = $1`, landlordID).Scan(&offset)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, rental.NotFound("account", landlordID)
	}
	if err != nil {
		return 0, fmt.Errorf("store: clock offset: %w", err)
	}
	return time.Duration(offset) * time.Millisecond, nil
}

// AdvanceClock moves a sandbox's clock as rental.AdvanceClock decides, as
// the landlord's one writer, and returns the clock's time before and
// after (from, to: what the time-driven steps catch up on). The
// transaction's own Now stays the time before.
func (tx *Tx) AdvanceClock(ctx context.Context, acct *rental.Account, a rental.ClockAdvance) (from, to time.Time, err error) {
	if !acct.Sandbox {
		return from, to, rental.TestModeOnly("Only a sandbox's clock can be moved.")
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return from, to, err
	}
	real := tx.db.now().UTC()
	from = tx.Now
	offset, err := rental.AdvanceClock(a, from, real)
	if err != nil {
		return from, to, err
	}
	// Stored in milliseconds, rounded up: the clock is never short of
	// the time asked for.
	if r := offset % time.Millisecond; r > 0 {
		offset += time.Millisecond - r
	}
	if err := tx.setOffset(ctx, acct.LandlordID, offset, nil); err != nil {
		return from, to, err
	}
	return from, real.Add(offset), nil
}

// resetClock returns a sandbox's clock to real time, within its reset:
// the landlord's clock too goes back to now, and the transaction's Now
// with it, so the sample data put back is of today's real time. A clock
// never moved is left as it is.
func (tx *Tx) resetClock(ctx context.Context, landlordID string) error {
	if tx.offset == 0 {
		return nil
	}
	now := tx.db.now().UTC()
	if err := tx.setOffset(ctx, landlordID, 0, &now); err != nil {
		return err
	}
	tx.Now, tx.lastEvent = now, ms(now)-1
	return nil
}

// setOffset sets the claimed landlord's clock offset, and its clock to
// clock if not nil.
func (tx *Tx) setOffset(ctx context.Context, landlordID string, offset time.Duration, clock *time.Time) error {
	q, args := `UPDATE landlords SET clock_offset = $2 WHERE id = $1`, []any{landlordID, offset.Milliseconds()}
	if clock != nil {
		q, args = `UPDATE landlords SET clock_offset = $2, clock = $3 WHERE id = $1`, append(args, ms(*clock))
	}
	if _, err := tx.c.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("store: clock offset: %w", err)
	}
	tx.offset = offset
	return nil
}

// movedSandboxesWith is the part of a sweep's query for whom it has work
// that adds the sandboxes running ahead of real time that have rows in
// table whose status is $1: their due times are judged on their own clock
// (see Claim), which the query cannot see, so the sweep asks each.
func movedSandboxesWith(table string) string {
	return `SELECT l.id FROM landlords l WHERE l.clock_offset <> 0 AND EXISTS (SELECT 1 FROM ` + table +
		` t WHERE t.landlord_id = l.id AND t.status = $1)`
}

// QueuedSend is a queued notification of a landlord as a clock catching
// up sees it: its attempts so far and when the last was made (when its
// first was due, for none: its creation, or its paced slot).
type QueuedSend struct {
	ID       string
	Attempts int
	Last     time.Time
}

// QueuedSends lists the landlord's queued notifications, oldest first.
func (q *Queries) QueuedSends(ctx context.Context, landlordID string) ([]QueuedSend, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT id, attempts, CASE WHEN attempts = 0 THEN send_at ELSE updated_at END
		FROM notifications WHERE landlord_id = $1 AND status = $2 ORDER BY created_at, id`, landlordID, rental.NotificationQueued)
	if err != nil {
		return nil, fmt.Errorf("store: queued sends: %w", err)
	}
	defer rows.Close()
	var out []QueuedSend
	for rows.Next() {
		var s QueuedSend
		var last int64
		if err := rows.Scan(&s.ID, &s.Attempts, &last); err != nil {
			return nil, fmt.Errorf("store: queued sends: %w", err)
		}
		s.Last = time.UnixMilli(last).UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// PendingSlips lists the landlord's slips still pending that were filed at
// or before filedBy, oldest first: those whose verification schedule has
// run out by a sandbox clock's advance.
func (q *Queries) PendingSlips(ctx context.Context, landlordID string, filedBy time.Time) ([]string, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT id FROM slips WHERE landlord_id = $1 AND status = $2 AND created_at <= $3
		ORDER BY created_at, id`, landlordID, rental.SlipPending, ms(filedBy))
	if err != nil {
		return nil, fmt.Errorf("store: pending slips: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: pending slips: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
