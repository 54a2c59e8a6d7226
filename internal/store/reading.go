package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

const meterColumns = `id, room_id, property_id, kind,
	(SELECT CASE WHEN meters.kind = 'electricity' THEN r.e_current ELSE r.w_current END FROM meter_readings r
		WHERE r.room_id = meters.room_id ORDER BY r.month DESC LIMIT 1) AS last_value,
	(SELECT MAX(r.month) FROM meter_readings r WHERE r.room_id = meters.room_id) AS last_month, created_at, updated_at`

func scanMeter(sc *scanner, m *rental.Meter) error {
	*m = rental.Meter{Object: "meter"}
	var last sql.NullInt64
	var month sql.NullString
	var created, updated int64
	err := sc.Scan(&m.ID, &m.RoomID, &m.PropertyID, &m.Kind, &last, &month, &created, &updated)
	m.Unit = "kWh"
	if m.Kind == rental.MeterWater {
		m.Unit = "m3"
	}
	if last.Valid {
		v := rental.Quantity(last.Int64)
		m.LastValue = &v
	}
	if month.Valid {
		m.LastMonth = &month.String
	}
	m.CreatedAt, m.UpdatedAt = rental.UnixMilli(created), rental.UnixMilli(updated)
	return err
}

// GetMeter returns a meter of the account's landlord.
func (q *Queries) GetMeter(ctx context.Context, acct *rental.Account, id string) (*rental.Meter, error) {
	return one(ctx, q, "meter", id, `SELECT `+meterColumns+` FROM meters WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, scanMeter)
}

// MeterFilter narrows a meter list.
type MeterFilter struct {
	PropertyID, RoomID, Kind string
}

// ListMeters returns a page of the account's meters.
func (q *Queries) ListMeters(ctx context.Context, acct *rental.Account, f MeterFilter, p Page) ([]rental.Meter, bool, error) {
	w := scoped(`SELECT `+meterColumns+` FROM meters WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID).and("kind = ?", f.Kind)
	return list(ctx, q, w.sql, w.args, p, scanMeter)
}

const readingColumns = `id, room_id, property_id, month, e_previous, e_current, e_rollover, e_rate,
	w_previous, w_current, w_rollover, w_rate, w_billing, w_flat_amount,
	(SELECT b.id FROM bills b WHERE b.reading_id = meter_readings.id) AS bill_id, created_at, updated_at`

func scanReading(sc *scanner, r *rental.Reading) error {
	*r = rental.Reading{Object: "meter_reading", Currency: rental.Currency}
	var flat nullInteger
	var bill sql.NullString
	var created, updated integer
	e, w := &r.Electricity, &r.Water
	err := sc.Scan(&r.ID, &r.RoomID, &r.PropertyID, &r.Month, (*integer)(&e.Previous), (*integer)(&e.Current), &e.Rollover, (*integer)(&e.Rate),
		(*integer)(&w.Previous), (*integer)(&w.Current), &w.Rollover, (*integer)(&w.Rate), &w.Billing, &flat, &bill, &created, &updated)
	e.Usage, w.Usage = rental.Usage(e.Previous, e.Current, e.Rollover), rental.Usage(w.Previous, w.Current, w.Rollover)
	if flat.Valid {
		w.FlatAmount = &flat.Int64
	}
	if bill.Valid {
		r.BillID = &bill.String
	}
	r.CreatedAt, r.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return err
}

// GetReading returns a reading of the account's landlord.
func (q *Queries) GetReading(ctx context.Context, acct *rental.Account, id string) (*rental.Reading, error) {
	return one(ctx, q, "meter reading", id, `SELECT `+readingColumns+` FROM meter_readings WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, scanReading)
}

// roomReading returns the reading of a room and month, or nil.
func (q *Queries) roomReading(ctx context.Context, acct *rental.Account, roomID, month string) (*rental.Reading, error) {
	var r rental.Reading
	err := scanReading(&scanner{src: q.c.QueryRowContext(ctx, `SELECT `+readingColumns+` FROM meter_readings
		WHERE landlord_id = $1 AND room_id = $2 AND month = $3`, acct.LandlordID, roomID, month)}, &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("meter reading", roomID+" "+month)
	}
	if err != nil {
		return nil, fmt.Errorf("store: room reading: %w", err)
	}
	return &r, nil
}

// MonthFilter narrows a list by month: one month, or an inclusive range.
type MonthFilter struct {
	Month, From, To string
}

func (w *where) months(f MonthFilter) *where {
	return w.and("month = ?", f.Month).and("month >= ?", f.From).and("month <= ?", f.To)
}

// ReadingFilter narrows a reading list.
type ReadingFilter struct {
	PropertyID, RoomID string
	MonthFilter
}

// ListReadings returns a page of the account's readings.
func (q *Queries) ListReadings(ctx context.Context, acct *rental.Account, f ReadingFilter, p Page) ([]rental.Reading, bool, error) {
	w := scoped(`SELECT `+readingColumns+` FROM meter_readings WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID).months(f.MonthFilter)
	return list(ctx, q, w.sql, w.args, p, scanReading)
}

// ReadingInput is a reading body.
type ReadingInput struct {
	RoomID      string
	Month       string
	Electricity rental.PartInput
	Water       rental.PartInput
}

