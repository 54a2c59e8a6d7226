package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

const paymentColumns = `id, bill_id, payment_link_id, status, amount, amount_paid,
	(SELECT url FROM payment_links l WHERE l.id = payments.payment_link_id),
	(SELECT url_sealed FROM payment_links l WHERE l.id = payments.payment_link_id), qr_payload, expires_at, paid_at, failure_reason, created_at, updated_at, slip_id`

func (q *Queries) scanPayment(sc *scanner, p *rental.Payment) error {
	*p = rental.Payment{Object: "payment", Currency: rental.Currency}
	var link, url, sealed, reason, slip sql.NullString
	var paid nullInteger
	var expires, created, updated integer
	err := sc.Scan(&p.ID, &p.BillID, &link, &p.Status, (*integer)(&p.Amount), (*integer)(&p.AmountPaid), &url, &sealed, &p.QRPayload, &expires, &paid, &reason, &created, &updated, &slip)
	if err != nil {
		return err
	}
	if slip.Valid {
		p.SlipID = &slip.String
	}
	if link.Valid {
		p.PaymentLinkID = &link.String
	}
	if link.Valid && (url.Valid || sealed.Valid) {
		u, err := q.linkURL(link.String, url, sealed)
		if err != nil {
			return err
		}
		p.PaymentURL = &u
	}
	if reason.Valid {
		p.FailureReason = &reason.String
	}
	p.PaidAt = optTime(sql.NullInt64(paid))
	p.ExpiresAt, p.CreatedAt, p.UpdatedAt = rental.UnixMilli(int64(expires)), rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return err
}

// GetPayment returns a payment of the account's landlord.
func (q *Queries) GetPayment(ctx context.Context, acct *rental.Account, id string) (*rental.Payment, error) {
	return one(ctx, q, "payment", id, `SELECT `+paymentColumns+` FROM payments WHERE landlord_id = $1 AND id = $2`,
		[]any{acct.LandlordID, id}, q.scanPayment)
}

// PaymentFilter narrows a payment list. CreatedAfter is inclusive and
// CreatedBefore exclusive (Unix ms; nil when not given).
type PaymentFilter struct {
	BillID, Status              string
	CreatedAfter, CreatedBefore *int64
}

// ListPayments returns a page of the account's payments.
func (q *Queries) ListPayments(ctx context.Context, acct *rental.Account, f PaymentFilter, p Page) ([]rental.Payment, bool, error) {
	w := scoped(`SELECT `+paymentColumns+` FROM payments WHERE landlord_id = $1`, acct.LandlordID).
		and("bill_id = ?", f.BillID).and("status = ?", f.Status).
		and("created_at >= ?", f.CreatedAfter).and("created_at < ?", f.CreatedBefore)
	return list(ctx, q, w.sql, w.args, p, q.scanPayment)
}

// Checkout is what a bill's payment page shows: the bill and where it is,
// and either the payment whose QR the tenant can pay now or why there is
// none.
type Checkout struct {
	Sandbox  bool
	Bill     *rental.Bill
	Property *rental.Property
	Room     *rental.Room
	// Payment is the pending payment to pay; nil when NoQR says why not.
	Payment *rental.Payment
	// NoQR is empty with a payment, else one of rental's NoQR reasons.
	NoQR string
	// ReceiverName is who the QR pays, as the landlord named the PromptPay
	// account's holder: what the tenant's bank app shows before the
	// transfer. Empty when the landlord has not given it.
	ReceiverName string
	// Slip is the bill's newest slip, whichever way it came in; nil
	// before the first.
	Slip *rental.Slip
}

