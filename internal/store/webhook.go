package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/database"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
)

// DeliveryArgs is the job that sends one delivery. Generation is the
// delivery's at the time the job was queued: a resend starts a new
// generation, and a job of an older one does nothing.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id"`
	Generation int    `json:"generation"`
}

// Kind names the job in the queue.
func (DeliveryArgs) Kind() string { return "webhook_delivery" }

// DeliveryQueue is the queue deliveries run on, apart from the sweeps, so
// a slow receiver never holds up overdue bills.
const DeliveryQueue = "webhook"

// InsertOpts puts every delivery on its queue with the spec's 8 attempts.
func (DeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: DeliveryQueue, MaxAttempts: rental.MaxAttempts}
}

// enqueue queues jobs in the transaction: they exist exactly when it
// commits. They are inserted together at Commit, in one statement however
// many events the transaction recorded (one insert each cost PostgreSQL a
// round trip per event).
func (tx *Tx) enqueue(jobs ...river.InsertManyParams) { tx.jobs = append(tx.jobs, jobs...) }

const endpointColumns = `id, application_id, mode, url, enabled_events, description, status, disabled_reason, created_at, updated_at`

func scanEndpoint(sc *scanner, e *rental.WebhookEndpoint) error {
	*e = rental.WebhookEndpoint{Object: "webhook_endpoint"}
	var mode, events string
	var created, updated int64
	err := sc.Scan(&e.ID, &e.ApplicationID, &mode, &e.URL, &events, &e.Description, &e.Status, &e.DisabledReason, &created, &updated)
	if err != nil {
		return err
	}
	e.Mode, e.CreatedAt, e.UpdatedAt = rental.Mode(mode), rental.UnixMilli(created), rental.UnixMilli(updated)
	if err := json.Unmarshal([]byte(events), &e.EnabledEvents); err != nil {
		return fmt.Errorf("enabled_events: %w", err)
	}
	return nil
}

func eventsJSON(list []string) string {
	b, _ := json.Marshal(list)
	return string(b)
}

// CreateEndpoint adds an endpoint of the application in one mode, from a
// checked spec (URL and events set), with a new signing secret: returned
// in Secret this once, and stored only sealed under the server secret,
// bound to the endpoint's ID. The developer's plan limits how many
// endpoints it has across all its applications, test and live together;
// the developer's row is locked while its plan is read and the endpoints
// counted, so concurrent creates cannot pass the limit.
func (tx *Tx) CreateEndpoint(ctx context.Context, app *rental.Application, mode rental.Mode, spec rental.EndpointSpec, sec *secret.Secret) (*rental.WebhookEndpoint, error) {
	if spec.URL == nil || spec.EnabledEvents == nil {
		return nil, fmt.Errorf("store: create endpoint: a URL and events are required")
	}
	var plan string
	err := tx.c.QueryRowContext(ctx, `UPDATE developers SET plan = plan WHERE id = $1 RETURNING plan`, app.DeveloperID).Scan(&plan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("developer", app.DeveloperID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: lock developer: %w", err)
	}
	var n int
	err = tx.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhook_endpoints e JOIN applications a ON a.id = e.application_id
		WHERE a.developer_id = $1`, app.DeveloperID).Scan(&n)
	if err != nil {
		return nil, fmt.Errorf("store: count endpoints: %w", err)
	}
	if err := rental.DeveloperPlan(plan).CheckEndpoints(n); err != nil {
		return nil, err
	}
	var description *string
	if spec.Description != nil {
		description = *spec.Description
	}
	id := rental.NewID(rental.PrefixWebhookEndpoint)
	signing := rental.NewSigningSecret()
	_, err = tx.c.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, application_id, mode, url, enabled_events, description, status, secret, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		id, app.ID, string(mode), *spec.URL, eventsJSON(spec.EnabledEvents), description, rental.EndpointEnabled, sealSigning(sec, signing, id), ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: create endpoint: %w", err)
	}
	e, err := tx.GetEndpoint(ctx, app.ID, mode, id)
	if err != nil {
		return nil, err
	}
	e.Secret = signing
	return e, nil
}

// sealSigning is how a signing secret is stored: sealed under the server
// secret and bound to its endpoint (the delivery job opens it with the
// same ID), so a copy moved to another endpoint's row does not open.
func sealSigning(sec *secret.Secret, signing, endpointID string) string {
	return sec.Seal([]byte(signing), []byte(endpointID))
}

// GetEndpoint returns an endpoint of the application and mode.
func (q *Queries) GetEndpoint(ctx context.Context, appID string, mode rental.Mode, id string) (*rental.WebhookEndpoint, error) {
	return one(ctx, q, "webhook_endpoint", id, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE application_id = $1 AND mode = $2 AND id = $3`, []any{appID, string(mode), id}, scanEndpoint)
}

