package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
)

// Landlord returns a landlord's own account for the landlord's settings:
// plan, PromptPay receiver, and the counts of its properties and rooms.
func (q *Queries) Landlord(ctx context.Context, landlordID string) (*rental.Landlord, error) {
	l := rental.Landlord{ID: landlordID}
	var plan string
	var receiver, holder sql.NullString
	err := q.c.QueryRowContext(ctx, `SELECT name, plan, qr_payments, promptpay, promptpay_name, properties_count, rooms_count
		FROM landlords WHERE id = $1 AND sandbox = FALSE`, landlordID).
		Scan(&l.Name, &plan, &l.QRPayments, &receiver, &holder, &l.Usage.Properties, &l.Usage.Rooms)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("landlord", landlordID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: landlord: %w", err)
	}
	l.Plan = rental.LandlordPlan(plan)
	l.ReceiverName = holder.String
	if receiver.Valid {
		var r promptpay.Receiver
		if err := json.Unmarshal([]byte(receiver.String), &r); err != nil {
			return nil, fmt.Errorf("store: landlord %s receiver: %w", landlordID, err)
		}
		l.Receiver = &r
	}
	return &l, nil
}

// ChangeLandlordPlan moves a landlord to a plan its data fits
// (rental.CheckPlanChange). It claims the landlord first, so no property
// or room can be added between the count and the change; QR payments
// follow the plan (SetLandlordPlan).
func (tx *Tx) ChangeLandlordPlan(ctx context.Context, landlordID string, plan rental.LandlordPlan) error {
	if err := tx.Claim(ctx, &rental.Account{LandlordID: landlordID}); errors.Is(err, sql.ErrNoRows) {
		return rental.NotFound("landlord", landlordID)
	} else if err != nil {
		return err
	}
	l, err := tx.Landlord(ctx, landlordID)
	if err != nil {
		return err
	}
	if err := rental.CheckPlanChange(plan, l.Usage); err != nil {
		return err
	}
	return tx.SetLandlordPlan(ctx, landlordID, plan)
}

const connectionColumns = `a.id, a.application_id, app.name, app.company, a.scopes, a.updated_at`

func scanConnection(sc interface{ Scan(...any) error }, c *rental.Connection) error {
	*c = rental.Connection{}
	var scopes string
	var approved int64
	err := sc.Scan(&c.AccountID, &c.ApplicationID, &c.Application, &c.Company, &scopes, &approved)
	c.Granted, _ = rental.ParseScopes(scopes)
	c.ApprovedAt = rental.UnixMilli(approved)
	return err
}

