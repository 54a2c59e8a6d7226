package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/riverqueue/river"

	"rentapi/internal/rental"
)

// fanOut queues a delivery of a new event to every enabled endpoint that
// wants it: endpoints of the same mode, of each application linked to the
// landlord whose grant and own scopes allow reading the event's type. The
// audience can narrow that to the account's application (whose link the
// event is about, active or not), or to one endpoint whatever it
// subscribed to (a webhook.test).
//
// It returns the IDs of the deliveries it queued.
func (tx *Tx) fanOut(ctx context.Context, acct *rental.Account, ev rental.Event, to audience) ([]string, error) {
	targets := []target{{to.endpoint, acct.ID}}
	if to.endpoint == "" {
		var err error
		if targets, err = tx.targets(ctx, acct, ev, to.app); err != nil {
			return nil, err
		}
	}
	jobs := make([]river.InsertManyParams, 0, len(targets))
	ids := make([]string, 0, len(targets))
	for _, t := range targets {
		ev.AccountID = t.accountID
		body, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("store: delivery body: %w", err)
		}
		id := rental.NewID(rental.PrefixDelivery)
		at := ms(ev.CreatedAt.Time)
		tx.deliveries = append(tx.deliveries, []any{id, t.endpointID, ev.ID, ev.Type, tx.sealCopy(deliveryBody, id, string(body)), rental.DeliveryPending, at, at, at})
		jobs = append(jobs, river.InsertManyParams{Args: DeliveryArgs{DeliveryID: id, Generation: 1}})
		ids = append(ids, id)
	}
	tx.enqueue(jobs...)
	return ids, nil
}

const deliveryColumns = `id, endpoint_id, event_id, event_type, body, status, attempts, generation, next_attempt_at, created_at, updated_at`

func (q *Queries) scanDelivery(sc *scanner, d *rental.Delivery) error {
	*d = rental.Delivery{Object: "webhook_delivery", Attempts: []rental.Attempt{}}
	var next sql.NullInt64
	var created, updated int64
	if err := sc.Scan(&d.ID, &d.EndpointID, &d.EventID, &d.EventType, &d.Body, &d.Status, &d.AttemptCount, &d.Generation, &next, &created, &updated); err != nil {
		return err
	}
	if next.Valid {
		t := rental.UnixMilli(next.Int64)
		d.NextAttemptAt = &t
	}
	d.CreatedAt, d.UpdatedAt = rental.UnixMilli(created), rental.UnixMilli(updated)
	body, err := q.openCopy(deliveryBody, d.ID, d.Body)
	d.Body = string(body)
	return err
}

// DeliveryFilter narrows a delivery list.
type DeliveryFilter struct {
	Status  string
	EventID string
}

// ListDeliveries returns a page of an endpoint's deliveries, each with its
// attempts. A missing endpoint is not found, not an empty list.
func (q *Queries) ListDeliveries(ctx context.Context, appID string, mode rental.Mode, endpointID string, f DeliveryFilter, p Page) ([]rental.Delivery, bool, error) {
	if _, err := q.GetEndpoint(ctx, appID, mode, endpointID); err != nil {
		return nil, false, err
	}
	w := scoped(`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE endpoint_id = $1`, endpointID).
		and("status = ?", f.Status).and("event_id = ?", f.EventID)
	items, more, err := list(ctx, q, w.sql, w.args, p, q.scanDelivery)
	if err != nil {
		return nil, false, err
	}
	return items, more, q.attachAttempts(ctx, items)
}

