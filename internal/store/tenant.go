package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

const tenantColumns = `id, room_id, property_id, name, phone, email, chat_enabled, chat_registered, chat_registration_code, occupants,
	moved_in_at, moved_out_at, created_at, updated_at, deposit, lease_end`

// scanTenant reads a tenant row. Its chat_registration_url is left null:
// the service's add-friend link is configuration, filled in where a tenant
// is shown (see recordTenantEvent, DB.AddFriendURL).
func (q *Queries) scanTenant(sc *scanner, t *rental.Tenant) error {
	*t = rental.Tenant{Object: "tenant"}
	var email, code, leaseEnd sql.NullString
	var in, created, updated integer
	var out nullInteger
	err := sc.Scan(&t.ID, &t.RoomID, &t.PropertyID, &t.Name, &t.Phone, &email, &t.ChatEnabled, &t.ChatRegistered, &code, (*integer)(&t.Occupants),
		&in, &out, &created, &updated, (*integer)(&t.Deposit), &leaseEnd)
	if email.Valid {
		t.Email = &email.String
	}
	if code.Valid {
		t.ChatRegistrationCode = &code.String
	}
	if leaseEnd.Valid {
		t.LeaseEnd = &leaseEnd.String
	}
	t.MovedInAt, t.MovedOutAt = rental.UnixMilli(int64(in)), optTime(sql.NullInt64(out))
	t.CreatedAt, t.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return err
}

// GetTenant returns a tenant (current or moved out) of the account's landlord.
func (q *Queries) GetTenant(ctx context.Context, acct *rental.Account, id string) (*rental.Tenant, error) {
	return one(ctx, q, "tenant", id, `SELECT `+tenantColumns+` FROM tenants WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, q.scanTenant)
}

// currentTenant returns the room's tenant, or nil when it has none.
func (q *Queries) currentTenant(ctx context.Context, acct *rental.Account, roomID string) (*rental.Tenant, error) {
	var t rental.Tenant
	err := q.scanTenant(&scanner{src: q.c.QueryRowContext(ctx, `SELECT `+tenantColumns+` FROM tenants
		WHERE landlord_id = $1 AND room_id = $2 AND moved_out_at IS NULL`, acct.LandlordID, roomID)}, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("tenant of room", roomID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: current tenant: %w", err)
	}
	return &t, nil
}

// TenantFilter narrows a tenant list; without MovedOut only current tenants
// are listed.
type TenantFilter struct {
	PropertyID string
	RoomID     string
	MovedOut   bool
}

// ListTenants returns a page of the account's tenants.
func (q *Queries) ListTenants(ctx context.Context, acct *rental.Account, f TenantFilter, p Page) ([]rental.Tenant, bool, error) {
	w := scoped(`SELECT `+tenantColumns+` FROM tenants WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID)
	if !f.MovedOut {
		w.sql += " AND moved_out_at IS NULL"
	}
	return list(ctx, q, w.sql, w.args, p, q.scanTenant)
}

// MoveIn puts a tenant in a room without one (else 409 room_occupied); the
// room becomes occupied. Records tenant.created and room.updated.
func (tx *Tx) MoveIn(ctx context.Context, acct *rental.Account, roomID string, t rental.Tenant) (*rental.Tenant, error) {
	tx.readEndpointsAhead(acct)
	if err := tx.lock(ctx, "rooms", "room", acct.LandlordID, roomID); err != nil {
		return nil, err
	}
	room, err := tx.GetRoom(ctx, acct, roomID)
	if err != nil {
		return nil, err
	}
	if err := room.MoveIn(); err != nil {
		return nil, err
	}
	t.ID, t.RoomID, t.PropertyID = rental.NewID(rental.PrefixTenant), room.ID, room.PropertyID
	t.CreatedAt, t.UpdatedAt = rental.Time{Time: tx.Now}, rental.Time{Time: tx.Now}
	code := rental.NewRegistrationCode()
	t.ChatRegistrationCode, t.ChatRegistered = &code, false
	_, err = tx.c.ExecContext(ctx, `INSERT INTO tenants (id, landlord_id, property_id, room_id, name, phone, email, chat_enabled, occupants,
			moved_in_at, created_at, updated_at, chat_registration_code, deposit, lease_end)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12, $13, $14)`,
		t.ID, acct.LandlordID, t.PropertyID, t.RoomID, t.Name, t.Phone, t.Email, t.ChatEnabled, t.Occupants, ms(t.MovedInAt.Time), ms(tx.Now), code,
		t.Deposit, t.LeaseEnd)
	if database.IsUniqueViolation(err) {
		return nil, rental.Occupied(room, "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: move in: %w", err)
	}
	if err := tx.recordTenantEvent(ctx, acct, "tenant.created", &t); err != nil {
		return nil, err
	}
	room.Status, room.TenantID = rental.RoomOccupied, &t.ID
	return &t, tx.saveRoom(ctx, acct, room)
}

