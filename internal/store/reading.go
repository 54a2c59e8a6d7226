package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

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

// readingColumns are a reading's, with its bill: the first made from it,
// which carries its usage (a newcomer's bill of the same month has none,
// see rental.NewBill).
const readingColumns = readingValues + `
	(SELECT b.id FROM bills b WHERE b.reading_id = meter_readings.id ORDER BY b.created_at, b.id LIMIT 1) AS bill_id, created_at, updated_at`

// sourceReadingColumns are a reading's as a bill is made from it: the
// bills of its month are read on their own (billSources), so its bill_id
// is left null rather than looked up once more for every reading.
const sourceReadingColumns = readingValues + ` NULL AS bill_id, created_at, updated_at`

const readingValues = `id, room_id, property_id, month, e_previous, e_current, e_rollover, e_rate,
	w_previous, w_current, w_rollover, w_rate, w_billing, w_flat_amount, flags,`

func scanReading(sc *scanner, r *rental.Reading) error {
	*r = rental.Reading{Object: "meter_reading", Currency: rental.Currency}
	var flat nullInteger
	var bill sql.NullString
	var flags string
	var created, updated integer
	e, w := &r.Electricity, &r.Water
	err := sc.Scan(&r.ID, &r.RoomID, &r.PropertyID, &r.Month, (*integer)(&e.Previous), (*integer)(&e.Current), &e.Rollover, (*integer)(&e.Rate),
		(*integer)(&w.Previous), (*integer)(&w.Current), &w.Rollover, (*integer)(&w.Rate), &w.Billing, &flat, &flags, &bill, &created, &updated)
	if err != nil {
		return err
	}
	e.Usage, w.Usage = rental.Usage(e.Previous, e.Current, e.Rollover), rental.Usage(w.Previous, w.Current, w.Rollover)
	if err := json.Unmarshal([]byte(flags), &r.Flags); err != nil {
		return fmt.Errorf("store: reading flags: %w", err)
	}
	if flat.Valid {
		w.FlatAmount = &flat.Int64
	}
	if bill.Valid {
		r.BillID = &bill.String
	}
	r.CreatedAt, r.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return nil
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

// ReadingFilter narrows a reading list; Flagged, when set, keeps the
// readings with flags (true) or those without (false).
type ReadingFilter struct {
	PropertyID, RoomID string
	MonthFilter
	Flagged *bool
}

// ListReadings returns a page of the account's readings.
func (q *Queries) ListReadings(ctx context.Context, acct *rental.Account, f ReadingFilter, p Page) ([]rental.Reading, bool, error) {
	w := scoped(`SELECT `+readingColumns+` FROM meter_readings WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID).months(f.MonthFilter)
	if f.Flagged != nil {
		w.and("(flags <> '[]') = ?", *f.Flagged)
	}
	return list(ctx, q, w.sql, w.args, p, scanReading)
}

// ReadingInput is a reading body.
type ReadingInput struct {
	RoomID      string
	Month       string
	Electricity rental.PartInput
	Water       rental.PartInput
}

// ReadingResult is one item of a batch of readings: the reading recorded,
// or the refusal the item met (a *rental.Error), as the item alone would
// have met it.
type ReadingResult struct {
	Reading *rental.Reading
	Err     error
}

// CreateReading records a room's meters for a month: CreateReadings with
// the one item, whose refusal is the error.
func (tx *Tx) CreateReading(ctx context.Context, acct *rental.Account, in ReadingInput) (*rental.Reading, error) {
	out, err := tx.CreateReadings(ctx, acct, []ReadingInput{in})
	if err != nil {
		return nil, err
	}
	return out[0].Reading, out[0].Err
}

// CreateReadings records readings, each as if posted alone in the order
// given (see rental.NewReading): an item for a room not of the account is
// 404, one for a month the room has read, or an earlier item recorded, 409
// resource_exists naming that reading, and an item's meters start from an
// earlier item of its room when that is the latest reading before its
// month. A refused item is its own result and stops none of the others;
// an error of the store's is the batch's.
//
// The rooms, their properties' rates and their readings are read in one
// round trip, set-based whatever the count, under the landlord's claim,
// which leaves no other writer a reading to make meanwhile: whether a
// month is read is decided from them, never from a unique violation
// (which on PostgreSQL would abort the whole transaction). The readings
// are inserted many rows a statement, sent with COMMIT on PostgreSQL, and
// meter.reading.created is recorded for each.
func (tx *Tx) CreateReadings(ctx context.Context, acct *rental.Account, in []ReadingInput) ([]ReadingResult, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if len(in) > 1 {
		tx.PlanForValues() // the rooms and readings of a batch, by long lists of IDs
	}
	from := ""
	need := make(map[string]string, len(in)) // each room's earliest FlagsFrom
	for _, item := range in {
		f := rental.FlagsFrom(item.Month)
		if from == "" || f < from {
			from = f
		}
		if n, ok := need[item.RoomID]; !ok || f < n {
			need[item.RoomID] = f
		}
	}
	// The rooms the landlord's last write of readings here kept, if they
	// are still what this transaction reads (see keptRooms); the rest are
	// read.
	var rooms map[string]*readingRoom
	var kept *keptLandlord
	fresh := !tx.roomsChanged && !tx.Pipelined() && tx.version != 0 && tx.claimed == acct.LandlordID
	if fresh {
		rooms, kept = tx.db.kept.take(tx, acct.LandlordID, tx.version, need)
	}
	tx.roomsTaken = len(rooms)
	tx.changedRooms()
	missing := make([]string, 0, len(need))
	for id := range need {
		if rooms[id] == nil {
			missing = append(missing, id)
		}
	}
	read, err := tx.readingRooms(ctx, acct, missing, from)
	if err != nil {
		return nil, err
	}
	if fresh { // to be kept
		for _, r := range read {
			r.own()
		}
	}
	if rooms == nil {
		rooms = read
	} else {
		maps.Copy(rooms, read)
	}
	if fresh {
		tx.keepRooms = &keptReadings{landlordID: acct.LandlordID, version: tx.version, from: kept, rooms: rooms}
		tx.OnKept(func(w database.Work) {
			if tx.keepRooms != nil {
				tx.db.kept.keep(tx.keepRooms, w)
			}
		})
	}
	out := make([]ReadingResult, len(in))
	var rows [][]any
	var taken error
	for i, item := range in {
		room := rooms[item.RoomID]
		if room == nil {
			out[i].Err = rental.NotFound("room", item.RoomID)
			continue
		}
		r, err := rental.NewReading(rental.ReadingSource{Room: room.room, Property: room.prop, Readings: room.readings,
			Month: item.Month, Electricity: item.Electricity, Water: item.Water}, tx.Now)
		if err != nil {
			out[i].Err = err
			continue
		}
		room.readings = append(room.readings, r) // the room's later items see it, as posts after this one would
		e, w := r.Electricity, r.Water
		rows = append(rows, []any{r.ID, acct.LandlordID, r.PropertyID, r.RoomID, r.Month, e.Previous, e.Current, e.Rollover, e.Rate,
			w.Previous, w.Current, w.Rollover, w.Rate, w.Billing, w.FlatAmount, flagsColumn(r.Flags), ms(tx.Now), ms(tx.Now)})
		taken = rental.ReadingExists(room.room.Number, r.Month, "")
		out[i].Reading = &r
		if err := tx.RecordEvent(ctx, acct, "meter.reading.created", r); err != nil {
			return nil, err
		}
	}
	for _, s := range tx.InsertRows(`INSERT INTO meter_readings (id, landlord_id, property_id, room_id, month, e_previous, e_current, e_rollover, e_rate,
			w_previous, w_current, w_rollover, w_rate, w_billing, w_flat_amount, flags, created_at, updated_at) VALUES `, "store: create readings", rows) {
		// Only a writer ignoring the landlord's lock could have made one
		// of these months meanwhile: the one reading of a single post is
		// then that reading's 409 (and kept by no Idempotency-Key); a
		// batch's, the service's failure.
		if len(rows) == 1 {
			s.Taken = taken
		}
		if err := tx.Later(ctx, s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// flagsColumn is the flags column of a reading: its flags as the API
// shows them.
func flagsColumn(f rental.UsageFlags) string {
	b, _ := json.Marshal(f) // a list of strings always encodes
	return string(b)
}

// readingRoom is a room as its readings are judged (see CreateReadings):
// with its property's rates and its readings: every one of month from or
// later, and the latest before from.
type readingRoom struct {
	room     rental.Room
	prop     rental.Property
	from     string
	readings []rental.Reading
}

// readingRooms reads the account's rooms among ids (distinct), with their
// properties' rates and the rooms' readings of the months from `from` on
// (the later ones, rare, let what a write here keeps of a room answer its
// next month, see keptRooms) and each room's latest before from: one
// statement, one row a room, whatever the count of rooms, each reading
// found through its room's index. A
// room's readings come as one text column (roomReadings), not a row
// each: on SQLite each row and column read is a call into the engine,
// and a single reading's judgement spent more in reading the six months
// its flags look back on than in any other statement of its write. A
// room not of the account is not in the map. The landlord's webhook
// endpoints are read with them (in one round trip on PostgreSQL), for
// the events of the readings the caller records. The rooms are found by
// their IDs: the landlord's condition is written as an expression
// (ownerTerm) so that SQLite does not walk all the landlord's rooms
// instead.
func (tx *Tx) readingRooms(ctx context.Context, acct *rental.Account, ids []string, from string) (map[string]*readingRoom, error) {
	rooms := make(map[string]*readingRoom, len(ids))
	distinct := make([]any, len(ids))
	for i, id := range ids {
		distinct[i] = id
	}
	var reads []database.Stmt
	if len(distinct) > 0 {
		list, args := inList(3, distinct)
		reads = append(reads, database.Stmt{SQL: `SELECT r.id, r.number, r.property_id, r.status, p.electricity_rate, p.water_billing, p.water_rate, p.water_flat_amount,
				(SELECT string_agg(` + roomReadings + `, ' ') FROM meter_readings m WHERE m.room_id = r.id
					AND m.month >= COALESCE((SELECT max(x.month) FROM meter_readings x WHERE x.room_id = r.id AND x.month < $2), $2))
			FROM rooms r JOIN properties p ON p.id = r.property_id
			WHERE r.id IN (` + list + `) AND r.` + ownerTerm,
			Args: append([]any{acct.LandlordID, from}, args...), What: "store: rooms of readings", Rows: func(rows database.Rows) error {
				for rows.Next() {
					rr := &readingRoom{from: from}
					var flat nullInteger
					var readings sql.NullString
					err := rows.Scan(&rr.room.ID, &rr.room.Number, &rr.room.PropertyID, &rr.room.Status,
						(*integer)(&rr.prop.ElectricityRate), &rr.prop.WaterBilling, (*integer)(&rr.prop.WaterRate), &flat, &readings)
					if err != nil {
						return err
					}
					if flat.Valid {
						rr.prop.WaterFlatAmount = &flat.Int64
					}
					if rr.readings, err = parseRoomReadings(readings.String); err != nil {
						return fmt.Errorf("store: readings of room %s: %w", rr.room.ID, err)
					}
					rooms[rr.room.ID] = rr
				}
				return rows.Err()
			}})
	}
	if s, ok := tx.endpointsRead(acct); ok {
		reads = append(reads, s)
	}
	if err := tx.ExecAll(ctx, reads); err != nil {
		return nil, err
	}
	return rooms, nil
}

// roomReadings is a reading as readingRooms reads it, the values
// parseRoomReadings takes apart, separated by spaces (none of them holds
// one): its ID, month, and each meter's previous, current and rollover
// (1 or 0).
const roomReadings = `m.id || ' ' || m.month || ' ' || m.e_previous || ' ' || m.e_current || ' ' || (CASE WHEN m.e_rollover THEN 1 ELSE 0 END)
	|| ' ' || m.w_previous || ' ' || m.w_current || ' ' || (CASE WHEN m.w_rollover THEN 1 ELSE 0 END)`

// parseRoomReadings takes apart a room's readings as readingRooms reads
// them (roomReadings, space separated), with each meter's usage.
func parseRoomReadings(s string) ([]rental.Reading, error) {
	if s == "" {
		return nil, nil
	}
	values := strings.Count(s, " ") + 1
	if values%8 != 0 {
		return nil, fmt.Errorf("%d values, not readings of 8", values)
	}
	// Taken apart in place: the IDs and months are parts of s.
	next := func() string {
		v, rest, _ := strings.Cut(s, " ")
		s = rest
		return v
	}
	var err error
	number := func() rental.Quantity {
		n, e := strconv.ParseInt(next(), 10, 64)
		if err == nil {
			err = e
		}
		return rental.Quantity(n)
	}
	// Room for the reading a post then makes (CreateReadings appends it):
	// growing the slice would copy every reading into one twice as long.
	out := make([]rental.Reading, values/8, values/8+1)
	for i := range out {
		r := &out[i]
		e, w := &r.Electricity, &r.Water
		r.ID, r.Month = next(), next()
		e.Previous, e.Current, e.Rollover = number(), number(), next() == "1"
		w.Previous, w.Current, w.Rollover = number(), number(), next() == "1"
		e.Usage, w.Usage = rental.Usage(e.Previous, e.Current, e.Rollover), rental.Usage(w.Previous, w.Current, w.Rollover)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CorrectReading changes a month's meter values. The month's bill, unless
// paid (409 bill_already_paid), is recalculated in the same transaction
// with its status unchanged. Records meter.reading.updated (and
// bill.updated).
func (tx *Tx) CorrectReading(ctx context.Context, acct *rental.Account, id string, electricity, water rental.PartInput) (*rental.Reading, error) {
	if err := tx.lock(ctx, "meter_readings", "meter reading", acct.LandlordID, id); err != nil {
		return nil, err
	}
	tx.changedRooms()
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
	// Flagged anew, as when recorded: against the room's readings before
	// the month, and whether a tenant lives there now.
	rooms, err := tx.readingRooms(ctx, acct, []string{r.RoomID}, rental.FlagsFrom(r.Month))
	if err != nil {
		return nil, err
	}
	if room := rooms[r.RoomID]; room != nil {
		r.Flags = rental.Flag(*r, room.readings, room.room.Status == rental.RoomOccupied)
	}
	e, w := r.Electricity, r.Water
	_, err = tx.c.ExecContext(ctx, `UPDATE meter_readings SET e_previous = $3, e_current = $4, e_rollover = $5,
			w_previous = $6, w_current = $7, w_rollover = $8, flags = $9, updated_at = $10
		WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, id, e.Previous, e.Current, e.Rollover, w.Previous, w.Current, w.Rollover, flagsColumn(r.Flags), ms(tx.Now))
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
