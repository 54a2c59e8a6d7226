package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
)

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
		if all.keep {
			tx.endpoints = linkedEndpoints{read: true, landlordID: acct.LandlordID, mode: ev.Mode, list: all.list}
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
	read bool
	// keep is whether the first event's read may serve the
	// transaction's later events (see readEndpointsAhead).
	keep       bool
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
// change. On SQLite, where a read costs no round trip, the first event
// reads them, and its read serves the later ones (a bill run's hundreds).
func (tx *Tx) readEndpointsAhead(acct *rental.Account) {
	if s, ok := tx.endpointsRead(acct); ok && !tx.Ahead(s) {
		tx.endpoints.keep = true
	}
}

// endpointsRead is the read that readEndpointsAhead queues, for a caller
// that runs it with reads of its own (on SQLite too, where it saves each
// of many events its own read); false when the endpoints are read already
// or the transaction records no events.
func (tx *Tx) endpointsRead(acct *rental.Account) (database.Stmt, bool) {
	e := &tx.endpoints
	if tx.quiet || e.read && e.landlordID == acct.LandlordID && e.mode == acct.Mode() {
		return database.Stmt{}, false
	}
	return database.Stmt{SQL: tx.endpointsQuery(), Args: []any{acct.LandlordID, string(acct.Mode()), rental.EndpointEnabled},
		What: "store: endpoints for event", Rows: func(rows database.Rows) error {
			list, err := scanLinkedEndpoints(rows)
			*e = linkedEndpoints{read: err == nil, landlordID: acct.LandlordID, mode: acct.Mode(), list: list}
			return err
		}}, true
}

// endpointHealth keeps each endpoint's record of failing after its
// attempts as rental.EndpointHealth decides: a success clears the record; a
// failure starts it unless it has started, then the endpoint is disabled
// if rental.DisablesFailing says so. The failing endpoints are taken in
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
		if err == nil && rental.DisablesFailing(status, time.UnixMilli(since), tx.Now) {
			_, err = tx.c.ExecContext(ctx, `UPDATE webhook_endpoints SET status = $2, disabled_reason = $3, updated_at = $4
				WHERE id = $1 AND status = $5`, id, rental.EndpointDisabled, rental.EndpointFailingReason, ms(tx.Now), rental.EndpointEnabled)
		}
		if err != nil {
			return fmt.Errorf("store: endpoint health: %w", err)
		}
	}
	return nil
}