// MoveOut ends the room's tenancy now: the tenant record stays with
// moved_out_at set, the room becomes vacant. Records tenant.deleted and
// room.updated. SettleMoveOut does the same with a settlement.
func (tx *Tx) MoveOut(ctx context.Context, acct *rental.Account, roomID string) (*rental.Tenant, error) {
	room, t, err := tx.roomTenant(ctx, acct, roomID)
	if err != nil {
		return nil, err
	}
	return t, tx.vacate(ctx, acct, room, t, tx.Now)
}

// roomTenant locks the room and returns it with its tenant: 404 for a room
// of another account or without a tenant.
func (tx *Tx) roomTenant(ctx context.Context, acct *rental.Account, roomID string) (*rental.Room, *rental.Tenant, error) {
	if err := tx.lock(ctx, "rooms", "room", acct.LandlordID, roomID); err != nil {
		return nil, nil, err
	}
	room, err := tx.GetRoom(ctx, acct, roomID)
	if err != nil {
		return nil, nil, err
	}
	if err := room.MoveOut(); err != nil {
		return nil, nil, err
	}
	t, err := tx.currentTenant(ctx, acct, roomID)
	if err != nil {
		return nil, nil, err
	}
	return room, t, nil
}

// vacate moves the tenant out of the room at out: the tenant keeps its
// record with moved_out_at, the room becomes vacant (tenant.deleted,
// room.updated).
func (tx *Tx) vacate(ctx context.Context, acct *rental.Account, room *rental.Room, t *rental.Tenant, out time.Time) error {
	at, now := rental.Time{Time: out}, rental.Time{Time: tx.Now}
	t.MovedOutAt, t.UpdatedAt = &at, now
	if _, err := tx.c.ExecContext(ctx, `UPDATE tenants SET moved_out_at = $3, updated_at = $4 WHERE landlord_id = $1 AND id = $2`,
		acct.LandlordID, t.ID, ms(out), ms(tx.Now)); err != nil {
		return fmt.Errorf("store: move out: %w", err)
	}
	if err := tx.recordTenantEvent(ctx, acct, "tenant.deleted", t); err != nil {
		return err
	}
	room.Status, room.TenantID = rental.RoomVacant, nil
	return tx.saveRoom(ctx, acct, room)
}

// UpdateTenant changes contact details, chat setting or occupants, and
// records tenant.updated when anything changed.
func (tx *Tx) UpdateTenant(ctx context.Context, acct *rental.Account, id string, c rental.TenantChange) (*rental.Tenant, error) {
	if err := tx.lock(ctx, "tenants", "tenant", acct.LandlordID, id); err != nil {
		return nil, err
	}
	t, err := tx.GetTenant(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	before := *t
	if err := t.Apply(c); err != nil {
		return nil, err
	}
	sameEmail := (before.Email == nil) == (t.Email == nil) && (t.Email == nil || *before.Email == *t.Email)
	if before.Name == t.Name && before.Phone == t.Phone && sameEmail && before.ChatEnabled == t.ChatEnabled && before.Occupants == t.Occupants &&
		before.Deposit == t.Deposit && sameDate(before.LeaseEnd, t.LeaseEnd) {
		return t, nil
	}
	t.UpdatedAt = rental.Time{Time: tx.Now}
	_, err = tx.c.ExecContext(ctx, `UPDATE tenants SET name = $3, phone = $4, email = $5, chat_enabled = $6, occupants = $7, updated_at = $8,
			deposit = $9, lease_end = $10
		WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, id, t.Name, t.Phone, t.Email, t.ChatEnabled, t.Occupants, ms(tx.Now), t.Deposit, t.LeaseEnd)
	if err != nil {
		return nil, fmt.Errorf("store: update tenant: %w", err)
	}
	return t, tx.recordTenantEvent(ctx, acct, "tenant.updated", t)
}

// sameDate reports whether two optional dates are the same.
func sameDate(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// recordTenantEvent records a tenant event whose body is the tenant as the
// API shows it, with the service's add-friend link filled in (the tenant
// given is left as it was), so that a webhook's body is the object a GET
// answers.
func (tx *Tx) recordTenantEvent(ctx context.Context, acct *rental.Account, typ string, t *rental.Tenant) error {
	shown := *t
	shown.ShowChatLink(tx.db.friendURL)
	return tx.RecordEvent(ctx, acct, typ, &shown)
}
