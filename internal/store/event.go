package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// RecordEvent stores an event of the account's landlord in the transaction
// of the change it reports, so an event exists exactly when its change does,
// and queues its deliveries to the webhook endpoints that want it in that
// same transaction. obj is serialised here once, exactly as the API returns
// it, and that text is what every later reader and delivery sends.
//
// Events of one transaction get strictly increasing times (a millisecond
// apart at most), so they list in the order they happened.
func (tx *Tx) RecordEvent(ctx context.Context, acct *rental.Account, typ string, obj any) error {
	_, err := tx.recordEvent(ctx, acct, typ, obj, audience{})
	return err
}

// RecordTestEvent stores a webhook.test event, which only the account's
// application sees, and sends it to the one endpoint whatever that endpoint
// subscribed to. It returns the delivery.
func (tx *Tx) RecordTestEvent(ctx context.Context, acct *rental.Account, endpoint *rental.WebhookEndpoint) (*rental.Delivery, error) {
	ids, err := tx.recordEvent(ctx, acct, "webhook.test", endpoint, audience{endpoint: endpoint.ID})
	if err != nil {
		return nil, err
	}
	if err := tx.flush(ctx); err != nil {
		return nil, err
	}
	return tx.GetDelivery(ctx, endpoint.ApplicationID, endpoint.Mode, ids[0])
}

// recordAccountEvent stores an account.* event of the link between the
// account's landlord and its application, with the account object as the
// application may use it: only that application's account lists it, and
// only that application's endpoints of the account's mode receive it,
// whether or not the link is still active (account.unlinked reports its
// end).
func (tx *Tx) recordAccountEvent(ctx context.Context, acct *rental.Account, typ string, appScopes rental.Scopes) error {
	usage, err := tx.Usage(ctx, acct)
	if err != nil {
		return err
	}
	_, err = tx.recordEvent(ctx, acct, typ, acct.Object(usage, acct.Granted.Intersect(appScopes)), audience{app: true})
	return err
}

// audience narrows who sees an event. The zero value is everyone entitled
// to it: every application linked to the landlord, by its grant.
type audience struct {
	// app keeps the event to the account's own application (account.*).
	app bool
	// endpoint sends it to that one endpoint only, whatever the endpoint
	// subscribed to (webhook.test); the account's application alone lists it.
	endpoint string
}

func (tx *Tx) recordEvent(ctx context.Context, acct *rental.Account, typ string, obj any, to audience) ([]string, error) {
	if tx.quiet {
		return nil, nil
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("store: event %s: %w", typ, err)
	}
	at := max(ms(tx.Now), tx.lastEvent+1)
	tx.lastEvent = at
	id := rental.NewID(rental.PrefixEvent)
	var app any
	if to.app || to.endpoint != "" {
		app = acct.ApplicationID
	}
	tx.events = append(tx.events, []any{id, acct.LandlordID, string(acct.Mode()), typ, tx.sealCopy(eventData, id, string(data)), at, app})
	return tx.fanOut(ctx, acct, rental.NewEvent(id, typ, acct.Mode(), acct.ID, rental.UnixMilli(at), data), to)
}

// flush inserts the events and deliveries the transaction recorded (see
// Tx.events), many rows a statement. Commit flushes, and so must
// anything in the transaction that reads them back.
func (tx *Tx) flush(ctx context.Context) error {
	return tx.ExecAll(ctx, tx.inserts())
}

// inserts are the statements that insert the events and deliveries
// recorded so far, which they take out of the transaction's lists.
func (tx *Tx) inserts() []database.Stmt {
	s := tx.InsertRows(`INSERT INTO events (id, landlord_id, mode, type, data, created_at, application_id) VALUES `, "store: record events", tx.events)
	s = append(s, tx.InsertRows(`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, body, status, next_attempt_at, created_at, updated_at) VALUES `, "store: create deliveries", tx.deliveries)...)
	tx.events, tx.deliveries = tx.events[:0], tx.deliveries[:0]
	return s
}

