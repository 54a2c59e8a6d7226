package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

// billsPerTx is how many bills (with their rooms and readings) one seeding
// transaction writes: with their readings and events about 4,000 rows,
// small enough that a server sharing a SQLite file waits well under its
// busy timeout for the write lock.
const billsPerTx = 1000

// rowsPerInsert is how many rows one INSERT statement writes. On
// PostgreSQL every statement is a round trip, so many rows go in each (200
// bills are 4,400 parameters, far under the limit of 65,535). The SQLite
// driver has no round trips but binds parameters in a time that grows
// faster than their number (a row at a time was the fastest measured, see
// bench/README.md), so there one prepared single-row INSERT runs again and
// again.
func rowsPerInsert(e store.Engine) int {
	if e == store.Postgres {
		return 200
	}
	return 1
}

// seed makes landlords on the pro plan, linked to the demo application,
// each with bills/months rooms over 20 properties, each room with months
// months of readings and issued bills, and prints a live key bound to each
// landlord, one a line. Many months make long bill lists to page through;
// many rooms of one month make room for many new readings (bench/compare.sh
// writes 200 rooms of one month for each landlord its writes go to).
//
// The landlord, its link, its key and its properties are made by the
// store's own methods. The rooms, meters, readings, bills and their events
// are written straight into the tables, many rooms to a transaction and
// (on PostgreSQL) many rows to a statement: through the store, several
// queries a row, one of them then scanning all the bills (a reading's
// bill_id was looked up by reading_id before migration 00006 indexed it),
// 100,000 bills took tens of minutes. The rows are the ones the store would
// write had each room, reading and bill been its own API request (see
// seeder).
//
// The months start with the current month in Thailand, so no bill is past
// its due date: the server's minutely overdue sweep has nothing to do, and
// cannot mark all the bills overdue in one transaction during the seeding
// or the measurement.
func seed(dsn, secretFile string, bills, months, landlords int) error {
	if months < 1 || bills < months || landlords < 1 {
		return fmt.Errorf("seed: -bills %d -months %d -landlords %d: want at least a month, a room and a landlord", bills, months, landlords)
	}
	ctx := context.Background()
	sec, _, err := secret.Load(secretFile)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	appID, err := db.Read().DemoApplication(ctx)
	if err != nil {
		return fmt.Errorf("run `rentapi serve` once on the database first: %w", err)
	}
	var keys []string
	for range landlords {
		key, err := seedLandlord(ctx, db, sec, appID, bills/months, months)
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	if err := analyze(ctx, db); err != nil {
		return err
	}
	fmt.Println(strings.Join(keys, "\n"))
	return nil
}

// seedLandlord makes one landlord of seed with its rooms and months, and
// returns its live key.
func seedLandlord(ctx context.Context, db *store.DB, sec *secret.Secret, appID string, rooms, months int) (string, error) {
	var acct *rental.Account
	err := db.InTx(ctx, func(tx *store.Tx) error {
		ll, err := tx.CreateLandlord(ctx, "Bench landlord", rental.LandlordPro)
		if err != nil {
			return err
		}
		acct, err = tx.LinkAccount(ctx, appID, ll, rental.AllScopes)
		return err
	})
	if err != nil {
		return "", err
	}
	key := rental.MintKey(rental.ModeLive, sec.Fingerprint)
	text := key.Text
	err = db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateAPIKey(ctx, store.NewKey{ApplicationID: appID, Name: "bench", Mode: rental.ModeLive, Scopes: rental.AllScopes,
			AccountID: acct.ID}.Minted(key))
		return err
	})
	if err != nil {
		return "", err
	}
	if limit := acct.Capacity().Rooms; rooms > limit {
		return "", fmt.Errorf("%d rooms: %w", rooms, acct.CapacityError("rooms", limit))
	}
	s := &seeder{acct: acct, months: seedMonths(time.Now(), months), perInsert: rowsPerInsert(db.Engine())}
	for i := range 20 {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			p, _ := rental.NewProperty(rental.PropertyChange{Name: rental.Of(fmt.Sprint("Bench ", i)), ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)})
			c, err := tx.CreateProperty(ctx, acct, p)
			if err == nil {
				s.props = append(s.props, c)
			}
			return err
		})
		if err != nil {
			return "", err
		}
	}
	began := time.Now()
	perTx := max(1, billsPerTx/months)
	for first := 0; first < rooms; first += perTx {
		last := min(first+perTx, rooms)
		if err := db.InTx(ctx, func(tx *store.Tx) error { return s.rooms(ctx, tx, first, last) }); err != nil {
			return "", err
		}
		if last%100 == 0 || last == rooms {
			fmt.Fprintf(os.Stderr, "seeded %d rooms (%d bills) in %s\n", last, last*months, time.Since(began).Round(time.Millisecond))
		}
	}
	return text, nil
}

