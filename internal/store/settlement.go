package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

const settlementColumns = `id, tenant_id, room_id, property_id, deposit, unpaid_bills, deductions, refund_amount, amount_due, refund_due_date,
	status, closed_at, created_at, updated_at`

func scanSettlement(sc *scanner, s *rental.Settlement) error {
	*s = rental.Settlement{Object: "settlement", Currency: rental.Currency}
	var unpaid, deductions string
	var closed nullInteger
	var created, updated integer
	err := sc.Scan(&s.ID, &s.TenantID, &s.RoomID, &s.PropertyID, (*integer)(&s.Deposit), &unpaid, &deductions, (*integer)(&s.RefundAmount),
		(*integer)(&s.AmountDue), &s.RefundDueDate, &s.Status, &closed, &created, &updated)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(unpaid), &s.UnpaidBills); err != nil {
		return fmt.Errorf("store: settlement unpaid bills: %w", err)
	}
	if err := json.Unmarshal([]byte(deductions), &s.Deductions); err != nil {
		return fmt.Errorf("store: settlement deductions: %w", err)
	}
	s.ClosedAt = optTime(sql.NullInt64(closed))
	s.CreatedAt, s.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return nil
}

// GetSettlement returns a settlement of the account's landlord.
func (q *Queries) GetSettlement(ctx context.Context, acct *rental.Account, id string) (*rental.Settlement, error) {
	return one(ctx, q, "settlement", id, `SELECT `+settlementColumns+` FROM settlements WHERE landlord_id = $1 AND id = $2`,
		[]any{acct.LandlordID, id}, scanSettlement)
}

// SettlementFilter narrows a settlement list.
type SettlementFilter struct {
	PropertyID, RoomID, Status string
}

// ListSettlements returns a page of the account's settlements.
func (q *Queries) ListSettlements(ctx context.Context, acct *rental.Account, f SettlementFilter, p Page) ([]rental.Settlement, bool, error) {
	w := scoped(`SELECT `+settlementColumns+` FROM settlements WHERE landlord_id = $1`, acct.LandlordID).
		and("property_id = ?", f.PropertyID).and("room_id = ?", f.RoomID).and("status = ?", f.Status)
	return list(ctx, q, w.sql, w.args, p, scanSettlement)
}

// MoveOutInput is a move-out with its settlement: when (nil: now), the
// final reading of that month (nil: none; its room and month are the
// move-out's), and the deductions from the deposit (rental.NewDeductions).
type MoveOutInput struct {
	MovedOutAt   *time.Time
	FinalReading *ReadingInput
	Deductions   []rental.Deduction
}

