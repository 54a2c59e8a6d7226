package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

const billColumns = `id, room_id, property_id, tenant_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
	w_usage, w_rate, w_amount, w_billing, occupants, total, amount_paid, due_date, issued_at, paid_at, overdue_at, created_at, updated_at,
	` + receiptColumns + `, lines, late_fee`

func (q *Queries) scanBill(sc *scanner, b *rental.Bill) error {
	*b = rental.Bill{Object: "bill", Currency: rental.Currency}
	var tenant, receipt, receiptURL, lateFee sql.NullString
	var lines string
	var issued, paid, overdue, receiptIssued nullInteger
	var created, updated integer
	e, w := &b.Electricity, &b.Water
	err := sc.Scan(&b.ID, &b.RoomID, &b.PropertyID, &tenant, &b.ReadingID, &b.Month, &b.Status, (*integer)(&b.Rent),
		(*integer)(&e.Usage), (*integer)(&e.Rate), (*integer)(&e.Amount), (*integer)(&w.Usage), (*integer)(&w.Rate), (*integer)(&w.Amount),
		&w.Billing, (*integer)(&w.Occupants), (*integer)(&b.Total), (*integer)(&b.AmountPaid), &b.DueDate, &issued, &paid, &overdue, &created, &updated,
		&receipt, &receiptIssued, &receiptURL, &lines, &lateFee)
	if err != nil {
		return err
	}
	if b.Lines, err = decodeLines(lines); err != nil {
		return err
	}
	if b.LateFee, err = decodeLateFee(lateFee); err != nil {
		return err
	}
	if tenant.Valid {
		b.TenantID = &tenant.String
	}
	b.IssuedAt, b.PaidAt, b.OverdueAt = optTime(sql.NullInt64(issued)), optTime(sql.NullInt64(paid)), optTime(sql.NullInt64(overdue))
	b.CreatedAt, b.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	b.Warnings = rental.BillWarnings(b.IssuedAt, b.DueDate)
	return q.openReceipt(b, receipt, receiptIssued, receiptURL)
}

// GetBill returns a bill of the account's landlord.
func (q *Queries) GetBill(ctx context.Context, acct *rental.Account, id string) (*rental.Bill, error) {
	return one(ctx, q, "bill", id, `SELECT `+billColumns+` FROM bills WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, q.scanBill)
}

// BillFilter narrows a bill list. CreatedAfter is inclusive and
// CreatedBefore exclusive (Unix ms; nil when not given).
type BillFilter struct {
	PropertyID, RoomID, TenantID, Status string
	MonthFilter
	CreatedAfter, CreatedBefore *int64
}

// ListBills returns a page of the account's bills.
func (q *Queries) ListBills(ctx context.Context, acct *rental.Account, f BillFilter, p Page) ([]rental.Bill, bool, error) {
	w := scoped(`SELECT `+billColumns+` FROM bills WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID).and("tenant_id = ?", f.TenantID).
		and("status = ?", f.Status).months(f.MonthFilter).
		and("created_at >= ?", f.CreatedAfter).and("created_at < ?", f.CreatedBefore)
	return list(ctx, q, w.sql, w.args, p, q.scanBill)
}

// CreateBill bills a room's month from its recorded reading (409
// reading_required without one; 409 resource_exists if billed already):
// the room's rent, the reading's usage at its rates, due on the property's
// due day of the next month. Issued unless issue is false (a draft). A
// bill run (RunBills) makes its bills by the same loading, rule and insert.
func (tx *Tx) CreateBill(ctx context.Context, acct *rental.Account, roomID, month string, issue bool) (*rental.Bill, error) {
	tx.readEndpointsAhead(acct)
	room, err := tx.GetRoom(ctx, acct, roomID)
	if err != nil {
		return nil, err
	}
	prop, err := tx.GetProperty(ctx, acct, room.PropertyID)
	if err != nil {
		return nil, err
	}
	srcs, err := tx.billSources(ctx, acct, prop, []rental.Room{*room}, month, issue)
	if err != nil {
		return nil, err
	}
	b, err := rental.NewBill(srcs[0], tx.Now)
	if err != nil {
		return nil, err
	}
	if err := tx.insertBills(ctx, acct, []rental.Bill{b}, room.Number); err != nil {
		return nil, err
	}
	return &b, nil
}