// Connections lists the applications a landlord is connected to now (a
// disconnected one is not), by name: what the landlord reviews and may
// disconnect. A link's updated_at is its latest approval, since only an
// approval changes a link that is not ended.
func (q *Queries) Connections(ctx context.Context, landlordID string) ([]rental.Connection, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT `+connectionColumns+` FROM accounts a JOIN applications app ON app.id = a.application_id
		WHERE a.landlord_id = $1 AND a.sandbox = FALSE AND a.revoked_at IS NULL ORDER BY app.name, a.id`, landlordID)
	if err != nil {
		return nil, fmt.Errorf("store: connections: %w", err)
	}
	defer rows.Close()
	out := []rental.Connection{}
	for rows.Next() {
		var c rental.Connection
		if err := scanConnection(rows, &c); err != nil {
			return nil, fmt.Errorf("store: connections: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: connections: %w", err)
	}
	return out, nil
}

// Connection returns one application the landlord is connected to, by
// its account; another landlord's account, or a link already ended, is
// not found.
func (q *Queries) Connection(ctx context.Context, landlordID, accountID string) (*rental.Connection, error) {
	var c rental.Connection
	err := scanConnection(q.c.QueryRowContext(ctx, `SELECT `+connectionColumns+` FROM accounts a JOIN applications app ON app.id = a.application_id
		WHERE a.landlord_id = $1 AND a.id = $2 AND a.sandbox = FALSE AND a.revoked_at IS NULL`, landlordID, accountID), &c)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("connection", accountID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: connection: %w", err)
	}
	return &c, nil
}

// LandlordAccount returns the landlord's account under the application,
// linked now or before (Revoked says which), so a consent page can tell
// which scopes the current grant lacks. Never linked is not found.
func (q *Queries) LandlordAccount(ctx context.Context, appID, landlordID string) (*rental.Account, error) {
	var id string
	err := q.c.QueryRowContext(ctx, `SELECT id FROM accounts WHERE application_id = $1 AND landlord_id = $2`, appID, landlordID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("account", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: landlord account: %w", err)
	}
	return q.GetAccount(ctx, appID, id)
}

// SetApplicationScopes replaces the scopes an application asks landlords
// for: a scope added here is used only once a landlord approves it (a
// request may use key ∩ application ∩ grant); a scope removed here is
// refused from the next request and taken out of every grant.
func (tx *Tx) SetApplicationScopes(ctx context.Context, appID string, scopes rental.Scopes) error {
	scopes = scopes.Intersect(rental.AllScopes)
	if err := tx.execOne(ctx, "application", appID, `UPDATE applications SET scopes = $2 WHERE id = $1`, appID, scopes.String()); err != nil {
		return err
	}
	return tx.narrowGrants(ctx, appID, scopes)
}

// CreateLandlord adds a real landlord on a plan, with QR payments as the
// plan has them.
func (tx *Tx) CreateLandlord(ctx context.Context, name string, plan rental.LandlordPlan) (string, error) {
	if err := plan.Check(); err != nil {
		return "", err
	}
	return tx.createLandlord(ctx, name, plan, plan.QRPayments(), false)
}

func (tx *Tx) createLandlord(ctx context.Context, name string, plan rental.LandlordPlan, qr, sandbox bool) (string, error) {
	id := rental.NewID(rental.PrefixLandlord)
	_, err := tx.c.ExecContext(ctx, `INSERT INTO landlords (id, name, plan, qr_payments, sandbox, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6)`, id, name, string(plan), qr, sandbox, ms(tx.Now))
	if err != nil {
		return "", fmt.Errorf("store: create landlord: %w", err)
	}
	return id, nil
}

// SetLandlordPlan changes a landlord's plan; QR payments follow it.
func (tx *Tx) SetLandlordPlan(ctx context.Context, landlordID string, plan rental.LandlordPlan) error {
	if err := plan.Check(); err != nil {
		return err
	}
	return tx.execOne(ctx, "landlord", landlordID, `UPDATE landlords SET plan = $2, qr_payments = $3, updated_at = $4 WHERE id = $1`,
		landlordID, string(plan), plan.QRPayments(), ms(tx.Now))
}

// DataVersion is where the landlord's data stands, as an opaque token:
// every write of the landlord's data claims the landlord first (Tx.Claim),
// and the claim moves the landlord's count of writes on, in the same
// transaction, and its clock. So a read made from the landlord's data
// alone, by the same caller, answers the same for as long as the token is
// the same, on every process: what the API's ETags are made from. The clock
// keeps a token from coming back after a database is restored to an
// earlier copy (the next write's clock is later than any before). The
// landlord's row holds more than its data (its PromptPay receiver, set
// without a claim): no read tagged by the token shows it. A landlord that
// is not there has the token "0".
func (q *Queries) DataVersion(ctx context.Context, landlordID string) (string, error) {
	var v dataVersion
	err := q.c.QueryRowContext(ctx, `SELECT data_version, clock FROM landlords WHERE id = $1`, landlordID).Scan(&v.writes, &v.clock)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: data version: %w", err)
	}
	return v.String(), nil
}

// dataVersion is a landlord's count of writes and clock (see
// Queries.DataVersion).
type dataVersion struct{ writes, clock int64 }

func (v dataVersion) String() string {
	if v == (dataVersion{}) {
		return "0"
	}
	return strconv.FormatInt(v.writes, 10) + "." + strconv.FormatInt(v.clock, 10)
}