// GetDelivery returns one delivery of the application's endpoints of the
// mode, with its attempts.
func (q *Queries) GetDelivery(ctx context.Context, appID string, mode rental.Mode, id string) (*rental.Delivery, error) {
	d, err := one(ctx, q, "webhook_delivery", id, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE id = $1 AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE application_id = $2 AND mode = $3)`,
		[]any{id, appID, string(mode)}, q.scanDelivery)
	if err != nil {
		return nil, err
	}
	list := []rental.Delivery{*d}
	err = q.attachAttempts(ctx, list)
	return &list[0], err
}

// attachAttempts reads the attempts of the deliveries, in order.
func (q *Queries) attachAttempts(ctx context.Context, ds []rental.Delivery) error {
	if len(ds) == 0 {
		return nil
	}
	index := make(map[string]int, len(ds))
	args := make([]any, len(ds))
	marks := make([]string, len(ds))
	for i, d := range ds {
		index[d.ID] = i
		args[i] = d.ID
		marks[i] = fmt.Sprintf("$%d", i+1)
	}
	rows, err := q.c.QueryContext(ctx, `SELECT delivery_id, attempt, attempted_at, status_code, duration_ms, error, response_body
		FROM webhook_attempts WHERE delivery_id IN (`+strings.Join(marks, ", ")+`) ORDER BY delivery_id, attempt`, args...)
	if err != nil {
		return fmt.Errorf("store: attempts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var a rental.Attempt
		var at int64
		if err := rows.Scan(&id, &a.Attempt, &at, &a.StatusCode, &a.DurationMS, &a.Error, &a.ResponseBody); err != nil {
			return fmt.Errorf("store: attempts: %w", err)
		}
		a.AttemptedAt = rental.UnixMilli(at)
		d := &ds[index[id]]
		d.Attempts = append(d.Attempts, a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: attempts: %w", err)
	}
	return nil
}

// Resend queues a delivery again at once, as a new generation with a fresh
// run of attempts; the event and body are the same.
func (tx *Tx) Resend(ctx context.Context, appID string, mode rental.Mode, id string) (*rental.Delivery, error) {
	var gen int
	err := tx.c.QueryRowContext(ctx, `UPDATE webhook_deliveries SET generation = generation + 1, status = $1, next_attempt_at = $2, updated_at = $2
		WHERE id = $3 AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE application_id = $4 AND mode = $5)
		RETURNING generation`, rental.DeliveryPending, ms(tx.Now), id, appID, string(mode)).Scan(&gen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("webhook_delivery", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: resend: %w", err)
	}
	tx.enqueue(river.InsertManyParams{Args: DeliveryArgs{DeliveryID: id, Generation: gen}})
	return tx.GetDelivery(ctx, appID, mode, id)
}

// DeliveryWork is what a delivery job needs: the delivery, where it goes,
// and the sealed secrets that sign it.
type DeliveryWork struct {
	rental.Delivery
	URL            string
	EndpointStatus string
	Secret         string
	OldSecret      string
	OldSecretUntil time.Time
}

// deliveryWorkQuery selects what a delivery job needs; the caller adds the
// condition on d.id.
const deliveryWorkQuery = `SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.body, d.status, d.attempts,
			d.generation, d.next_attempt_at, d.created_at, d.updated_at, e.url, e.status, e.secret, e.old_secret, e.old_secret_until
		FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE d.id `

// scanDeliveryWork scans a row of deliveryWorkQuery.
func (q *Queries) scanDeliveryWork(row interface{ Scan(...any) error }) (*DeliveryWork, error) {
	var w DeliveryWork
	var old sql.NullString
	var until sql.NullInt64
	if err := q.scanDelivery(&scanner{src: row, more: []any{&w.URL, &w.EndpointStatus, &w.Secret, &old, &until}}, &w.Delivery); err != nil {
		return nil, err
	}
	w.OldSecret = old.String
	if until.Valid {
		w.OldSecretUntil = time.UnixMilli(until.Int64)
	}
	return &w, nil
}

// DeliveryWork loads a delivery for its job; not found once the endpoint is
// deleted or the delivery purged.
func (q *Queries) DeliveryWork(ctx context.Context, id string) (*DeliveryWork, error) {
	w, err := q.scanDeliveryWork(q.c.QueryRowContext(ctx, deliveryWorkQuery+`= $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("webhook_delivery", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: delivery: %w", err)
	}
	return w, nil
}

// MaxDeliveryWorks is the most deliveries DeliveryWorks loads at once.
const MaxDeliveryWorks = 256

