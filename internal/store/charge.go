package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"rentapi/internal/rental"
)

const chargeColumns = `id, room_id, property_id, type, description, amount, recurring, month, ends_month, created_at, updated_at`

func scanCharge(sc *scanner, c *rental.Charge) error {
	*c = rental.Charge{Object: "charge", Currency: rental.Currency}
	var ends sql.NullString
	var created, updated integer
	err := sc.Scan(&c.ID, &c.RoomID, &c.PropertyID, &c.Type, &c.Description, (*integer)(&c.Amount), &c.Recurring, &c.Month, &ends, &created, &updated)
	if ends.Valid {
		c.EndsMonth = &ends.String
	}
	c.CreatedAt, c.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return err
}

// GetCharge returns a charge of the account's landlord.
func (q *Queries) GetCharge(ctx context.Context, acct *rental.Account, id string) (*rental.Charge, error) {
	return one(ctx, q, "charge", id, `SELECT `+chargeColumns+` FROM charges WHERE landlord_id = $1 AND id = $2`, []any{acct.LandlordID, id}, scanCharge)
}

// ChargeFilter narrows a charge list; Month keeps the charges active in
// that month (rental.Charge.ActiveIn), one-off and recurring.
type ChargeFilter struct {
	PropertyID, RoomID, Month string
}

// activeIn is the condition of rental.Charge.ActiveIn, its ? the month.
const activeIn = `(CASE WHEN recurring THEN month <= ? AND (ends_month IS NULL OR ends_month >= ?) ELSE month = ? END)`

// ListCharges returns a page of the account's charges.
func (q *Queries) ListCharges(ctx context.Context, acct *rental.Account, f ChargeFilter, p Page) ([]rental.Charge, bool, error) {
	w := scoped(`SELECT `+chargeColumns+` FROM charges WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID).and(activeIn, f.Month)
	return list(ctx, q, w.sql, w.args, p, scanCharge)
}

// roomCharges returns the room's charges active in month, oldest first:
// the order they take on its bill.
func (q *Queries) roomCharges(ctx context.Context, acct *rental.Account, roomID, month string) ([]rental.Charge, error) {
	w := scoped(`SELECT `+chargeColumns+` FROM charges WHERE landlord_id = $1`, acct.LandlordID).
		and("room_id = ?", roomID).and(activeIn, month)
	rows, err := q.c.QueryContext(ctx, w.sql+` ORDER BY created_at, id`, w.args...)
	if err != nil {
		return nil, fmt.Errorf("store: room charges: %w", err)
	}
	defer rows.Close()
	var out []rental.Charge
	sc := &scanner{src: rows}
	for rows.Next() {
		var c rental.Charge
		if err := scanCharge(sc, &c); err != nil {
			return nil, fmt.Errorf("store: room charges: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// CreateCharge adds a charge or discount to a room (404 for a room of
// another account, naming room_id) and recalculates the room's draft
// bills of the months it is active in (bill.updated each).
func (tx *Tx) CreateCharge(ctx context.Context, acct *rental.Account, roomID string, c rental.ChargeChange) (*rental.Charge, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "rooms", "room", acct.LandlordID, roomID); err != nil {
		if e, ok := rental.AsError(err); ok {
			e.Param = "room_id"
		}
		return nil, err // locked so that the room cannot be deleted under the new charge
	}
	room, err := tx.GetRoom(ctx, acct, roomID)
	if err != nil {
		return nil, err
	}
	ch, err := rental.NewCharge(*room, c)
	if err != nil {
		return nil, err
	}
	ch.ID = rental.NewID(rental.PrefixCharge)
	ch.CreatedAt, ch.UpdatedAt = rental.Time{Time: tx.Now}, rental.Time{Time: tx.Now}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO charges (id, landlord_id, property_id, room_id, type, description, amount, recurring, month, ends_month, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
		ch.ID, acct.LandlordID, ch.PropertyID, ch.RoomID, ch.Type, ch.Description, ch.Amount, ch.Recurring, ch.Month, ch.EndsMonth, ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: create charge: %w", err)
	}
	return &ch, tx.rechargeDrafts(ctx, acct, roomID)
}

// DeleteCharge takes a charge off: deleted, or ended when a recurring one
// is on a bill past draft (rental.Charge.Remove; the charge is returned
// then, nil when deleted). Either way the room's draft bills are
// recalculated.
func (tx *Tx) DeleteCharge(ctx context.Context, acct *rental.Account, id string) (*rental.Charge, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "charges", "charge", acct.LandlordID, id); err != nil {
		return nil, err
	}
	ch, err := tx.GetCharge(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	roomID := ch.RoomID
	bills, _, err := tx.ListBills(ctx, acct, BillFilter{RoomID: ch.RoomID, MonthFilter: MonthFilter{From: ch.Month}}, Page{Limit: 1000, Asc: true})
	if err != nil {
		return nil, err
	}
	var billed []string
	for _, b := range bills {
		if b.Status != rental.BillDraft && ch.BilledOn(b) {
			billed = append(billed, b.Month)
		}
	}
	ended, err := ch.Remove(billed)
	if err != nil {
		return nil, err
	}
	if ended {
		ch.UpdatedAt = rental.Time{Time: tx.Now}
		_, err = tx.c.ExecContext(ctx, `UPDATE charges SET ends_month = $3, updated_at = $4 WHERE landlord_id = $1 AND id = $2`,
			acct.LandlordID, id, ch.EndsMonth, ms(tx.Now))
	} else {
		_, err = tx.c.ExecContext(ctx, `DELETE FROM charges WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, id)
		ch = nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: delete charge: %w", err)
	}
	return ch, tx.rechargeDrafts(ctx, acct, roomID)
}

