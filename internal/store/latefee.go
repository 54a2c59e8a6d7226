package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// encodeLateFee is a late-fee rule as its column keeps it: JSON, or NULL
// for none. A rule is integers and a string, which always marshal.
func encodeLateFee(f *rental.LateFee) any {
	if f == nil {
		return nil
	}
	b, _ := json.Marshal(f)
	return string(b)
}

// decodeLateFee reads a late_fee column.
func decodeLateFee(s sql.NullString) (*rental.LateFee, error) {
	if !s.Valid {
		return nil, nil
	}
	f := new(rental.LateFee)
	if err := json.Unmarshal([]byte(s.String), f); err != nil {
		return nil, fmt.Errorf("store: late fee: %w", err)
	}
	return f, nil
}

// lateFeeNext is a bill's late_fee_next column: the day its late fee next
// changes, or NULL when it never will.
func lateFeeNext(b *rental.Bill) any { return nullString(b.NextLateFeeDay()) }

// LateFeeLandlords lists the landlords with bills whose late fee changes
// on or before today (a Thailand date, YYYY-MM-DD), and the sandboxes
// running ahead of real time with bills whose late fee will change (their
// today is their clock's: AccrueLateFees judges).
func (q *Queries) LateFeeLandlords(ctx context.Context, today string) ([]string, error) {
	return q.landlordsWhere(ctx, `SELECT DISTINCT landlord_id FROM bills WHERE late_fee_next <= $1
		UNION SELECT l.id FROM landlords l WHERE l.clock_offset <> 0
			AND EXISTS (SELECT 1 FROM bills b WHERE b.landlord_id = l.id AND b.late_fee_next IS NOT NULL)`, today)
}

// NextLateFeeDay is the first day (YYYY-MM-DD) on which a late fee of
// the landlord's changes, "" when none will: where a sandbox's clock
// catching up goes next.
func (q *Queries) NextLateFeeDay(ctx context.Context, landlordID string) (string, error) {
	var day sql.NullString
	err := q.c.QueryRowContext(ctx, `SELECT MIN(late_fee_next) FROM bills WHERE landlord_id = $1 AND late_fee_next IS NOT NULL`,
		landlordID).Scan(&day)
	if err != nil {
		return "", fmt.Errorf("store: next late fee day: %w", err)
	}
	return day.String, nil
}

// LateFeeBatch is how many bills one transaction of the late-fee sweep
// takes: enough that a statement serves many bills, few enough that the
// landlord's other writers never wait long for its claim.
const LateFeeBatch = 500