// OpenPayment is a tenant opening a payment page: it finds the link by the
// token of its URL and returns what the page shows. The first opening
// makes a pending payment (payment.pending) whose QR is valid for
// rental.QRValidity; opening again while it is pending shows the same one;
// once it has expired (payment.failed) the next opening makes a new one for
// what is still owed. A landlord without QR payments gets no new QR. An
// unknown token is not found.
func (tx *Tx) OpenPayment(ctx context.Context, token string) (*Checkout, error) {
	var linkID, landlordID, billID string
	var active bool
	err := tx.c.QueryRowContext(ctx, `SELECT id, landlord_id, bill_id, active FROM payment_links WHERE token_hash = $1`, linkTokenHash(token)).
		Scan(&linkID, &landlordID, &billID, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("payment_link", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: open payment: %w", err)
	}
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	co := &Checkout{Sandbox: acct.Sandbox}
	if co.Bill, err = tx.GetBill(ctx, acct, billID); err != nil {
		return nil, err
	}
	if co.Room, err = tx.GetRoom(ctx, acct, co.Bill.RoomID); err != nil {
		return nil, err
	}
	if co.Property, err = tx.GetProperty(ctx, acct, co.Bill.PropertyID); err != nil {
		return nil, err
	}
	payee, err := tx.payee(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	co.ReceiverName = payee.ReceiverName
	if co.Slip, err = tx.latestSlip(ctx, acct, billID); err != nil {
		return nil, err
	}
	if co.NoQR = payee.NoQR(co.Bill, active); co.NoQR != "" {
		return co, nil
	}
	pending, err := one(ctx, &tx.Queries, "payment", "", `SELECT `+paymentColumns+` FROM payments
		WHERE landlord_id = $1 AND payment_link_id = $2 AND status = $3 ORDER BY created_at DESC, id DESC LIMIT 1`,
		[]any{landlordID, linkID, rental.PaymentPending}, tx.scanPayment)
	switch {
	case rental.IsNotFound(err):
	case err != nil:
		return nil, err
	case pending.Open(tx.Now):
		co.Payment = pending
		return co, nil
	default:
		if err := tx.endPayment(ctx, acct, pending, rental.PaymentExpired, rental.FailureExpired); err != nil {
			return nil, err
		}
	}
	co.Payment, err = tx.newPayment(ctx, acct, payee, co.Bill, linkID)
	return co, err
}

// newPayment makes a pending payment of what is still owed on the bill,
// with its PromptPay QR, and records payment.pending.
func (tx *Tx) newPayment(ctx context.Context, acct *rental.Account, payee rental.Payee, b *rental.Bill, linkID string) (*rental.Payment, error) {
	np, err := payee.NewPayment(b, linkID, tx.Now)
	if err != nil {
		return nil, err
	}
	id := np.ID
	_, err = tx.c.ExecContext(ctx, `INSERT INTO payments (id, landlord_id, bill_id, payment_link_id, status, amount, qr_payload,
			expires_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		id, acct.LandlordID, b.ID, linkID, np.Status, np.Amount, np.QRPayload, ms(np.ExpiresAt.Time), ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: create payment: %w", err)
	}
	p, err := tx.GetPayment(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	return p, tx.RecordEvent(ctx, acct, "payment.pending", p)
}

// endPayment ends a pending payment unpaid (expired or canceled, by the
// rule of rental.Payment.End) and records payment.failed.
func (tx *Tx) endPayment(ctx context.Context, acct *rental.Account, p *rental.Payment, status, reason string) error {
	if err := p.End(status, reason, tx.Now); err != nil {
		return err
	}
	_, err := tx.c.ExecContext(ctx, `UPDATE payments SET status = $3, failure_reason = $4, expires_at = $5, updated_at = $6
		WHERE landlord_id = $1 AND id = $2`, acct.LandlordID, p.ID, p.Status, reason, ms(p.ExpiresAt.Time), ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: end payment: %w", err)
	}
	return tx.RecordEvent(ctx, acct, "payment.failed", p)
}

// EndPayment ends a pending payment unpaid, expired or canceled
// (payment.failed); any other state is 409 invalid_state.
func (tx *Tx) EndPayment(ctx context.Context, acct *rental.Account, id, status, reason string) (*rental.Payment, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	p, err := tx.GetPayment(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	return p, tx.endPayment(ctx, acct, p, status, reason)
}

// settleBill runs after a bill's amounts changed: a paid bill's links close,
// and pending payments whose QR no longer asks for what is owed are
// canceled (payment.failed), so a tenant can never pay a stale amount; the
// next opening of the page makes a right one.
func (tx *Tx) settleBill(ctx context.Context, acct *rental.Account, b *rental.Bill) error {
	if b.ClosesLinks() {
		if _, err := tx.c.ExecContext(ctx, `UPDATE payment_links SET active = FALSE, updated_at = $3
			WHERE landlord_id = $1 AND bill_id = $2 AND active`, acct.LandlordID, b.ID, ms(tx.Now)); err != nil {
			return fmt.Errorf("store: close payment links: %w", err)
		}
	}
	pending, _, err := tx.ListPayments(ctx, acct, PaymentFilter{BillID: b.ID, Status: rental.PaymentPending}, Page{Limit: 100, Asc: true})
	if err != nil {
		return err
	}
	for i := range pending {
		if reason := pending[i].Stale(b); reason != "" {
			if err := tx.endPayment(ctx, acct, &pending[i], rental.PaymentCanceled, reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// ConfirmPayment records a provider's confirmation of a payment, exactly
// once per transaction ID however often or concurrently it arrives:
// duplicate reports a confirmation seen before (nothing changes). The first
// confirmation of a payment makes it paid (payment.paid, once per payment,
// even when it had expired or been canceled: the money arrived); every
// confirmation adds its amount to the payment's and the bill's amount_paid
// (bill.updated), and the bill is paid once that covers its total. The same
// transaction ID for another payment or amount is 409
// transaction_conflict. A payment of the wrong side (sandbox or real) is
// not found (rental.Confirmation.CheckMode).
func (tx *Tx) ConfirmPayment(ctx context.Context, c rental.Confirmation) (p *rental.Payment, duplicate bool, err error) {
	var landlordID string
	err = tx.c.QueryRowContext(ctx, `SELECT landlord_id FROM payments WHERE id = $1`, c.PaymentID).Scan(&landlordID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, rental.NotFound("payment", c.PaymentID)
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: confirm payment: %w", err)
	}
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, false, err
	}
	if err := c.CheckMode(acct.Sandbox); err != nil {
		return nil, false, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, false, err
	}
	p, err = tx.GetPayment(ctx, acct, c.PaymentID)
	if err != nil {
		return nil, false, err
	}
	paidAt, first := p.Confirm(c.Amount, c.PaidAt, tx.Now)
	res, err := tx.c.ExecContext(ctx, `INSERT INTO payment_confirmations (provider, transaction_id, landlord_id, payment_id, amount, paid_at, received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (provider, transaction_id) DO NOTHING`,
		c.Provider, c.TransactionID, landlordID, c.PaymentID, c.Amount, ms(paidAt), ms(tx.Now))
	if err != nil {
		return nil, false, fmt.Errorf("store: record confirmation: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		var seenPayment string
		var seenAmount int64
		err := tx.c.QueryRowContext(ctx, `SELECT payment_id, amount FROM payment_confirmations WHERE provider = $1 AND transaction_id = $2`,
			c.Provider, c.TransactionID).Scan(&seenPayment, &seenAmount)
		if err != nil {
			return nil, false, fmt.Errorf("store: confirmation %s: %w", c.TransactionID, err)
		}
		if err := c.Repeats(seenPayment, seenAmount); err != nil {
			return nil, false, err
		}
		p, err := tx.GetPayment(ctx, acct, c.PaymentID)
		return p, true, err
	}
	_, err = tx.c.ExecContext(ctx, `UPDATE payments SET status = $3, amount_paid = $4, paid_at = $5, failure_reason = NULL, updated_at = $6
		WHERE landlord_id = $1 AND id = $2`, landlordID, p.ID, p.Status, p.AmountPaid, nullTime(p.PaidAt), ms(tx.Now))
	if err != nil {
		return nil, false, fmt.Errorf("store: pay payment: %w", err)
	}
	if first {
		if err := tx.RecordEvent(ctx, acct, "payment.paid", p); err != nil {
			return nil, false, err
		}
	}
	b, err := tx.GetBill(ctx, acct, p.BillID)
	if err != nil {
		return nil, false, err
	}
	b.Receive(c.Amount, tx.Now)
	if err := tx.saveBill(ctx, acct, b); err != nil {
		return nil, false, err
	}
	return p, false, nil
}

// ExpiringLandlords lists the landlords with pending payments past their
// expiry at now, and the sandboxes running ahead of real time with
// pending payments (ExpirePayments judges on their clock).
func (q *Queries) ExpiringLandlords(ctx context.Context, now time.Time) ([]string, error) {
	return q.landlordsWhere(ctx, `SELECT DISTINCT landlord_id FROM payments WHERE status = $1 AND expires_at <= $2 UNION `+movedSandboxesWith(`payments`),
		rental.PaymentPending, ms(now))
}

// ExpirePayments expires a landlord's pending payments past their expiry
// (payment.failed, status expired), each exactly once however many
// sweeps overlap.
func (tx *Tx) ExpirePayments(ctx context.Context, landlordID string) (int, error) {
	return tx.sweep(ctx, landlordID, "payment.failed",
		`UPDATE payments SET status = $3, failure_reason = $4, updated_at = $2 WHERE landlord_id = $1 AND status = $5 AND expires_at <= $2 RETURNING id`,
		func(time.Time) []any {
			return []any{rental.PaymentExpired, rental.FailureExpired, rental.PaymentPending}
		},
		func(acct *rental.Account, id string) (any, error) { return tx.GetPayment(ctx, acct, id) })
}

// PendingQR returns the QR payload of a payment made on the payment page
// of token, while it is pending and unexpired at now and the landlord
// still takes QR payments: the page's QR image shows nothing else.
func (q *Queries) PendingQR(ctx context.Context, token, paymentID string, now time.Time) (string, error) {
	var payload string
	err := q.c.QueryRowContext(ctx, `SELECT p.qr_payload FROM payments p JOIN payment_links l ON l.id = p.payment_link_id
		JOIN landlords ll ON ll.id = p.landlord_id
		WHERE l.token_hash = $1 AND p.id = $2 AND p.status = $3 AND p.expires_at > $4 AND ll.qr_payments`,
		linkTokenHash(token), paymentID, rental.PaymentPending, ms(now)).Scan(&payload)
	if errors.Is(err, sql.ErrNoRows) {
		return "", rental.NotFound("payment", paymentID)
	}
	if err != nil {
		return "", fmt.Errorf("store: payment QR: %w", err)
	}
	return payload, nil
}