// rechargeDrafts puts the room's charges on each of its draft bills again
// (rental.Bill.Charge; a one-off only where no other bill of the month
// carries it, rental.ChargesFor) and saves those whose lines changed
// (bill.updated).
// Each draft is locked and read again, so a bill issued meanwhile is left
// as it is: issued bills do not change.
func (tx *Tx) rechargeDrafts(ctx context.Context, acct *rental.Account, roomID string) error {
	drafts, _, err := tx.ListBills(ctx, acct, BillFilter{RoomID: roomID, Status: rental.BillDraft}, Page{Limit: 1000, Asc: true})
	if err != nil {
		return err
	}
	for _, d := range drafts {
		if err := tx.lock(ctx, "bills", "bill", acct.LandlordID, d.ID); err != nil {
			return err
		}
		b, err := tx.GetBill(ctx, acct, d.ID)
		if err != nil {
			return err
		}
		if b.Status != rental.BillDraft {
			continue
		}
		charges, err := tx.roomCharges(ctx, acct, roomID, b.Month)
		if err != nil {
			return err
		}
		others, err := tx.roomBills(ctx, "the month's other bills", `landlord_id = $1 AND reading_id = $2 AND id <> $3`,
			acct.LandlordID, b.ReadingID, b.ID)
		if err != nil {
			return err
		}
		if !b.Charge(rental.ChargesFor(charges, others)) {
			continue
		}
		if err := tx.saveBill(ctx, acct, b); err != nil {
			return err
		}
	}
	return nil
}

// storedLine is a bill's line as the lines column keeps it: the API's
// fields and the charge it came from.
type storedLine struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Amount      int64  `json:"amount"`
	ChargeID    string `json:"charge_id,omitempty"`
	Full        int64  `json:"full,omitempty"`
}

// encodeLines is the lines column of a bill.
func encodeLines(lines []rental.Line) (string, error) {
	out := make([]storedLine, len(lines))
	for i, l := range lines {
		out[i] = storedLine(l)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("store: bill lines: %w", err)
	}
	return string(b), nil
}

// decodeLines reads a bill's lines column.
func decodeLines(s string) ([]rental.Line, error) {
	var in []storedLine
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, fmt.Errorf("store: bill lines: %w", err)
	}
	out := make([]rental.Line, len(in))
	for i, l := range in {
		out[i] = rental.Line(l)
	}
	return out, nil
}