// saveBill writes a bill's amounts and state and records bill.updated; a
// bill that has become paid gets its receipt first (issueReceipt).
func (tx *Tx) saveBill(ctx context.Context, acct *rental.Account, b *rental.Bill) error {
	if err := tx.issueReceipt(ctx, acct, b); err != nil {
		return err
	}
	b.UpdatedAt = rental.Time{Time: tx.Now}
	lines, err := encodeLines(b.Lines)
	if err != nil {
		return err
	}
	e, w := b.Electricity, b.Water
	_, err = tx.c.ExecContext(ctx, `UPDATE bills SET status = $3, e_usage = $4, e_rate = $5, e_amount = $6, w_usage = $7, w_rate = $8,
			w_amount = $9, total = $10, amount_paid = $11, issued_at = $12, paid_at = $13, overdue_at = $14, updated_at = $15, lines = $16,
			late_fee = $17, late_fee_amount = $18, late_fee_next = $19
		WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, b.ID, b.Status, e.Usage, e.Rate, e.Amount, w.Usage, w.Rate, w.Amount,
		b.Total, b.AmountPaid, nullTime(b.IssuedAt), nullTime(b.PaidAt), nullTime(b.OverdueAt), ms(tx.Now), lines,
		encodeLateFee(b.LateFee), b.LateFeeAmount(), lateFeeNext(b))
	if err != nil {
		return fmt.Errorf("store: update bill: %w", err)
	}
	if err := tx.RecordEvent(ctx, acct, "bill.updated", b); err != nil {
		return err
	}
	return tx.settleBill(ctx, acct, b)
}

// IssueBill moves a draft to issued, with its property's late-fee rule in
// force now; any other state is 409 invalid_state.
func (tx *Tx) IssueBill(ctx context.Context, acct *rental.Account, id string) (*rental.Bill, error) {
	if err := tx.lock(ctx, "bills", "bill", acct.LandlordID, id); err != nil {
		return nil, err
	}
	b, err := tx.GetBill(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	prop, err := tx.GetProperty(ctx, acct, b.PropertyID)
	if err != nil {
		return nil, err
	}
	if err := b.Issue(tx.Now, prop.LateFee); err != nil {
		return nil, err
	}
	return b, tx.saveBill(ctx, acct, b)
}

// DeleteBill deletes a draft (records bill.deleted); any other state is 409
// invalid_state.
func (tx *Tx) DeleteBill(ctx context.Context, acct *rental.Account, id string) error {
	if err := tx.lock(ctx, "bills", "bill", acct.LandlordID, id); err != nil {
		return err
	}
	b, err := tx.GetBill(ctx, acct, id)
	if err != nil {
		return err
	}
	later, err := tx.roomBills(ctx, "the month's later bills", `landlord_id = $1 AND reading_id = $2
		AND (created_at > $3 OR (created_at = $3 AND id > $4)) ORDER BY created_at, id`, acct.LandlordID, b.ReadingID, ms(b.CreatedAt.Time), b.ID)
	if err != nil {
		return err
	}
	if err := b.Delete(later); err != nil {
		return err
	}
	if _, err := tx.c.ExecContext(ctx, `DELETE FROM bills WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, id); err != nil {
		return fmt.Errorf("store: delete bill: %w", err)
	}
	return tx.RecordEvent(ctx, acct, "bill.deleted", b)
}

// OverdueLandlords lists the landlords with issued bills due before today
// (a Thailand date, YYYY-MM-DD), and the sandboxes running ahead of real
// time with issued bills (their today is their clock's: MarkOverdue
// judges).
func (q *Queries) OverdueLandlords(ctx context.Context, today string) ([]string, error) {
	return q.landlordsWhere(ctx, `SELECT DISTINCT landlord_id FROM bills WHERE status = $1 AND due_date < $2 UNION `+movedSandboxesWith(`bills`),
		rental.BillIssued, today)
}

// MarkOverdue turns a landlord's issued bills due before the landlord's
// today (its clock's, see Claim) overdue and records bill.overdue for
// each, exactly once however many sweeps overlap.
func (tx *Tx) MarkOverdue(ctx context.Context, landlordID string) (int, error) {
	return tx.sweep(ctx, landlordID, "bill.overdue",
		`UPDATE bills SET status = $3, overdue_at = $2, updated_at = $2 WHERE landlord_id = $1 AND status = $4 AND due_date < $5 RETURNING id`,
		func(now time.Time) []any { return []any{rental.BillOverdue, rental.BillIssued, rental.DayOf(now)} },
		func(acct *rental.Account, id string) (any, error) { return tx.GetBill(ctx, acct, id) })
}

// landlordsWhere runs a query for landlord IDs: who a sweep has work for.
func (q *Queries) landlordsWhere(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := q.c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: landlords to sweep: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: landlords to sweep: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// sweep is one landlord's share of a periodic sweep: as the landlord's only
// writer, it runs update, a conditional UPDATE ... RETURNING id whose $1 is
// the landlord and $2 the transaction's time (then args at that time: the
// landlord's clock's), and records typ
// for each object it changed, read back by get. The condition makes it
// exactly once: of two processes sweeping together, each row changes in
// only one.
func (tx *Tx) sweep(ctx context.Context, landlordID, typ, update string, args func(time.Time) []any, get func(*rental.Account, string) (any, error)) (int, error) {
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return 0, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return 0, err
	}
	rows, err := tx.c.QueryContext(ctx, update, append([]any{landlordID, ms(tx.Now)}, args(tx.Now)...)...)
	if err != nil {
		return 0, fmt.Errorf("store: sweep %s: %w", typ, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: sweep %s: %w", typ, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: sweep %s: %w", typ, err)
	}
	for _, id := range ids {
		obj, err := get(acct, id)
		if err != nil {
			return 0, err
		}
		if err := tx.RecordEvent(ctx, acct, typ, obj); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// landlordAccount is a stand-in account for work done on a landlord's data
// outside any request (jobs): it carries the landlord and its mode.
func (q *Queries) landlordAccount(ctx context.Context, landlordID string) (*rental.Account, error) {
	a := &rental.Account{LandlordID: landlordID}
	if err := q.c.QueryRowContext(ctx, `SELECT sandbox FROM landlords WHERE id = $1`, landlordID).Scan(&a.Sandbox); err != nil {
		return nil, fmt.Errorf("store: landlord %s: %w", landlordID, err)
	}
	return a, nil
}

func nullTime(t *rental.Time) any {
	if t == nil {
		return nil
	}
	return ms(t.Time)
}