// AccrueLateFees brings the late fees of up to LateFeeBatch of a
// landlord's unpaid bills whose day has come to what their rules charge
// on day (YYYY-MM-DD), or on the landlord's today (its clock's, see Claim)
// when day is empty or later (rental's Bill.AccrueLateFee), as the
// landlord's only writer. Each bill whose line changed gets bill.updated,
// and its pending payments, now asking for a stale amount, are canceled.
// It returns how many bills changed, and whether bills with work may be
// left (a full batch that changed some: the caller runs it again).
//
// Exactly once per bill and day: a bill is written only if it still has
// the charge it was read with (late_fee_amount), so of two sweeps only
// one changes it, and the other finds it done. The reads and writes are
// by the batch: one query reads the bills, one statement per 64 writes
// them (all in one round trip with the reads of pending payments and of
// the webhook endpoints the events go to), and the events go with the
// commit, 64 a statement.
func (tx *Tx) AccrueLateFees(ctx context.Context, landlordID, day string) (changed int, more bool, err error) {
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return 0, false, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return 0, false, err
	}
	if today := rental.DayOf(tx.Now); day == "" || day > today {
		day = today
	}
	rows, err := tx.c.QueryContext(ctx, `SELECT `+billColumns+` FROM bills WHERE landlord_id = $1 AND late_fee_next <= $2
		AND status IN ($3, $4) ORDER BY late_fee_next, id LIMIT `+strconv.Itoa(LateFeeBatch), landlordID, day, rental.BillIssued, rental.BillOverdue)
	if err != nil {
		return 0, false, fmt.Errorf("store: late fees: %w", err)
	}
	var bills []rental.Bill
	sc := &scanner{src: rows}
	for rows.Next() {
		bills = append(bills, rental.Bill{})
		if err := tx.scanBill(sc, &bills[len(bills)-1]); err != nil {
			rows.Close()
			return 0, false, fmt.Errorf("store: late fees: %w", err)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, false, fmt.Errorf("store: late fees: %w", err)
	}
	if len(bills) == 0 {
		return 0, false, nil
	}

	// Every bill read is written: its next day at least moves on.
	accrued := map[string]bool{}
	values := make([][]any, len(bills))
	for i := range bills {
		b := &bills[i]
		before := b.LateFeeAmount()
		if b.AccrueLateFee(day) {
			accrued[b.ID] = true
			b.UpdatedAt = rental.Time{Time: tx.Now}
		}
		lines, err := encodeLines(b.Lines)
		if err != nil {
			return 0, false, err
		}
		values[i] = []any{b.ID, lines, b.Total, lateFeeNext(b), b.LateFeeAmount(), before}
	}
	written := map[string]bool{}
	stmts := lateFeeUpdates(landlordID, ms(tx.Now), values, func(r database.Rows) error {
		for r.Next() {
			var id string
			if err := r.Scan(&id); err != nil {
				return err
			}
			written[id] = true
		}
		return r.Err()
	})
	var pending []rental.Payment
	stmts = append(stmts, database.Stmt{SQL: `SELECT ` + paymentColumns + ` FROM payments WHERE status = $1 AND landlord_id = $2`,
		Args: []any{rental.PaymentPending, landlordID}, What: "store: late fees: pending payments",
		Rows: func(r database.Rows) error {
			sc := &scanner{src: r}
			for r.Next() {
				pending = append(pending, rental.Payment{})
				if err := tx.scanPayment(sc, &pending[len(pending)-1]); err != nil {
					return err
				}
			}
			return r.Err()
		}})
	// The bills' events go to the landlord's endpoints: read once, here,
	// rather than at each event.
	if s, ok := tx.endpointsRead(acct); ok {
		stmts = append(stmts, s)
	}
	if err := tx.ExecAll(ctx, stmts); err != nil {
		return 0, false, err
	}

	grown := map[string]*rental.Bill{}
	for i := range bills {
		b := &bills[i]
		if !accrued[b.ID] || !written[b.ID] {
			continue
		}
		grown[b.ID] = b
		if err := tx.RecordEvent(ctx, acct, "bill.updated", b); err != nil {
			return 0, false, err
		}
	}
	for i := range pending {
		p := &pending[i]
		if b := grown[p.BillID]; b != nil {
			if reason := p.Stale(b); reason != "" {
				if err := tx.endPayment(ctx, acct, p, rental.PaymentCanceled, reason); err != nil {
					return 0, false, err
				}
			}
		}
	}
	changed = len(grown)
	return changed, len(bills) == LateFeeBatch && changed > 0, nil
}

// lateFeeUpdates are the statements that write rows of bills' late fees
// (id, lines, total, late_fee_next, late_fee_amount, and the
// late_fee_amount the bill was read with), 64, 32, ..., 1 rows a
// statement (a few texts to prepare, as Tx.InsertRows): each row changes its
// bill only if the bill is the landlord's, unpaid and still charged what
// it was read with; updated_at moves for a bill whose charge changed.
// rows reads the IDs of the bills written. (The CAST in the condition
// is for SQLite's planner: on a plain column of v it would index v and
// scan the landlord's bills, where it should look each row's bill up by
// its ID.)
func lateFeeUpdates(landlordID string, now int64, rows [][]any, read func(database.Rows) error) []database.Stmt {
	var out []database.Stmt
	for len(rows) > 0 {
		n := 64
		for n > len(rows) {
			n /= 2
		}
		part := rows[:n]
		rows = rows[n:]
		args := []any{landlordID, now, rental.BillIssued, rental.BillOverdue}
		var q strings.Builder
		q.WriteString(`UPDATE bills SET lines = v.column2, total = v.column3, late_fee_next = v.column4, late_fee_amount = v.column5,
			updated_at = CASE WHEN v.column5 <> v.column6 THEN $2 ELSE bills.updated_at END
		FROM (VALUES `)
		for i, r := range part {
			if i > 0 {
				q.WriteString(", ")
			}
			p := len(args)
			fmt.Fprintf(&q, "($%d, $%d, CAST($%d AS BIGINT), CAST($%d AS TEXT), CAST($%d AS BIGINT), CAST($%d AS BIGINT))", p+1, p+2, p+3, p+4, p+5, p+6)
			args = append(args, r...)
		}
		q.WriteString(`) AS v
		WHERE bills.landlord_id = $1 AND bills.id = v.column1 AND bills.late_fee_amount = CAST(v.column6 AS BIGINT) AND bills.status IN ($3, $4)
		RETURNING id`)
		out = append(out, database.Stmt{SQL: q.String(), Args: args, What: "store: late fees", Rows: read})
	}
	return out
}