// ListEndpoints returns a page of the application's endpoints of one mode.
func (q *Queries) ListEndpoints(ctx context.Context, appID string, mode rental.Mode, p Page) ([]rental.WebhookEndpoint, bool, error) {
	return list(ctx, q, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE application_id = $1 AND mode = $2`,
		[]any{appID, string(mode)}, p, scanEndpoint)
}

// UpdateEndpoint changes an endpoint. Disabling it records the spec's
// reason; enabling it again clears the reason and the record of its
// failures.
func (tx *Tx) UpdateEndpoint(ctx context.Context, appID string, mode rental.Mode, id string, s rental.EndpointSpec) (*rental.WebhookEndpoint, error) {
	w := &where{sql: `UPDATE webhook_endpoints SET updated_at = $1`, args: []any{ms(tx.Now)}}
	set := func(col string, v any) {
		w.args = append(w.args, v)
		w.sql += fmt.Sprintf(", %s = $%d", col, len(w.args))
	}
	if s.URL != nil {
		set("url", *s.URL)
	}
	if s.EnabledEvents != nil {
		set("enabled_events", eventsJSON(s.EnabledEvents))
	}
	if s.Description != nil {
		set("description", *s.Description)
	}
	if s.Status != nil {
		set("status", *s.Status)
		if *s.Status == rental.EndpointEnabled {
			w.sql += ", disabled_reason = NULL, failing_since = NULL"
		} else {
			set("disabled_reason", s.DisabledReason)
		}
	}
	w.args = append(w.args, appID, string(mode), id)
	n := len(w.args)
	w.sql += fmt.Sprintf(" WHERE application_id = $%d AND mode = $%d AND id = $%d", n-2, n-1, n)
	if err := tx.execOne(ctx, "webhook_endpoint", id, w.sql, w.args...); err != nil {
		return nil, err
	}
	return tx.GetEndpoint(ctx, appID, mode, id)
}

// DeleteEndpoint removes an endpoint with its deliveries; queued jobs of
// those deliveries find nothing and end.
func (tx *Tx) DeleteEndpoint(ctx context.Context, appID string, mode rental.Mode, id string) error {
	return tx.execOne(ctx, "webhook_endpoint", id, `DELETE FROM webhook_endpoints WHERE application_id = $1 AND mode = $2 AND id = $3`,
		appID, string(mode), id)
}

// RotateSecret gives an endpoint a new signing secret, returned in Secret
// this once and stored sealed as at creation; the old one keeps signing
// next to the new one until the overlap ends. Rotating again during an
// overlap retires the oldest.
func (tx *Tx) RotateSecret(ctx context.Context, appID string, mode rental.Mode, id string, sec *secret.Secret) (*rental.WebhookEndpoint, error) {
	signing := rental.NewSigningSecret()
	err := tx.execOne(ctx, "webhook_endpoint", id, `UPDATE webhook_endpoints
		SET old_secret = secret, old_secret_until = $1, secret = $2, updated_at = $3
		WHERE application_id = $4 AND mode = $5 AND id = $6`,
		ms(tx.Now.Add(rental.SecretOverlap)), sealSigning(sec, signing, id), ms(tx.Now), appID, string(mode), id)
	if err != nil {
		return nil, err
	}
	e, err := tx.GetEndpoint(ctx, appID, mode, id)
	if err != nil {
		return nil, err
	}
	e.Secret = signing
	return e, nil
}

// target is an endpoint an event goes to, as the account of the
// endpoint's application sees the event.
type target struct {
	endpointID, accountID string
}

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

// targets are the endpoints that receive ev: of the linked applications
// whose links are active, or, for an event of a link (ownApp), of the
// account's application whatever the link's state.
func (tx *Tx) targets(ctx context.Context, acct *rental.Account, ev rental.Event, ownApp bool) ([]target, error) {
	all := tx.endpoints
	if !all.read || all.landlordID != acct.LandlordID || all.mode != ev.Mode {
		rows, err := tx.c.QueryContext(ctx, tx.endpointsQuery(), acct.LandlordID, string(ev.Mode), rental.EndpointEnabled)
		if err != nil {
			return nil, fmt.Errorf("store: endpoints for event: %w", err)
		}
		defer rows.Close()
		if all.list, err = scanLinkedEndpoints(rows); err != nil {
			return nil, fmt.Errorf("store: endpoints for event: %w", err)
		}
	}
	var targets []target
	for _, e := range all.list {
		if ownApp && e.accountID != acct.ID || !ownApp && !e.active {
			continue
		}
		w := rental.WebhookEndpoint{}
		if json.Unmarshal([]byte(e.events), &w.EnabledEvents) != nil || !w.Wants(ev.Type) {
			continue
		}
		g, _ := rental.ParseScopes(e.granted)
		a, _ := rental.ParseScopes(e.asked)
		if g.Intersect(a).CanRead(ev.Type) {
			targets = append(targets, e.target)
		}
	}
	return targets, nil
}

// linkedEndpoints are the enabled endpoints of one mode of the
// applications linked to a landlord (endpointsQuery), once read.
type linkedEndpoints struct {
	read       bool
	landlordID string
	mode       rental.Mode
	list       []linkedEndpoint
}

// linkedEndpoint is an endpoint with the link through which it sees the
// landlord: whether the link is active, the scopes it granted and those
// the application asks for.
type linkedEndpoint struct {
	target
	events, granted, asked string
	active                 bool
}

// endpointsQuery selects the linkedEndpoints of landlord $1 in mode $2,
// status $3. On PostgreSQL the endpoints stay until the transaction ends
// (FOR KEY SHARE), as the deliveries' foreign keys would hold them: those
// are inserted at commit (see flush), and a deletion meanwhile waits and
// then takes the deliveries with it. SQLite has one writer: nothing is
// deleted meanwhile.
func (tx *Tx) endpointsQuery() string {
	q := `SELECT e.id, e.enabled_events, a.id, a.revoked_at IS NULL, a.scopes, app.scopes
		FROM webhook_endpoints e
		JOIN applications app ON app.id = e.application_id
		JOIN accounts a ON a.application_id = e.application_id
		WHERE a.landlord_id = $1 AND e.mode = $2 AND e.status = $3`
	if tx.db.Engine() == Postgres {
		q += ` FOR KEY SHARE OF e`
	}
	return q
}

func scanLinkedEndpoints(rows database.Rows) ([]linkedEndpoint, error) {
	var list []linkedEndpoint
	for rows.Next() {
		var e linkedEndpoint
		if err := rows.Scan(&e.endpointID, &e.events, &e.accountID, &e.active, &e.granted, &e.asked); err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	return list, rows.Err()
}

// readEndpointsAhead queues the read of the landlord's endpoints that the
// events of the transaction go to (see targets) for its next round trip,
// on PostgreSQL: the round trip a write would otherwise spend on it once
// it records its event. Once read, they serve the transaction's later
// events of the landlord too. Only for the writes of the landlord's own
// data (properties, rooms, tenants, readings, bills), which change no
// link, application or endpoint: the endpoints read would not show the
// change.
func (tx *Tx) readEndpointsAhead(acct *rental.Account) {
	e := &tx.endpoints
	if tx.quiet || e.read && e.landlordID == acct.LandlordID && e.mode == acct.Mode() {
		return
	}
	tx.Ahead(database.Stmt{SQL: tx.endpointsQuery(), Args: []any{acct.LandlordID, string(acct.Mode()), rental.EndpointEnabled},
		What: "store: endpoints for event", Rows: func(rows database.Rows) error {
			list, err := scanLinkedEndpoints(rows)
			*e = linkedEndpoints{read: err == nil, landlordID: acct.LandlordID, mode: acct.Mode(), list: list}
			return err
		}})
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
// error its connection gave) as a text column of either engine keeps it:
// invalid UTF-8 and NUL, which PostgreSQL refuses in text and SQLite would
// cut the text at, become U+FFFD. Whatever a receiver answers, its attempt
// is recorded.
func keptText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// endpointHealth keeps each endpoint's record of failing after its
// attempts as rental.EndpointHealth decides: a success clears the record; a
// failure starts it unless it has started, then the endpoint is disabled
// if rental.FailedTooLong says so. The failing endpoints are taken in
// order of ID, so that two processes recording attempts of the same
// endpoints lock them in the same order.
func (tx *Tx) endpointHealth(ctx context.Context, health map[string][]bool) error {
	var cleared []any
	var failing []string
	for id, oks := range health {
		h := rental.EndpointHealth(oks)
		if h.Clear {
			// A failure after the success starts the record again from now.
			cleared = append(cleared, id)
		}
		if h.Fail {
			failing = append(failing, id)
		}
	}
	if len(cleared) > 0 {
		slices.SortFunc(cleared, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		list, ids := inList(1, cleared)
		_, err := tx.c.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN (`+list+`) AND failing_since IS NOT NULL`, ids...)
		if err != nil {
			return fmt.Errorf("store: endpoint health: %w", err)
		}
	}
	slices.Sort(failing)
	for _, id := range failing {
		// The update locks the endpoint until the commit: the record read
		// back is the one the decision is taken on.
		var since int64
		var status string
		err := tx.c.QueryRowContext(ctx, `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2) WHERE id = $1
			RETURNING failing_since, status`, id, ms(tx.Now)).Scan(&since, &status)
		if errors.Is(err, sql.ErrNoRows) {
			continue // deleted meanwhile
		}
		if err == nil && status == rental.EndpointEnabled && rental.FailedTooLong(time.UnixMilli(since), tx.Now) {
			_, err = tx.c.ExecContext(ctx, `UPDATE webhook_endpoints SET status = $2, disabled_reason = $3, updated_at = $4
				WHERE id = $1 AND status = $5`, id, rental.EndpointDisabled, rental.EndpointFailingReason, ms(tx.Now), rental.EndpointEnabled)
		}
		if err != nil {
			return fmt.Errorf("store: endpoint health: %w", err)
		}
	}
	return nil
}

// inList is the placeholders of an IN (...) list of vals from $from, and
// the values to pass for them. The list is padded to a power of two by
// repeating the last value (which IN ignores), so that lists of any length
// make a handful of statement texts: PostgreSQL's driver prepares and
// caches each text it sees on each connection.
func inList(from int, vals []any) (string, []any) {
	n := 1
	for n < len(vals) {
		n *= 2
	}
	padded := make([]any, n)
	copy(padded, vals)
	for i := len(vals); i < n; i++ {
		padded[i] = vals[len(vals)-1]
	}
	return params(from, n), padded
}

// params is n numbered placeholders from $from, comma separated, for a
// statement over a list of values.
func params(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(from+i))
	}
	return b.String()
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
	res, err := db.write.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE created_at < $1 AND status <> $2`,
		ms(db.now().Add(-DeliveryRetention)), rental.DeliveryPending)
	if err != nil {
		return 0, fmt.Errorf("store: purge deliveries: %w", err)
	}
	return res.RowsAffected()
}