// CreateReading records a room's meters for a month (see
// rental.NewReading), from the room, its property's rates and the room's
// latest reading up to the month, read together.
func (tx *Tx) CreateReading(ctx context.Context, acct *rental.Account, in ReadingInput) (*rental.Reading, error) {
	// One look at the room, its property's rates (a reading needs no more
	// of either) and the room's latest reading up to the month: the
	// month's own (it exists already) or the one before (where the meters
	// start from).
	var room rental.Room
	var prop rental.Property
	var flat sql.NullInt64
	var latestID, latestMonth sql.NullString
	var ePrev, wPrev sql.NullInt64
	tx.readEndpointsAhead(acct)
	err := tx.c.QueryRowContext(ctx, `SELECT r.id, r.number, r.property_id, p.electricity_rate, p.water_billing, p.water_rate, p.water_flat_amount,
			m.id, m.month, m.e_current, m.w_current
		FROM rooms r JOIN properties p ON p.id = r.property_id
		LEFT JOIN meter_readings m ON m.id = (SELECT id FROM meter_readings WHERE landlord_id = $1 AND room_id = r.id AND month <= $3 ORDER BY month DESC LIMIT 1)
		WHERE r.landlord_id = $1 AND r.id = $2`, acct.LandlordID, in.RoomID, in.Month).
		Scan(&room.ID, &room.Number, &room.PropertyID, &prop.ElectricityRate, &prop.WaterBilling, &prop.WaterRate, &flat,
			&latestID, &latestMonth, &ePrev, &wPrev)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("room", in.RoomID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: room of reading: %w", err)
	}
	if flat.Valid {
		prop.WaterFlatAmount = &flat.Int64
	}
	src := rental.ReadingSource{Room: room, Property: prop, Month: in.Month, Electricity: in.Electricity, Water: in.Water}
	if latestID.Valid {
		src.Latest = &rental.Reading{ID: latestID.String, Month: latestMonth.String,
			Electricity: rental.ReadingPart{Current: rental.Quantity(ePrev.Int64)},
			Water:       rental.WaterPart{ReadingPart: rental.ReadingPart{Current: rental.Quantity(wPrev.Int64)}}}
	}
	r, err := rental.NewReading(src, tx.Now)
	if err != nil {
		return nil, err
	}
	e, w := r.Electricity, r.Water
	// Sent with COMMIT, the event's endpoints having been read with the
	// room: the landlord's lock, held since the month was looked at above,
	// leaves no other reading of the month to meet but one a writer
	// ignoring the lock made (then the answer is that reading's 409, and
	// kept by no Idempotency-Key).
	err = tx.Later(ctx, database.Stmt{SQL: `INSERT INTO meter_readings (id, landlord_id, property_id, room_id, month,
			e_previous, e_current, e_rollover, e_rate, w_previous, w_current, w_rollover, w_rate, w_billing, w_flat_amount, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)`,
		Args: []any{r.ID, acct.LandlordID, r.PropertyID, r.RoomID, r.Month, e.Previous, e.Current, e.Rollover, e.Rate,
			w.Previous, w.Current, w.Rollover, w.Rate, w.Billing, w.FlatAmount, ms(tx.Now)},
		What:  "store: create reading",
		Taken: rental.ReadingExists(room.Number, in.Month, "")})
	if err != nil {
		return nil, err
	}
	return &r, tx.RecordEvent(ctx, acct, "meter.reading.created", r)
}

// CorrectReading changes a month's meter values. The month's bill, unless
// paid (409 bill_already_paid), is recalculated in the same transaction
// with its status unchanged. Records meter.reading.updated (and
// bill.updated).
func (tx *Tx) CorrectReading(ctx context.Context, acct *rental.Account, id string, electricity, water rental.PartInput) (*rental.Reading, error) {
	if err := tx.lock(ctx, "meter_readings", "meter reading", acct.LandlordID, id); err != nil {
		return nil, err
	}
	r, err := tx.GetReading(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	var bill *rental.Bill
	if r.BillID != nil {
		if err := tx.lock(ctx, "bills", "bill", acct.LandlordID, *r.BillID); err != nil {
			return nil, err
		}
		if bill, err = tx.GetBill(ctx, acct, *r.BillID); err != nil {
			return nil, err
		}
		if err := bill.Correct(); err != nil {
			return nil, err
		}
	}
	if err := r.Correct(electricity, water, tx.Now); err != nil {
		return nil, err
	}
	e, w := r.Electricity, r.Water
	_, err = tx.c.ExecContext(ctx, `UPDATE meter_readings SET e_previous = $3, e_current = $4, e_rollover = $5,
			w_previous = $6, w_current = $7, w_rollover = $8, updated_at = $9
		WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, id, e.Previous, e.Current, e.Rollover, w.Previous, w.Current, w.Rollover, ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: correct reading: %w", err)
	}
	if err := tx.RecordEvent(ctx, acct, "meter.reading.updated", r); err != nil {
		return nil, err
	}
	if bill != nil {
		bill.Reprice(*r, tx.Now)
		if err := tx.saveBill(ctx, acct, bill); err != nil {
			return nil, err
		}
	}
	return r, nil
}
