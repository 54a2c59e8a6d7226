package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

// The portal's Events page: an account's events with what was sent of
// each to the application's endpoints, a send of one to an endpoint the
// developer picks, and a notice as the tenant's chat showed it.

// EventDeliveries returns the deliveries of the events to the
// application's endpoints of the mode, with their attempts, by event ID,
// oldest first.
func (q *Queries) EventDeliveries(ctx context.Context, appID string, mode rental.Mode, eventIDs []string) (map[string][]rental.Delivery, error) {
	out := map[string][]rental.Delivery{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	ids := make([]any, len(eventIDs))
	for i, id := range eventIDs {
		ids[i] = id
	}
	list, args := inList(3, ids)
	rows, err := q.c.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE application_id = $1 AND mode = $2)
		AND event_id IN (`+list+`) ORDER BY created_at, id`, append([]any{appID, string(mode)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("store: event deliveries: %w", err)
	}
	var all []rental.Delivery
	for rows.Next() {
		var d rental.Delivery
		if err := q.scanDelivery(&scanner{src: rows}, &d); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: event deliveries: %w", err)
		}
		all = append(all, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: event deliveries: %w", err)
	}
	if err := q.attachAttempts(ctx, all); err != nil {
		return nil, err
	}
	for _, d := range all {
		out[d.EventID] = append(out[d.EventID], d)
	}
	return out, nil
}

// SendEvent sends one of the account's events (one f lets it read) to an
// endpoint of the account's application and mode, whatever the endpoint
// subscribed to: the endpoint's delivery of the event again when it has
// one (Resend), else a new delivery of the event as it was recorded.
func (tx *Tx) SendEvent(ctx context.Context, acct *rental.Account, eventID string, f EventFilter, e *rental.WebhookEndpoint) (*rental.Delivery, error) {
	ev, err := tx.GetEvent(ctx, acct, eventID, f, tx.Now)
	if err != nil {
		return nil, err
	}
	var existing string
	err = tx.c.QueryRowContext(ctx, `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2 ORDER BY created_at, id LIMIT 1`,
		e.ID, ev.ID).Scan(&existing)
	switch {
	case err == nil:
		return tx.Resend(ctx, e.ApplicationID, e.Mode, existing)
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store: send event: %w", err)
	}
	ids, err := tx.fanOut(ctx, acct, rental.NewEvent(ev.ID, ev.Type, ev.Mode, acct.ID, ev.CreatedAt, ev.Data), audience{endpoint: e.ID})
	if err != nil {
		return nil, err
	}
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	return tx.GetDelivery(ctx, e.ApplicationID, e.Mode, ids[0])
}

// NotificationNotice returns what a notification of the landlord sent (or
// is to send) to the tenant's chat.
func (q *Queries) NotificationNotice(ctx context.Context, landlordID, id string) (*rental.Notice, error) {
	var stored string
	err := q.c.QueryRowContext(ctx, `SELECT notice FROM notifications WHERE landlord_id = $1 AND id = $2`, landlordID, id).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("notification", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: notice: %w", err)
	}
	opened, err := q.openCopy(noticeText, id, stored)
	if err != nil {
		return nil, err
	}
	var n rental.Notice
	if err := json.Unmarshal(opened, &n); err != nil {
		return nil, fmt.Errorf("store: notice of %s: %w", id, err)
	}
	return &n, nil
}
