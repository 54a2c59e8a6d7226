package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"rentapi/internal/rental"
)

const propertyColumns = `id, name, address, electricity_rate, water_billing, water_rate, water_flat_amount, due_day,
	(SELECT COUNT(*) FROM rooms r WHERE r.property_id = properties.id) AS room_count, created_at, updated_at, reminders, late_fee, proration`

func scanProperty(sc *scanner, p *rental.Property) error {
	*p = rental.Property{Object: "property", Currency: rental.Currency}
	var flat nullInteger
	var created, updated integer
	var reminders, lateFee sql.NullString
	err := sc.Scan(&p.ID, &p.Name, &p.Address, (*integer)(&p.ElectricityRate), &p.WaterBilling, (*integer)(&p.WaterRate), &flat, (*integer)(&p.DueDay),
		(*integer)(&p.RoomCount), &created, &updated, &reminders, &lateFee, &p.Proration)
	if flat.Valid {
		p.WaterFlatAmount = &flat.Int64
	}
	p.CreatedAt, p.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	if err != nil {
		return err
	}
	if reminders.Valid {
		if p.Reminders, err = decodeReminders(reminders.String); err != nil {
			return err
		}
	}
	p.LateFee, err = decodeLateFee(lateFee)
	return err
}

// encodeReminders is a property's reminders column: the schedule as JSON,
// NULL when reminders are off.
func encodeReminders(r *rental.Reminders) (any, error) {
	if r == nil {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("store: reminders: %w", err)
	}
	return string(b), nil
}

// decodeReminders reads a reminders column that is not NULL.
func decodeReminders(s string) (*rental.Reminders, error) {
	r := &rental.Reminders{BeforeDueDays: []int64{}, AfterDueDays: []int64{}}
	if err := json.Unmarshal([]byte(s), r); err != nil {
		return nil, fmt.Errorf("store: reminders: %w", err)
	}
	return r, nil
}

// GetProperty returns a property of the account's landlord.
func (q *Queries) GetProperty(ctx context.Context, acct *rental.Account, id string) (*rental.Property, error) {
	return one(ctx, q, "property", id, `SELECT `+propertyColumns+` FROM properties WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, scanProperty)
}

// ListProperties returns a page of the account's properties.
func (q *Queries) ListProperties(ctx context.Context, acct *rental.Account, p Page) ([]rental.Property, bool, error) {
	return list(ctx, q, `SELECT `+propertyColumns+` FROM properties WHERE landlord_id = $1`, []any{acct.LandlordID}, p,
		scanProperty)
}

// CreateProperty stores a new property within the account's plan limit and
// records property.created.
func (tx *Tx) CreateProperty(ctx context.Context, acct *rental.Account, p rental.Property) (*rental.Property, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	tx.readEndpointsAhead(acct)
	usage, err := tx.Usage(ctx, acct)
	if err != nil {
		return nil, err
	}
	if err := acct.CheckAddProperty(usage); err != nil {
		return nil, err
	}
	p.ID = rental.NewID(rental.PrefixProperty)
	p.CreatedAt, p.UpdatedAt = rental.Time{Time: tx.Now}, rental.Time{Time: tx.Now}
	reminders, err := encodeReminders(p.Reminders)
	if err != nil {
		return nil, err
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO properties (id, landlord_id, name, address, electricity_rate, water_billing, water_rate,
			water_flat_amount, due_day, created_at, updated_at, reminders, late_fee, proration)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13)`,
		p.ID, acct.LandlordID, p.Name, p.Address, p.ElectricityRate, p.WaterBilling, p.WaterRate, p.WaterFlatAmount, p.DueDay, ms(tx.Now), reminders,
		encodeLateFee(p.LateFee), p.Proration)
	if err != nil {
		return nil, fmt.Errorf("store: create property: %w", err)
	}
	return &p, tx.RecordEvent(ctx, acct, "property.created", p)
}

// UpdateProperty applies a change to a property and records
// property.updated when anything changed.
func (tx *Tx) UpdateProperty(ctx context.Context, acct *rental.Account, id string, c rental.PropertyChange) (*rental.Property, error) {
	if err := tx.lock(ctx, "properties", "property", acct.LandlordID, id); err != nil {
		return nil, err
	}
	p, err := tx.GetProperty(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	before := *p
	if err := p.Apply(c); err != nil {
		return nil, err
	}
	if sameProperty(before, *p) {
		return p, nil
	}
	p.UpdatedAt = rental.Time{Time: tx.Now}
	reminders, err := encodeReminders(p.Reminders)
	if err != nil {
		return nil, err
	}
	tx.changedRooms()
	_, err = tx.c.ExecContext(ctx, `UPDATE properties SET name = $3, address = $4, electricity_rate = $5, water_billing = $6,
			water_rate = $7, water_flat_amount = $8, due_day = $9, updated_at = $10, reminders = $11, late_fee = $12, proration = $13
		WHERE landlord_id = $1 AND id = $2`,
		acct.LandlordID, id, p.Name, p.Address, p.ElectricityRate, p.WaterBilling, p.WaterRate, p.WaterFlatAmount, p.DueDay, ms(tx.Now), reminders,
		encodeLateFee(p.LateFee), p.Proration)
	if err != nil {
		return nil, fmt.Errorf("store: update property: %w", err)
	}
	return p, tx.RecordEvent(ctx, acct, "property.updated", p)
}

func sameProperty(a, b rental.Property) bool {
	flat := func(p rental.Property) int64 {
		if p.WaterFlatAmount == nil {
			return -1
		}
		return *p.WaterFlatAmount
	}
	return a.Name == b.Name && a.Address == b.Address && a.ElectricityRate == b.ElectricityRate &&
		a.WaterBilling == b.WaterBilling && a.WaterRate == b.WaterRate && flat(a) == flat(b) && a.DueDay == b.DueDay &&
		sameReminders(a.Reminders, b.Reminders) && rental.SameLateFee(a.LateFee, b.LateFee) &&
		a.Proration == b.Proration
}

func sameReminders(a, b *rental.Reminders) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.BeforeDueDays, b.BeforeDueDays) && slices.Equal(a.AfterDueDays, b.AfterDueDays)
}

// DeleteProperty removes an empty property and records property.deleted
// with its last state; a property with rooms is 409 property_not_empty.
func (tx *Tx) DeleteProperty(ctx context.Context, acct *rental.Account, id string) error {
	if err := tx.lock(ctx, "properties", "property", acct.LandlordID, id); err != nil {
		return err
	}
	p, err := tx.GetProperty(ctx, acct, id)
	if err != nil {
		return err
	}
	if err := p.Delete(); err != nil {
		return err
	}
	tx.changedRooms()
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM properties WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, id); err != nil {
		return fmt.Errorf("store: delete property: %w", err)
	}
	return tx.RecordEvent(ctx, acct, "property.deleted", p)
}
