package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"rentapi/internal/rental"
)

// An event stream (GET /v1/events/stream) reads the landlord's events in
// the order they were committed: every event is recorded under the
// landlord's claim, with a time after the landlord's last event (see
// recordEvent), so a landlord's events commit in the order of their times
// and a stream that has sent every event up to a time has missed none
// before it, whichever process wrote them.

// MaxStreams is how many event streams an application may hold open in
// one mode at once, over all the service's processes.
const MaxStreams = 5

// StreamLease is how long a stream's slot stays taken without being
// renewed: a stream renews it while open (every StreamLease/3), and a
// process that dies frees its streams' slots when their leases end.
const StreamLease = 45 * time.Second

// OpenStream takes one of the application's MaxStreams slots of mode for
// the stream id (renewed with RenewStream, given back with CloseStream),
// or returns 429 rate_limited when all are taken. A slot is taken by
// inserting its row, so two processes never take the same one.
func (db *DB) OpenStream(ctx context.Context, appID string, mode rental.Mode, id string) error {
	now := db.now()
	c := db.WritePool()
	if _, err := c.ExecContext(ctx, `DELETE FROM event_streams WHERE application_id = $1 AND mode = $2 AND expires_at < $3`,
		appID, string(mode), ms(now)); err != nil {
		return fmt.Errorf("store: free event stream slots: %w", err)
	}
	for slot := 1; slot <= MaxStreams; slot++ {
		res, err := c.ExecContext(ctx, `INSERT INTO event_streams (application_id, mode, slot, id, expires_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (application_id, mode, slot) DO NOTHING`, appID, string(mode), slot, id, ms(now.Add(StreamLease)))
		if err != nil {
			return fmt.Errorf("store: open event stream: %w", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 1 {
			return nil
		}
	}
	return rental.ErrTooManyStreams
}

// RenewStream extends the stream's lease; a stream whose slot was taken
// from it (its lease ended, say after the process stalled) gets 429
// rate_limited, and should end.
func (db *DB) RenewStream(ctx context.Context, appID string, mode rental.Mode, id string) error {
	res, err := db.WritePool().ExecContext(ctx, `UPDATE event_streams SET expires_at = $4 WHERE application_id = $1 AND mode = $2 AND id = $3`,
		appID, string(mode), id, ms(db.now().Add(StreamLease)))
	if err != nil {
		return fmt.Errorf("store: renew event stream: %w", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return rental.ErrTooManyStreams
	}
	return nil
}

// CloseStream gives the stream's slot back.
func (db *DB) CloseStream(ctx context.Context, appID string, mode rental.Mode, id string) error {
	_, err := db.WritePool().ExecContext(ctx, `DELETE FROM event_streams WHERE application_id = $1 AND mode = $2 AND id = $3`,
		appID, string(mode), id)
	if err != nil {
		return fmt.Errorf("store: close event stream: %w", err)
	}
	return nil
}

// StreamBatch bounds the events one read of a stream returns.
const StreamBatch = 100

// StreamEvents returns, oldest first, up to StreamBatch of the events the
// reader may see (f, as ListEvents) recorded after the time after (Unix
// ms; the time of the last event the stream sent).
func (q *Queries) StreamEvents(ctx context.Context, acct *rental.Account, f EventFilter, now time.Time, after int64) ([]StoredEvent, error) {
	w := q.eventWhere(acct, f, now).and("created_at > ?", &after)
	rows, err := q.c.QueryContext(ctx, w.sql+fmt.Sprintf(` ORDER BY created_at, id LIMIT %d`, StreamBatch), w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: stream events: %w", err)
	}
	return scanAll(rows, "stream events", q.scanEvent)
}

// StreamStart is the time a stream resuming after the event id goes on
// from: the event's own, when the reader may still see it (f), else 400
// invalid_parameter naming Last-Event-ID.
func (q *Queries) StreamStart(ctx context.Context, acct *rental.Account, f EventFilter, now time.Time, id string) (int64, error) {
	f.Types = nil // the event need not match the stream's filter
	e, err := q.GetEvent(ctx, acct, id, f, now)
	if err != nil {
		if isNotFound(err) {
			return 0, rental.UnknownLastEvent(id)
		}
		return 0, err
	}
	return e.CreatedAt.UnixMilli(), nil
}

// LastVisibleEvent is the latest of the events the reader may see (f's
// Prefixes; its Types are left aside): where a new stream starts, sending
// only what comes after, and the ID it gives its client to resume from.
// It returns "" and 0 when there is none.
func (q *Queries) LastVisibleEvent(ctx context.Context, acct *rental.Account, f EventFilter, now time.Time) (string, int64, error) {
	f.Types = nil
	w := q.eventWhere(acct, f, now)
	w.sql = strings.Replace(w.sql, "SELECT "+eventColumns+" FROM", "SELECT id, created_at FROM", 1)
	var id string
	var at int64
	err := q.c.QueryRowContext(ctx, w.sql+` ORDER BY created_at DESC, id DESC LIMIT 1`, w.args...).Scan(&id, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, fmt.Errorf("store: last event: %w", err)
	}
	return id, at, nil
}

// LandlordClock is the landlord's clock (Unix ms): the time of its latest
// write. It only moves on, but for a sandbox's reset, which deletes every
// event and takes the clock back to real time: a stream that finds the
// clock behind the last event it sent knows every event now stored came
// after the reset.
func (q *Queries) LandlordClock(ctx context.Context, landlordID string) (int64, error) {
	var clock int64
	if err := q.c.QueryRowContext(ctx, `SELECT clock FROM landlords WHERE id = $1`, landlordID).Scan(&clock); err != nil {
		return 0, fmt.Errorf("store: landlord clock: %w", err)
	}
	return clock, nil
}
