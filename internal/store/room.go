package store

import (
	"context"
	"database/sql"
	"fmt"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

const roomColumns = `id, property_id, number, floor, monthly_rent, status,
	(SELECT t.id FROM tenants t WHERE t.room_id = rooms.id AND t.moved_out_at IS NULL) AS tenant_id, created_at, updated_at`

func scanRoom(sc *scanner, r *rental.Room) error {
	*r = rental.Room{Object: "room", Currency: rental.Currency}
	var floor nullInteger
	var tenant sql.NullString
	var created, updated integer
	err := sc.Scan(&r.ID, &r.PropertyID, &r.Number, &floor, (*integer)(&r.MonthlyRent), &r.Status, &tenant, &created, &updated)
	if floor.Valid {
		r.Floor = &floor.Int64
	}
	if tenant.Valid {
		r.TenantID = &tenant.String
	}
	r.CreatedAt, r.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return err
}

// GetRoom returns a room of the account's landlord.
func (q *Queries) GetRoom(ctx context.Context, acct *rental.Account, id string) (*rental.Room, error) {
	return one(ctx, q, "room", id, `SELECT `+roomColumns+` FROM rooms WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, scanRoom)
}

// RoomFilter narrows a room list.
type RoomFilter struct {
	PropertyID string
	Status     string
}

// ListRooms returns a page of the account's rooms.
func (q *Queries) ListRooms(ctx context.Context, acct *rental.Account, f RoomFilter, p Page) ([]rental.Room, bool, error) {
	w := scoped(`SELECT `+roomColumns+` FROM rooms WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("status = ?", f.Status)
	return list(ctx, q, w.sql, w.args, p, scanRoom)
}

// CreateRoom adds a room to a property with its electricity and water
// meters, within the plan's room limit, and records room.created. A number
// already used in the property is 409 room_number_taken.
func (tx *Tx) CreateRoom(ctx context.Context, acct *rental.Account, r rental.Room) (*rental.Room, error) {
	tx.readEndpointsAhead(acct)
	if err := tx.lock(ctx, "properties", "property", acct.LandlordID, r.PropertyID); err != nil {
		return nil, err // locked so that the property cannot be deleted under the new room
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	usage, err := tx.Usage(ctx, acct)
	if err != nil {
		return nil, err
	}
	if err := acct.CheckAddRoom(usage); err != nil {
		return nil, err
	}
	var taken int
	if err := tx.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM rooms WHERE property_id = $1 AND number = $2`, r.PropertyID, r.Number).Scan(&taken); err != nil {
		return nil, fmt.Errorf("store: create room: %w", err)
	}
	if taken > 0 {
		return nil, rental.RoomNumberTaken(r.Number)
	}
	r.ID = rental.NewID(rental.PrefixRoom)
	r.CreatedAt, r.UpdatedAt = rental.Time{Time: tx.Now}, rental.Time{Time: tx.Now}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO rooms (id, landlord_id, property_id, number, floor, monthly_rent, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, r.ID, acct.LandlordID, r.PropertyID, r.Number, r.Floor, r.MonthlyRent, r.Status, ms(tx.Now))
	if database.IsUniqueViolation(err) {
		return nil, rental.RoomNumberTaken(r.Number)
	}
	if err != nil {
		return nil, fmt.Errorf("store: create room: %w", err)
	}
	for _, kind := range []string{rental.MeterElectricity, rental.MeterWater} {
		_, err := tx.c.ExecContext(ctx, `INSERT INTO meters (id, landlord_id, property_id, room_id, kind, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6)`, rental.NewID(rental.PrefixMeter), acct.LandlordID, r.PropertyID, r.ID, kind, ms(tx.Now))
		if err != nil {
			return nil, fmt.Errorf("store: create meter: %w", err)
		}
	}
	return &r, tx.RecordEvent(ctx, acct, "room.created", r)
}

// UpdateRoom changes a room's rent, floor or status and records
// room.updated when anything changed.
func (tx *Tx) UpdateRoom(ctx context.Context, acct *rental.Account, id string, c rental.RoomChange) (*rental.Room, error) {
	if err := tx.lock(ctx, "rooms", "room", acct.LandlordID, id); err != nil {
		return nil, err
	}
	r, err := tx.GetRoom(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	before := *r
	if err := r.Apply(c); err != nil {
		return nil, err
	}
	sameFloor := (before.Floor == nil) == (r.Floor == nil) && (r.Floor == nil || *before.Floor == *r.Floor)
	if before.MonthlyRent == r.MonthlyRent && before.Status == r.Status && sameFloor {
		return r, nil
	}
	return r, tx.saveRoom(ctx, acct, r)
}

// saveRoom writes a room's changeable fields and records room.updated.
func (tx *Tx) saveRoom(ctx context.Context, acct *rental.Account, r *rental.Room) error {
	r.UpdatedAt = rental.Time{Time: tx.Now}
	tx.changedRooms()
	_, err := tx.c.ExecContext(ctx, `UPDATE rooms SET floor = $3, monthly_rent = $4, status = $5, updated_at = $6 WHERE landlord_id = $1 AND id = $2`,
		acct.LandlordID, r.ID, r.Floor, r.MonthlyRent, r.Status, ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: update room: %w", err)
	}
	return tx.RecordEvent(ctx, acct, "room.updated", r)
}

// DeleteRoom removes a room with its meters, readings and draft bills. A
// room with a tenant is 409 room_occupied; with bills past draft, 409
// room_has_bills (they are the landlord's records).
func (tx *Tx) DeleteRoom(ctx context.Context, acct *rental.Account, id string) error {
	if err := tx.lock(ctx, "rooms", "room", acct.LandlordID, id); err != nil {
		return err
	}
	r, err := tx.GetRoom(ctx, acct, id)
	if err != nil {
		return err
	}
	var kept int
	if err := tx.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM bills WHERE room_id = $1 AND status <> $2`, id, rental.BillDraft).Scan(&kept); err != nil {
		return fmt.Errorf("store: delete room: %w", err)
	}
	if err := r.Delete(kept); err != nil {
		return err
	}
	drafts, _, err := tx.ListBills(ctx, acct, BillFilter{RoomID: id}, Page{Limit: 1000, Asc: true})
	if err != nil {
		return err
	}
	for _, b := range drafts {
		if err := tx.RecordEvent(ctx, acct, "bill.deleted", b); err != nil {
			return err
		}
	}
	tx.changedRooms()
	for _, stmt := range []string{
		`DELETE FROM bills WHERE landlord_id = $1 AND room_id = $2`,
		`DELETE FROM charges WHERE landlord_id = $1 AND room_id = $2`,
		`DELETE FROM meter_readings WHERE landlord_id = $1 AND room_id = $2`,
		`DELETE FROM meters WHERE landlord_id = $1 AND room_id = $2`,
		`DELETE FROM rooms WHERE landlord_id = $1 AND id = $2`,
	} {
		if _, err := tx.c.ExecContext(ctx, stmt, acct.LandlordID, id); err != nil {
			return fmt.Errorf("store: delete room: %w", err)
		}
	}
	return tx.RecordEvent(ctx, acct, "room.deleted", r)
}