// analyze gives PostgreSQL's planner statistics of the seeded tables, as
// autovacuum would have while the API filled them month by month. Right
// after a bulk load (or on a server with autovacuum off) it has none, and
// plans as if the tables were small: the previous-reading lookup of every
// POST /v1/meter-readings then also reads the landlord's whole
// meter_readings_page index, and the POST runs several times slower.
// SQLite keeps no statistics unless asked (the store never asks), so it has
// nothing to do there.
func analyze(ctx context.Context, db *store.DB) error {
	if db.Engine() != store.Postgres {
		return nil
	}
	if _, err := db.WritePool().ExecContext(ctx, `ANALYZE rooms, meters, meter_readings, bills, events`); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// seedMonths returns the months to seed, oldest first: n months from the
// current month in Thailand at now.
func seedMonths(now time.Time, n int) []string {
	t := now.In(rental.Bangkok)
	first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	months := make([]string, n)
	for m := range months {
		months[m] = first.AddDate(0, m, 0).Format("2006-01")
	}
	return months
}

// seeder writes rooms with their months of readings and bills as if each
// room, each reading and each bill had been one API request: POST
// /v1/rooms, then for every month POST /v1/meter-readings and POST
// /v1/bills (issued at once). Every such request is a transaction that
// claims the next tick of the landlord's clock (store.Tx.Claim) and stamps
// its rows and its one event with it, so here each gets the next tick too:
// one after the last, or the wall clock if that is later, exactly as Claim
// ticks. Creation times are therefore unique per object, increase in the
// order the objects were made, and stay ahead of every earlier write, and
// the bill list pages by (created_at, id) just as it would over data made
// through the API.
//
// Rows are built with the rental package's own rules (Measure, Price,
// DueDate) and hold the columns the store's CreateRoom, CreateReading and
// CreateBill insert, with the same values; each event carries the object
// as the store would have serialised it. No webhook deliveries are made:
// rooms refuses to run if an endpoint would have wanted the events.
type seeder struct {
	acct   *rental.Account
	props  []*rental.Property
	months []string
	// perInsert is how many rows one INSERT writes (rowsPerInsert).
	perInsert int
	// tick is the last tick of the landlord's clock handed out.
	tick int64
}

// next returns the next tick of the landlord's clock, as Claim would.
func (s *seeder) next() int64 {
	s.tick = max(s.tick+1, time.Now().UnixMilli())
	return s.tick
}

// rooms writes rooms first..last-1 (named R<n>, spread round-robin over the
// properties), with all their months, in the transaction tx.
func (s *seeder) rooms(ctx context.Context, tx *store.Tx, first, last int) error {
	// Claim takes the landlord's row lock for the whole batch and its first
	// tick; the batch then hands out ticks itself and, like Commit, moves
	// the clock to the last one.
	if err := tx.Claim(ctx, s.acct); err != nil {
		return err
	}
	if err := s.checkNoEndpoints(ctx, tx); err != nil {
		return err
	}
	s.tick = tx.Now.UnixMilli() - 1
	w := newWrites()
	for n := first; n < last; n++ {
		if err := s.room(w, n); err != nil {
			return err
		}
	}
	for _, t := range w.tables() {
		if err := t.insert(ctx, tx, s.perInsert); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `UPDATE landlords SET clock = $2 WHERE id = $1 AND clock < $2`, s.acct.LandlordID, s.tick)
	if err != nil {
		return fmt.Errorf("advance the landlord's clock: %w", err)
	}
	return nil
}

// checkNoEndpoints fails if an enabled webhook endpoint of an application
// linked to the landlord exists in the account's mode: the store would
// queue deliveries to it with every event, and the seeder makes none. (A
// new bench database has no endpoints.)
func (s *seeder) checkNoEndpoints(ctx context.Context, tx *store.Tx) error {
	var n int
	err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM webhook_endpoints e JOIN accounts a ON a.application_id = e.application_id
		WHERE a.landlord_id = $1 AND a.revoked_at IS NULL AND e.mode = $2 AND e.status = $3`,
		s.acct.LandlordID, string(s.acct.Mode()), rental.EndpointEnabled).Scan(&n)
	if err != nil {
		return fmt.Errorf("webhook endpoints: %w", err)
	}
	if n > 0 {
		return fmt.Errorf("the bench landlord's applications have %d webhook endpoints: seeding writes no deliveries; use a new database", n)
	}
	return nil
}

// room adds room n, its two meters and its months to w.
func (s *seeder) room(w *writes, n int) error {
	prop := s.props[n%len(s.props)]
	room, err := rental.NewRoom(prop.ID, rental.RoomChange{Number: rental.Of(fmt.Sprint("R", n)), MonthlyRent: rental.Of[int64](350_000)})
	if err != nil {
		return err
	}
	at := s.next()
	room.ID = rental.NewID(rental.PrefixRoom)
	room.CreatedAt, room.UpdatedAt = rental.UnixMilli(at), rental.UnixMilli(at)
	w.rooms.add(room.ID, s.acct.LandlordID, room.PropertyID, room.Number, room.Floor, room.MonthlyRent, room.Status, at, at)
	for _, kind := range []string{rental.MeterElectricity, rental.MeterWater} {
		w.meters.add(rental.NewID(rental.PrefixMeter), s.acct.LandlordID, room.PropertyID, room.ID, kind, at, at)
	}
	if err := s.event(w, "room.created", room, at); err != nil {
		return err
	}
	// Previous values default to the room's last reading, as in CreateReading.
	var ePrev, wPrev rental.Quantity
	for m, month := range s.months {
		r, err := s.reading(w, prop, &room, month, ePrev, rental.Quantity((m+1)*120_500), wPrev, rental.Quantity((m+1)*5_000))
		if err != nil {
			return err
		}
		if err := s.bill(w, prop, &room, r); err != nil {
			return err
		}
		ePrev, wPrev = r.Electricity.Current, r.Water.Current
	}
	return nil
}

// reading adds a room's reading of a month to w, as CreateReading makes it
// from a body with the current values only, at the property's rates.
func (s *seeder) reading(w *writes, prop *rental.Property, room *rental.Room, month string, ePrev, eCur, wPrev, wCur rental.Quantity) (*rental.Reading, error) {
	at := s.next()
	r := rental.Reading{ID: rental.NewID(rental.PrefixReading), Object: "meter_reading", RoomID: room.ID, PropertyID: room.PropertyID,
		Month: month, Currency: rental.Currency, CreatedAt: rental.UnixMilli(at), UpdatedAt: rental.UnixMilli(at)}
	var err error
	if r.Electricity, err = rental.Measure("electricity", rental.PartInput{Set: true, Current: rental.Of(eCur)}, ePrev, prop.ElectricityRate); err != nil {
		return nil, err
	}
	if r.Water.ReadingPart, err = rental.Measure("water", rental.PartInput{Set: true, Current: rental.Of(wCur)}, wPrev, prop.WaterRate); err != nil {
		return nil, err
	}
	r.Water.Billing, r.Water.FlatAmount = prop.WaterBilling, prop.WaterFlatAmount
	e, wa := r.Electricity, r.Water
	w.readings.add(r.ID, s.acct.LandlordID, r.PropertyID, r.RoomID, r.Month, e.Previous, e.Current, e.Rollover, e.Rate,
		wa.Previous, wa.Current, wa.Rollover, wa.Rate, wa.Billing, wa.FlatAmount, at, at)
	return &r, s.event(w, "meter.reading.created", r, at)
}

// bill adds the issued bill of a reading to w, as CreateBill makes it for a
// room without a tenant.
func (s *seeder) bill(w *writes, prop *rental.Property, room *rental.Room, r *rental.Reading) error {
	at := s.next()
	now := rental.UnixMilli(at)
	b := rental.Bill{ID: rental.NewID(rental.PrefixBill), Object: "bill", RoomID: room.ID, PropertyID: room.PropertyID, Month: r.Month,
		Status: rental.BillIssued, IssuedAt: &now, Currency: rental.Currency, Rent: room.MonthlyRent, ReadingID: r.ID,
		DueDate: rental.DueDate(r.Month, prop.DueDay), CreatedAt: now, UpdatedAt: now}
	b.Water.Occupants = 1
	b.Price(*r)
	e, wa := b.Electricity, b.Water
	w.bills.add(b.ID, s.acct.LandlordID, b.PropertyID, b.RoomID, b.TenantID, b.ReadingID, b.Month, b.Status, b.Rent,
		e.Usage, e.Rate, e.Amount, wa.Usage, wa.Rate, wa.Amount, wa.Billing, wa.Occupants, b.Total, b.DueDate, at, at, at)
	return s.event(w, "bill.created", b, at)
}

// event adds the event of a change made at tick at to w, with the object
// serialised as RecordEvent serialises it.
func (s *seeder) event(w *writes, typ string, obj any, at int64) error {
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("event %s: %w", typ, err)
	}
	w.events.add(rental.NewID(rental.PrefixEvent), s.acct.LandlordID, string(s.acct.Mode()), typ, string(data), at, nil)
	return nil
}

// writes are one transaction's new rows, table by table.
type writes struct {
	rooms, meters, readings, bills, events *table
}

// newWrites returns empty tables with the columns the store's inserts
// name, in the same order.
func newWrites() *writes {
	return &writes{
		rooms:  &table{name: "rooms", cols: []string{"id", "landlord_id", "property_id", "number", "floor", "monthly_rent", "status", "created_at", "updated_at"}},
		meters: &table{name: "meters", cols: []string{"id", "landlord_id", "property_id", "room_id", "kind", "created_at", "updated_at"}},
		readings: &table{name: "meter_readings", cols: []string{"id", "landlord_id", "property_id", "room_id", "month",
			"e_previous", "e_current", "e_rollover", "e_rate", "w_previous", "w_current", "w_rollover", "w_rate", "w_billing", "w_flat_amount", "created_at", "updated_at"}},
		bills: &table{name: "bills", cols: []string{"id", "landlord_id", "property_id", "room_id", "tenant_id", "reading_id", "month", "status", "rent",
			"e_usage", "e_rate", "e_amount", "w_usage", "w_rate", "w_amount", "w_billing", "occupants", "total", "due_date", "issued_at", "created_at", "updated_at"}},
		events: &table{name: "events", cols: []string{"id", "landlord_id", "mode", "type", "data", "created_at", "application_id"}},
	}
}

// tables lists the tables in the order they are written.
func (w *writes) tables() []*table {
	return []*table{w.rooms, w.meters, w.readings, w.bills, w.events}
}

// table is the new rows of one table: each row holds a value per column.
type table struct {
	name string
	cols []string
	rows [][]any
}

// add appends a row; it must hold one value per column.
func (t *table) add(vals ...any) {
	if len(vals) != len(t.cols) {
		panic(fmt.Sprintf("%s: %d values for %d columns", t.name, len(vals), len(t.cols)))
	}
	t.rows = append(t.rows, vals)
}

// insert writes the rows with INSERTs of perStmt rows each (the last may
// have fewer), prepared once for all the full ones, with $N placeholders,
// which both engines take.
func (t *table) insert(ctx context.Context, tx *store.Tx, perStmt int) error {
	for start := 0; start < len(t.rows); start += perStmt {
		chunk := t.rows[start:min(start+perStmt, len(t.rows))]
		args := make([]any, 0, len(chunk)*len(t.cols))
		for _, row := range chunk {
			args = append(args, row...)
		}
		if _, err := tx.Exec(ctx, t.statement(len(chunk)), args...); err != nil {
			return fmt.Errorf("insert %d rows into %s: %w", len(chunk), t.name, err)
		}
	}
	return nil
}

// statement is the INSERT of n rows into the table.
func (t *table) statement(n int) string {
	var q strings.Builder
	fmt.Fprintf(&q, "INSERT INTO %s (%s) VALUES ", t.name, strings.Join(t.cols, ", "))
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for j := range t.cols {
			if j > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "$%d", i*len(t.cols)+j+1)
		}
		q.WriteByte(')')
	}
	return q.String()
}
