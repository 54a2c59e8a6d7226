package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
)

// SetPromptPay sets the landlord's PromptPay receiver, the account every QR
// of the landlord pays into, with its account holder's name
// (rental.CheckReceiverName; "" for none). For a biller the Ref1 of each
// QR is the payment's own reference, so r.Ref1 is ignored.
func (tx *Tx) SetPromptPay(ctx context.Context, landlordID string, r promptpay.Receiver, name string) (promptpay.Receiver, error) {
	var holder sql.NullString
	if name != "" {
		if err := rental.CheckReceiverName(name); err != nil {
			return r, err
		}
		holder = sql.NullString{String: name, Valid: true}
	}
	if r.Kind == promptpay.Biller {
		r.Ref1 = "REF1"
	}
	r, err := r.Normalize()
	if err != nil {
		return r, err
	}
	if r.Kind == promptpay.Biller {
		r.Ref1 = ""
	}
	b, err := json.Marshal(r)
	if err != nil {
		return r, fmt.Errorf("store: promptpay: %w", err)
	}
	return r, tx.execOne(ctx, "landlord", landlordID, `UPDATE landlords SET promptpay = $2, promptpay_name = $3, updated_at = $4 WHERE id = $1`,
		landlordID, string(b), holder, ms(tx.Now))
}

// payee is what the QR of a landlord's payments needs: whether the
// landlord takes QR payments, and the receiver (nil until set up).
func (q *Queries) payee(ctx context.Context, landlordID string) (rental.Payee, error) {
	var p rental.Payee
	var raw, holder sql.NullString
	err := q.c.QueryRowContext(ctx, `SELECT qr_payments, promptpay, promptpay_name FROM landlords WHERE id = $1`, landlordID).Scan(&p.QRPayments, &raw, &holder)
	if err != nil {
		return p, fmt.Errorf("store: landlord %s: %w", landlordID, err)
	}
	p.ReceiverName = holder.String
	if !raw.Valid {
		return p, nil
	}
	var r promptpay.Receiver
	if err := json.Unmarshal([]byte(raw.String), &r); err != nil {
		return p, fmt.Errorf("store: landlord %s receiver: %w", landlordID, err)
	}
	p.Receiver = &r
	return p, nil
}
