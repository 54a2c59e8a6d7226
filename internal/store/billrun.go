package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

// A bill run bills a whole property's month in one transaction: the
// property's rooms, the month's readings (with the bills made from them),
// the current tenants and the month's charges are loaded in a query each,
// whatever the number of rooms; each room's bill is rental.NewBill's, as
// POST /v1/bills makes it (CreateBill loads, decides and inserts through
// the same billSources and insertBills); the bills go in many rows a
// statement, and their events with the commit.

// RunBills bills every room of the property that has a reading for month
// and no bill (rental.PlanBillRun), each with its bill.created; with
// notify, each created bill's tenant the chat reaches gets a new_bill
// notice (trigger bill_run), paced within the landlord's sends (see
// queueNotices). A property of another account is 404 naming
// property_id. page makes each payment link's page, as the API makes
// them.
func (tx *Tx) RunBills(ctx context.Context, acct *rental.Account, propertyID, month string, issue, notify bool, page func() rental.PaymentPage) (*rental.BillRun, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	tx.PlanForValues() // a property's rooms, readings and bills at once
	tx.readEndpointsAhead(acct)
	prop, err := tx.GetProperty(ctx, acct, propertyID)
	if err != nil {
		if e, ok := rental.AsError(err); ok && e.Kind == rental.KindNotFound {
			e.Param = "property_id"
		}
		return nil, err
	}
	rooms, err := tx.propertyRooms(ctx, acct, prop.ID)
	if err != nil {
		return nil, err
	}
	srcs, err := tx.billSources(ctx, acct, prop, rooms, month, issue)
	if err != nil {
		return nil, err
	}
	bills, skipped, err := rental.PlanBillRun(srcs, tx.Now)
	if err != nil {
		return nil, err
	}
	if err := tx.insertBills(ctx, acct, bills, ""); err != nil {
		return nil, err
	}
	run := &rental.BillRun{Object: "bill_run", PropertyID: prop.ID, Month: month, Created: make([]string, len(bills)), Skipped: skipped}
	for i, b := range bills {
		run.Created[i] = b.ID
	}
	if !notify || len(bills) == 0 {
		return run, nil
	}
	tenants := map[string]*rental.Tenant{}
	numbers := map[string]string{}
	for _, s := range srcs {
		numbers[s.Room.ID] = s.Room.Number
		if s.Tenant != nil {
			tenants[s.Tenant.ID] = s.Tenant
		}
	}
	var notices []pendingNotice
	for i := range bills {
		b := &bills[i]
		if b.TenantID == nil || rental.CheckReachable(tenants[*b.TenantID]) != nil {
			continue // not reachable: no notice, as the spec says, and no refusal
		}
		notices = append(notices, pendingNotice{bill: b, property: prop.Name, room: numbers[b.RoomID]})
	}
	run.NotificationsQueued, err = tx.queueBillNotices(ctx, acct, rental.NotifyNewBill, rental.TriggerBillRun, "", notices, tx.Now, page)
	return run, err
}