// CountEvents counts the landlord's events of a type, for tests and checks
// of exactly-once.
func (q *Queries) CountEvents(ctx context.Context, acct *rental.Account, typ string) (int, error) {
	var n int
	err := q.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE landlord_id = $1 AND type = $2`, acct.LandlordID, typ).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count events: %w", err)
	}
	return n, nil
}

// EventRetention is how long events are listed and kept.
const EventRetention = 30 * 24 * time.Hour

// StoredEvent is an event as stored; the API shows it to the account that
// reads it.
type StoredEvent struct {
	ID        string
	Type      string
	Mode      rental.Mode
	Data      json.RawMessage
	CreatedAt rental.Time
}

const eventColumns = `id, type, mode, data, created_at`

func (q *Queries) scanEvent(sc *scanner, e *StoredEvent) error {
	*e = StoredEvent{}
	var mode, data string
	var created int64
	if err := sc.Scan(&e.ID, &e.Type, &mode, &data, &created); err != nil {
		return err
	}
	opened, err := q.openCopy(eventData, e.ID, data)
	e.Mode, e.Data, e.CreatedAt = rental.Mode(mode), json.RawMessage(opened), rental.UnixMilli(created)
	return err
}

// EventFilter narrows an event list. Prefixes are the type prefixes the
// reader may see ("bill." and so on); Type is an exact type or a prefix
// ending in "."; Types are several such, any of which an event may match
// (the stream's filter).
type EventFilter struct {
	Prefixes     []string
	Type         string
	Types        []string
	CreatedAfter *int64
}

// eventWhere selects the landlord's events of the last 30 days, since the
// account was linked, of the readable types.
func (q *Queries) eventWhere(acct *rental.Account, f EventFilter, now time.Time) *where {
	w := scoped(`SELECT `+eventColumns+` FROM events WHERE landlord_id = $1`, acct.LandlordID).
		and("created_at >= ?", max(ms(now.Add(-EventRetention)), ms(acct.CreatedAt.Time))).
		and("(application_id IS NULL OR application_id = ?)", acct.ApplicationID).
		and("created_at >= ?", f.CreatedAfter)
	switch {
	case strings.HasSuffix(f.Type, "."):
		w.and(fmt.Sprintf("substr(type, 1, %d) = ?", len(f.Type)), f.Type)
	default:
		w.and("type = ?", f.Type)
	}
	if len(f.Prefixes) == 0 {
		w.sql += " AND FALSE"
		return w
	}
	w.anyType(f.Prefixes)
	if len(f.Types) > 0 {
		w.anyType(f.Types)
	}
	return w
}

// anyType narrows to the events whose type is one of types, or starts
// with one of them ending in ".".
func (w *where) anyType(types []string) {
	var or []string
	for _, t := range types {
		w.args = append(w.args, t)
		if strings.HasSuffix(t, ".") {
			or = append(or, fmt.Sprintf("substr(type, 1, %d) = $%d", len(t), len(w.args)))
		} else {
			or = append(or, fmt.Sprintf("type = $%d", len(w.args)))
		}
	}
	w.sql += " AND (" + strings.Join(or, " OR ") + ")"
}

// ListEvents returns a page of the landlord's events the reader may see.
func (q *Queries) ListEvents(ctx context.Context, acct *rental.Account, f EventFilter, now time.Time, p Page) ([]StoredEvent, bool, error) {
	w := q.eventWhere(acct, f, now)
	return list(ctx, q, w.sql, w.args, p, q.scanEvent)
}

// GetEvent returns one event the reader may see.
func (q *Queries) GetEvent(ctx context.Context, acct *rental.Account, id string, f EventFilter, now time.Time) (*StoredEvent, error) {
	w := q.eventWhere(acct, f, now).and("id = ?", id)
	return one(ctx, q, "event", id, w.sql, w.args, q.scanEvent)
}

// PurgeEvents deletes events past their retention.
func (db *DB) PurgeEvents(ctx context.Context) (int64, error) {
	return db.purge(ctx, "events", "events", "created_at < $1", ms(db.now().Add(-EventRetention)))
}