// SettleMoveOut moves the room's tenant out and settles the tenancy, all
// in the request's transaction, so a refusal anywhere leaves the tenant in
// and nothing written: the move-out's time is checked
// (rental.CheckMoveOut), the final reading recorded as POST
// /v1/meter-readings records one (its refusals name final_reading.…), the
// tenant moved out as MoveOut does (tenant.deleted, room.updated), the
// month's final bill issued as POST /v1/bills makes it when the month has
// a reading and no bill of the tenant's and the tenant lived some day of it, and the
// settlement made from the tenant's unpaid bills (settlement.created). A
// room of another account, or without a tenant (as a second move-out
// finds it), is 404.
func (tx *Tx) SettleMoveOut(ctx context.Context, acct *rental.Account, roomID string, in MoveOutInput) (*rental.Settlement, error) {
	tx.readEndpointsAhead(acct)
	room, t, err := tx.roomTenant(ctx, acct, roomID) // the room first, as MoveIn and MoveOut lock it
	if err != nil {
		return nil, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	out := tx.Now
	if in.MovedOutAt != nil {
		out = *in.MovedOutAt
	}
	var lastMonth, lastBill string
	err = tx.c.QueryRowContext(ctx, `SELECT month, id FROM bills WHERE landlord_id = $1 AND room_id = $2 AND status <> $3
		ORDER BY month DESC, id LIMIT 1`, acct.LandlordID, roomID, rental.BillDraft).Scan(&lastMonth, &lastBill)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: room's last bill: %w", err)
	}
	if err := rental.CheckMoveOut(t, out, tx.Now, lastMonth, lastBill); err != nil {
		return nil, err
	}
	month := rental.MonthOf(out)
	if in.FinalReading != nil {
		in.FinalReading.RoomID, in.FinalReading.Month = room.ID, month
		if _, err := tx.CreateReading(ctx, acct, *in.FinalReading); err != nil {
			if e, ok := rental.AsError(err); ok && e.Param != "" {
				e.Param = "final_reading." + e.Param
			}
			return nil, err
		}
	}
	if err := tx.vacate(ctx, acct, room, t, out); err != nil {
		return nil, err
	}
	if t.LivedIn(month) {
		r, err := tx.roomReading(ctx, acct, room.ID, month)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if r != nil {
			// Billed already to this tenant: that bill is the final one.
			if _, err := tx.CreateBill(ctx, acct, room.ID, month, true); err != nil && !isCode(err, "resource_exists") {
				return nil, err
			}
		}
	}
	rows, err := tx.c.QueryContext(ctx, `SELECT `+billColumns+` FROM bills WHERE landlord_id = $1 AND tenant_id = $2 ORDER BY month, id`,
		acct.LandlordID, t.ID)
	if err != nil {
		return nil, fmt.Errorf("store: tenant's bills: %w", err)
	}
	bills, err := scanAll(rows, "tenant's bills", tx.scanBill)
	if err != nil {
		return nil, err
	}
	s := rental.Settle(t, out, rental.UnpaidBills(bills), in.Deductions, tx.Now)
	if err := tx.insertSettlement(ctx, acct, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// isNotFound reports whether err is a rental 404.
func isNotFound(err error) bool {
	e, ok := rental.AsError(err)
	return ok && e.Kind == rental.KindNotFound
}

// isCode reports whether err is a rental error of code.
func isCode(err error, code string) bool {
	e, ok := rental.AsError(err)
	return ok && e.Code == code
}

func (tx *Tx) insertSettlement(ctx context.Context, acct *rental.Account, s *rental.Settlement) error {
	unpaid, err := json.Marshal(s.UnpaidBills)
	if err != nil {
		return fmt.Errorf("store: settlement unpaid bills: %w", err)
	}
	deductions, err := json.Marshal(s.Deductions)
	if err != nil {
		return fmt.Errorf("store: settlement deductions: %w", err)
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO settlements (id, landlord_id, property_id, room_id, tenant_id, deposit, unpaid_bills, deductions,
			refund_amount, amount_due, refund_due_date, status, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
		s.ID, acct.LandlordID, s.PropertyID, s.RoomID, s.TenantID, s.Deposit, string(unpaid), string(deductions), s.RefundAmount, s.AmountDue,
		s.RefundDueDate, s.Status, ms(tx.Now))
	if database.IsUniqueViolation(err) {
		return rental.Exists("", "Tenant %s is settled already.", s.TenantID)
	}
	if err != nil {
		return fmt.Errorf("store: create settlement: %w", err)
	}
	return tx.RecordEvent(ctx, acct, "settlement.created", s)
}

// CloseSettlement marks an open settlement closed (409 invalid_state when
// it is closed already) and records settlement.closed.
func (tx *Tx) CloseSettlement(ctx context.Context, acct *rental.Account, id string) (*rental.Settlement, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "settlements", "settlement", acct.LandlordID, id); err != nil {
		return nil, err
	}
	s, err := tx.GetSettlement(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	if err := s.Close(tx.Now); err != nil {
		return nil, err
	}
	if _, err := tx.c.ExecContext(ctx, `UPDATE settlements SET status = $3, closed_at = $4, updated_at = $4 WHERE landlord_id = $1 AND id = $2`,
		acct.LandlordID, id, s.Status, ms(tx.Now)); err != nil {
		return nil, fmt.Errorf("store: close settlement: %w", err)
	}
	return s, tx.RecordEvent(ctx, acct, "settlement.closed", s)
}
