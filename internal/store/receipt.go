package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"rentapi/internal/rental"
)

// A paid bill's receipt lives on the bill's row (migration 00021): its
// number, when it was issued, the hash of its page's token and its URL,
// sealed. Numbers come from receipt_counters, one row per landlord and
// year, bumped in the transaction that marks the bill paid.

// receiptURL is the column of receipts' URLs, stored as copies are
// (sealCopy): sealed under the server secret, bound to the bill.
const receiptURL sealedCopy = "bills.receipt_url"

// issueReceipt gives a bill that has become paid its receipt, in the
// transaction that saves it paid, so that the bill's events and answers
// carry it: the landlord's next number of the year (rental.ReceiptYear of
// the transaction's now) and a page on a fresh unguessable token. The
// counter's upsert takes the landlord and year's row until the transaction
// ends, so concurrent payments, in this process or another, number one
// after the other, and a transaction that rolls back takes its number back
// with it: no gaps. The landlord is claimed first: every path that pays a
// bill has claimed it already (payments confirmed, readings corrected by
// their event, the sandbox's seed), which serializes the landlord's writers
// across processes, so this is a no-op that keeps the locks in one order
// (landlord, then counter) and the numbers in the order of the receipts'
// times. A bill with a receipt, or not paid, is left as it is.
func (tx *Tx) issueReceipt(ctx context.Context, acct *rental.Account, b *rental.Bill) error {
	if !rental.ReceiptDue(b) {
		return nil
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return err
	}
	year := rental.ReceiptYear(tx.Now)
	var seq int64
	err := tx.c.QueryRowContext(ctx, `INSERT INTO receipt_counters (landlord_id, year, last_number) VALUES ($1, $2, 1)
		ON CONFLICT (landlord_id, year) DO UPDATE SET last_number = receipt_counters.last_number + 1
		RETURNING last_number`, acct.LandlordID, year).Scan((*integer)(&seq))
	if err != nil {
		return fmt.Errorf("store: receipt number: %w", err)
	}
	page := rental.NewReceiptPage(tx.db.publicURL)
	r := &rental.Receipt{Number: rental.ReceiptNumber(year, seq), IssuedAt: rental.Time{Time: tx.Now}, URL: page.URL}
	res, err := tx.c.ExecContext(ctx, `UPDATE bills SET receipt_number = $3, receipt_issued_at = $4, receipt_token_hash = $5, receipt_url = $6
		WHERE landlord_id = $1 AND id = $2 AND receipt_number IS NULL`,
		acct.LandlordID, b.ID, r.Number, ms(tx.Now), linkTokenHash(page.Token), tx.sealCopy(receiptURL, b.ID, r.URL))
	if err != nil {
		return fmt.Errorf("store: issue receipt: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		// Another writer gave the bill its receipt since it was read: not
		// possible under the landlord's claim, and never a second number.
		return fmt.Errorf("store: receipt of bill %s: issued by another transaction", b.ID)
	}
	b.Receipt = r
	return nil
}

// receiptColumns are a bill's receipt, after billColumns' own.
const receiptColumns = `receipt_number, receipt_issued_at, receipt_url`

// openReceipt sets the bill's receipt from its columns (none while the
// number is NULL).
func (q *Queries) openReceipt(b *rental.Bill, number sql.NullString, issued nullInteger, stored sql.NullString) error {
	if !number.Valid {
		return nil
	}
	url, err := q.openCopy(receiptURL, b.ID, stored.String)
	if err != nil {
		return err
	}
	b.Receipt = &rental.Receipt{Number: number.String, IssuedAt: rental.UnixMilli(issued.Int64), URL: string(url)}
	return nil
}

// ReceiptPage is what a receipt's page shows: the paid bill (with its
// receipt) and where it is, who paid it and the payments that paid it.
type ReceiptPage struct {
	Sandbox  bool
	Bill     *rental.Bill
	Property *rental.Property
	Room     *rental.Room
	// Tenant is who the bill was made out to; nil for a bill of a room
	// without one.
	Tenant *rental.Tenant
	// Payments are the bill's paid payments, in the order they were paid.
	Payments []ReceiptPayment
}

// ReceiptPayment is one payment on a receipt: how much, when, and how
// (rental.PaidBy).
type ReceiptPayment struct {
	ID     string
	Amount int64
	PaidAt rental.Time
	Method string
}

// OpenReceipt returns the receipt page of token: not found for a token no
// receipt has. It changes nothing.
func (q *Queries) OpenReceipt(ctx context.Context, token string) (*ReceiptPage, error) {
	var landlordID, billID string
	err := q.c.QueryRowContext(ctx, `SELECT landlord_id, id FROM bills WHERE receipt_token_hash = $1`, linkTokenHash(token)).
		Scan(&landlordID, &billID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("receipt", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: receipt: %w", err)
	}
	acct, err := q.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	rp := &ReceiptPage{Sandbox: acct.Sandbox}
	if rp.Bill, err = q.GetBill(ctx, acct, billID); err != nil {
		return nil, err
	}
	if rp.Property, err = q.GetProperty(ctx, acct, rp.Bill.PropertyID); err != nil {
		return nil, err
	}
	if rp.Room, err = q.GetRoom(ctx, acct, rp.Bill.RoomID); err != nil {
		return nil, err
	}
	if id := rp.Bill.TenantID; id != nil {
		rp.Tenant, err = q.GetTenant(ctx, acct, *id)
		if err != nil && !rental.IsNotFound(err) {
			return nil, err
		}
	}
	rows, err := q.c.QueryContext(ctx, `SELECT id, amount_paid, paid_at, slip_id FROM payments
		WHERE landlord_id = $1 AND bill_id = $2 AND status = $3 AND amount_paid > 0 ORDER BY paid_at, id`,
		landlordID, billID, rental.PaymentPaid)
	if err != nil {
		return nil, fmt.Errorf("store: receipt payments: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p ReceiptPayment
		var paid integer
		var slip sql.NullString
		if err := rows.Scan(&p.ID, (*integer)(&p.Amount), &paid, &slip); err != nil {
			return nil, fmt.Errorf("store: receipt payments: %w", err)
		}
		var slipID *string
		if slip.Valid {
			slipID = &slip.String
		}
		p.PaidAt, p.Method = rental.UnixMilli(int64(paid)), rental.PaidBy(slipID)
		rp.Payments = append(rp.Payments, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: receipt payments: %w", err)
	}
	return rp, nil
}