// DeliveryWorks loads many deliveries for their jobs in one query, for the
// jobs a fetch of the delivery queue starts together. The result is in the
// order of ids, nil for a delivery not found (see DeliveryWork).
func (q *Queries) DeliveryWorks(ctx context.Context, ids []string) ([]*DeliveryWork, error) {
	if len(ids) > MaxDeliveryWorks {
		return nil, fmt.Errorf("store: deliveries: %d at once, at most %d", len(ids), MaxDeliveryWorks)
	}
	out := make([]*DeliveryWork, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	at := make(map[string][]int, len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		at[id] = append(at[id], i)
		args[i] = id
	}
	list, args := inList(1, args)
	rows, err := q.c.QueryContext(ctx, deliveryWorkQuery+`IN (`+list+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: deliveries: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		w, err := q.scanDeliveryWork(rows)
		if err != nil {
			return nil, fmt.Errorf("store: deliveries: %w", err)
		}
		for _, i := range at[w.ID] {
			out[i] = w
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: deliveries: %w", err)
	}
	return out, nil
}

// AttemptOutcome is one finished attempt and what follows from it, as
// rental.Attempt.Conclude decides it.
type AttemptOutcome = rental.AttemptOutcome

// RecordAttempt logs an attempt of a delivery's generation and moves the
// delivery on; see RecordAttempts. It reports whether the delivery moved.
func (tx *Tx) RecordAttempt(ctx context.Context, d *DeliveryWork, o AttemptOutcome) (bool, error) {
	moved, err := tx.RecordAttempts(ctx, []AttemptRecord{{Work: d, Outcome: o}})
	if err != nil {
		return false, err
	}
	return moved[0], nil
}

// AttemptRecord is one finished attempt to record: the delivery as its job
// loaded it, and what the attempt came to.
type AttemptRecord struct {
	Work    *DeliveryWork
	Outcome AttemptOutcome
}

// MaxAttemptRecords is the most attempts RecordAttempts takes at once,
// well under either engine's limit of parameters in one statement.
const MaxAttemptRecords = 256

// RecordAttempts logs attempts of distinct deliveries, each of its
// delivery's generation, and moves each delivery on: succeeded, failed for
// good, or pending until its Next. It keeps the endpoints' record of
// failing: a success clears it, and an endpoint whose deliveries have all
// failed for rental.FailingFor is disabled. An attempt of a stale
// generation is logged but moves nothing, and an attempt of a delivery
// deleted meanwhile (with its endpoint) is dropped. It reports, for each
// record in order, whether its delivery moved.
//
// The delivery workers record many attempts in one transaction this way: a
// few statements for the lot instead of a transaction each, which is what
// bounds deliveries per second on the single SQLite writer and on a busy
// PostgreSQL.
func (tx *Tx) RecordAttempts(ctx context.Context, recs []AttemptRecord) ([]bool, error) {
	moved := make([]bool, len(recs))
	if len(recs) == 0 {
		return moved, nil
	}
	if len(recs) > MaxAttemptRecords {
		return nil, fmt.Errorf("store: record attempts: %d at once, at most %d", len(recs), MaxAttemptRecords)
	}
	byID := make(map[string]int, len(recs))
	ids := make([]any, len(recs))
	for i, r := range recs {
		if _, dup := byID[r.Work.ID]; dup {
			return nil, fmt.Errorf("store: record attempts: delivery %s twice in one batch", r.Work.ID)
		}
		byID[r.Work.ID] = i
		ids[i] = r.Work.ID
	}
	// Count the attempts (and lock the deliveries, on PostgreSQL) first:
	// each attempt's number is its delivery's count after it.
	type counted struct {
		attempts, gen int
		status        string
	}
	found := make(map[string]counted, len(recs))
	list, ids := inList(2, ids)
	rows, err := tx.c.QueryContext(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1, updated_at = $1 WHERE id IN (`+list+`)
		RETURNING id, attempts, generation, status`, append([]any{ms(tx.Now)}, ids...)...)
	if err != nil {
		return nil, fmt.Errorf("store: record attempts: %w", err)
	}
	for rows.Next() {
		var id string
		var c counted
		if err := rows.Scan(&id, &c.attempts, &c.gen, &c.status); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: record attempts: %w", err)
		}
		found[id] = c
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: record attempts: %w", err)
	}
	if len(found) == 0 {
		return moved, nil // every endpoint was deleted meanwhile
	}
	var values strings.Builder
	args := make([]any, 0, 7*len(found))
	for _, r := range recs {
		c, ok := found[r.Work.ID]
		if !ok {
			continue
		}
		if len(args) > 0 {
			values.WriteString(", ")
		}
		values.WriteString("(" + params(len(args)+1, 7) + ")")
		o := r.Outcome
		var why *string
		if o.Error != nil {
			s := keptText(*o.Error)
			why = &s
		}
		args = append(args, r.Work.ID, c.attempts, ms(o.AttemptedAt.Time), o.StatusCode, o.DurationMS, why, keptText(o.ResponseBody))
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, status_code, duration_ms, error, response_body)
		VALUES `+values.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("store: record attempts: %w", err)
	}
	// Move the deliveries on as rental.Delivery.Record decides: the
	// successes and the final failures in one statement each, a retry with
	// its own time alone.
	var succeeded, failed []any
	// health is each endpoint's attempts in order: true for a success.
	health := map[string][]bool{}
	for i, r := range recs {
		c, ok := found[r.Work.ID]
		if !ok {
			continue
		}
		stored := rental.Delivery{Status: c.status, Generation: c.gen}
		step := stored.Record(r.Work.Generation, r.Outcome)
		if !step.Moved {
			continue
		}
		moved[i] = true
		health[r.Work.EndpointID] = append(health[r.Work.EndpointID], r.Outcome.Succeeded())
		switch step.Status {
		case rental.DeliverySucceeded:
			succeeded = append(succeeded, r.Work.ID)
		case rental.DeliveryFailed:
			failed = append(failed, r.Work.ID)
		default:
			if _, err := tx.c.ExecContext(ctx, `UPDATE webhook_deliveries SET next_attempt_at = $2 WHERE id = $1`, r.Work.ID, nullMs(step.NextAttemptAt)); err != nil {
				return nil, fmt.Errorf("store: record attempts: %w", err)
			}
		}
	}
	for _, done := range []struct {
		status string
		ids    []any
	}{{rental.DeliverySucceeded, succeeded}, {rental.DeliveryFailed, failed}} {
		if len(done.ids) == 0 {
			continue
		}
		list, ids := inList(2, done.ids)
		_, err := tx.c.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = NULL WHERE id IN (`+list+`)`,
			append([]any{done.status}, ids...)...)
		if err != nil {
			return nil, fmt.Errorf("store: record attempts: %w", err)
		}
	}
	if err := tx.endpointHealth(ctx, health); err != nil {
		return nil, err
	}
	return moved, nil
}

// keptText is text from outside the service (a receiver's answer, the
// error its connection gave, a request's path) as a text column of either
// engine keeps it: invalid UTF-8 and NUL, which PostgreSQL refuses in text
// and SQLite would cut the text at, become U+FFFD. Whatever a receiver
// answers, its attempt is recorded; whatever a client asks, its request is
// logged. Text that is already fit, nearly all of it, is s itself.
func keptText(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, "\x00") {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// AbandonDelivery ends a pending delivery of the generation as failed
// without recording an attempt: when its endpoint is disabled, or when its
// job's last run could not record one.
func (tx *Tx) AbandonDelivery(ctx context.Context, id string, generation int) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE webhook_deliveries SET status = $1, next_attempt_at = NULL, updated_at = $2
		WHERE id = $3 AND generation = $4 AND status = $5`, rental.DeliveryFailed, ms(tx.Now), id, generation, rental.DeliveryPending)
	if err != nil {
		return fmt.Errorf("store: abandon delivery: %w", err)
	}
	return nil
}

// DeliveryRetention is how long deliveries and their attempts are listed.
const DeliveryRetention = 30 * 24 * time.Hour

// PurgeDeliveries deletes deliveries (with their attempts) past retention
// that are no longer pending.
func (db *DB) PurgeDeliveries(ctx context.Context) (int64, error) {
	return db.purge(ctx, "deliveries", "webhook_deliveries", "created_at < $1 AND status <> $2",
		ms(db.now().Add(-DeliveryRetention)), rental.DeliveryPending)
}