// propertyRooms lists a property's rooms by number: the order of a bill
// run's bills and skips.
func (q *Queries) propertyRooms(ctx context.Context, acct *rental.Account, propertyID string) ([]rental.Room, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT `+roomColumns+` FROM rooms WHERE landlord_id = $1 AND property_id = $2 ORDER BY number, id`,
		acct.LandlordID, propertyID)
	if err != nil {
		return nil, fmt.Errorf("store: property rooms: %w", err)
	}
	return scanAll(rows, "property rooms", func(sc *scanner, r *rental.Room) error { return scanRoom(sc, r) })
}

// billSources loads what the month's bills of rooms (all of prop's, or
// one) are made from: the month's readings, the bills made for the month
// already, the tenants who lived there that month (rental.BilledTenant picks
// each room's) and the charges active in the month, a query
// each, in the rooms' order.
func (q *Queries) billSources(ctx context.Context, acct *rental.Account, prop *rental.Property, rooms []rental.Room, month string, issue bool) ([]rental.BillSource, error) {
	one := ""
	if len(rooms) == 1 {
		one = rooms[0].ID
	}
	// One room is looked up by the room (the indexes that lead with it
	// serve), a property's rooms by the property; the landlord's condition
	// is a check, not a way in (ownerTerm).
	scope := func(base string) *where {
		w := scoped(base+" WHERE "+ownerTerm, acct.LandlordID)
		if one != "" {
			return w.and("room_id = ?", one)
		}
		return w.and("property_id = ?", prop.ID)
	}
	w := scope(`SELECT `+sourceReadingColumns+` FROM meter_readings`).and("month = ?", month)
	rows, err := q.c.QueryContext(ctx, w.sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: readings of the month: %w", err)
	}
	readings, err := scanAll(rows, "readings of the month", scanReading)
	if err != nil {
		return nil, err
	}
	start, _ := time.ParseInLocation("2006-01", month, rental.Bangkok)
	w = scope(`SELECT ` + tenantColumns + ` FROM tenants`)
	w.args = append(w.args, ms(start), ms(start.AddDate(0, 1, 0)))
	w.sql += fmt.Sprintf(` AND (moved_out_at IS NULL OR (moved_out_at >= $%d AND moved_in_at < $%d))`, len(w.args)-1, len(w.args))
	rows, err = q.c.QueryContext(ctx, w.sql+` ORDER BY moved_in_at, id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: tenants of the month: %w", err)
	}
	tenants, err := scanAll(rows, "tenants of the month", q.scanTenant)
	if err != nil {
		return nil, err
	}
	// Every bill of the month is made from the month's reading: found by
	// it (bills_reading), the property's other months unread.
	w = scope(`SELECT id FROM meter_readings`).and("month = ?", month)
	w.sql = `SELECT ` + roomBillColumns + ` FROM bills WHERE reading_id IN (` + w.sql + `)`
	rows, err = q.c.QueryContext(ctx, w.sql, w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: bills of the month: %w", err)
	}
	billed, err := scanAll(rows, "bills of the month", scanRoomBill)
	if err != nil {
		return nil, err
	}
	w = scope(`SELECT `+chargeColumns+` FROM charges`).and(activeIn, month)
	rows, err = q.c.QueryContext(ctx, w.sql+` ORDER BY created_at, id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: charges of the month: %w", err)
	}
	charges, err := scanAll(rows, "charges of the month", scanCharge)
	if err != nil {
		return nil, err
	}
	srcs := make([]rental.BillSource, len(rooms))
	index := map[string]int{}
	for i, r := range rooms {
		srcs[i] = rental.BillSource{Room: r, DueDay: prop.DueDay, Month: month, Issue: issue, LateFee: prop.LateFee, Proration: prop.Proration}
		index[r.ID] = i
	}
	for i := range readings {
		if j, ok := index[readings[i].RoomID]; ok {
			srcs[j].Reading = &readings[i]
		}
	}
	lived := make([][]*rental.Tenant, len(rooms))
	for i := range tenants {
		if j, ok := index[tenants[i].RoomID]; ok {
			lived[j] = append(lived[j], &tenants[i])
		}
	}
	for j := range srcs {
		srcs[j].Tenant = rental.BilledTenant(month, lived[j])
	}
	for _, b := range billed {
		if j, ok := index[b.room]; ok {
			srcs[j].Bills = append(srcs[j].Bills, b.bill)
		}
	}
	for _, c := range charges {
		if j, ok := index[c.RoomID]; ok {
			srcs[j].Charges = append(srcs[j].Charges, c)
		}
	}
	return srcs, nil
}

// roomBill is a bill of a room's month, as the month's other bills see it
// (rental.RoomBill), with its room.
type roomBill struct {
	room string
	bill rental.RoomBill
}

const roomBillColumns = `room_id, id, tenant_id, lines`

func scanRoomBill(sc *scanner, b *roomBill) error {
	var tenant sql.NullString
	var lines string
	if err := sc.Scan(&b.room, &b.bill.ID, &tenant, &lines); err != nil {
		return err
	}
	if tenant.Valid {
		b.bill.TenantID = &tenant.String
	}
	decoded, err := decodeLines(lines)
	if err != nil {
		return err
	}
	for _, l := range decoded {
		if l.ChargeID != "" {
			b.bill.ChargeIDs = append(b.bill.ChargeIDs, l.ChargeID)
		}
	}
	return nil
}

// roomBills are the bills (as a month's other bills see them) where
// cond, a WHERE condition with its args, holds; what names them in errors.
func (q *Queries) roomBills(ctx context.Context, what, cond string, args ...any) ([]rental.RoomBill, error) {
	rows, err := q.c.QueryContext(ctx, `SELECT `+roomBillColumns+` FROM bills WHERE `+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	found, err := scanAll(rows, what, scanRoomBill)
	if err != nil {
		return nil, err
	}
	bills := make([]rental.RoomBill, len(found))
	for i, f := range found {
		bills[i] = f.bill
	}
	return bills, nil
}

// scanAll reads every row with scan, then closes them.
func scanAll[T any](rows interface {
	Next() bool
	Scan(...any) error
	Close() error
	Err() error
}, what string, scan func(*scanner, *T) error) ([]T, error) {
	defer rows.Close()
	var out []T
	sc := &scanner{src: rows}
	for rows.Next() {
		var v T
		if err := scan(sc, &v); err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}

// insertBills inserts new bills, many rows a statement, and records
// bill.created for each. A bill whose room and month are billed already
// to its tenant (another writer's, between the load and here) is 409 resource_exists
// for room (the room's number; empty for a run's several).
func (tx *Tx) insertBills(ctx context.Context, acct *rental.Account, bills []rental.Bill, room string) error {
	if len(bills) == 0 {
		return nil
	}
	rows := make([][]any, len(bills))
	for i, b := range bills {
		lines, err := encodeLines(b.Lines)
		if err != nil {
			return err
		}
		e, w := b.Electricity, b.Water
		rows[i] = []any{b.ID, acct.LandlordID, b.PropertyID, b.RoomID, b.TenantID, b.ReadingID, b.Month, b.Status, b.Rent,
			e.Usage, e.Rate, e.Amount, w.Usage, w.Rate, w.Amount, w.Billing, w.Occupants, b.Total, b.DueDate, nullTime(b.IssuedAt),
			ms(b.CreatedAt.Time), ms(b.UpdatedAt.Time), lines, encodeLateFee(b.LateFee), b.LateFeeAmount(), lateFeeNext(&b)}
	}
	stmts := tx.InsertRows(`INSERT INTO bills (id, landlord_id, property_id, room_id, tenant_id, reading_id, month, status, rent,
			e_usage, e_rate, e_amount, w_usage, w_rate, w_amount, w_billing, occupants, total, due_date, issued_at, created_at, updated_at, lines,
			late_fee, late_fee_amount, late_fee_next)
		VALUES `, "store: create bills", rows)
	exists := rental.Exists("", "A room of this run was billed for %s by another request meanwhile; run it again.", bills[0].Month)
	if room != "" {
		exists = rental.BillExists(room, bills[0].Month, "")
	}
	for i := range stmts {
		stmts[i].Taken = exists
	}
	if err := tx.ExecAll(ctx, stmts); err != nil {
		return err
	}
	for _, b := range bills {
		if err := tx.RecordEvent(ctx, acct, "bill.created", b); err != nil {
			return err
		}
	}
	return nil
}
