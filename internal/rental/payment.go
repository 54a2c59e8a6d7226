package rental

import (
	"strings"
	"time"
)

// PrefixPaymentLink names payment links.
const PrefixPaymentLink = "plink"

// Payment states. A tenant opening the payment page makes a pending payment
// with a QR valid for QRValidity; the provider's confirmation makes it paid;
// otherwise it expires, or is canceled when its QR can no longer be right
// (the bill was recalculated or paid by another payment).
const (
	PaymentPending  = "pending"
	PaymentPaid     = "paid"
	PaymentExpired  = "expired"
	PaymentCanceled = "canceled"
)

// PaymentStatuses lists the payment states.
var PaymentStatuses = []string{PaymentPending, PaymentPaid, PaymentExpired, PaymentCanceled}

// QRValidity is how long a payment's QR may be paid.
const QRValidity = 15 * time.Minute

// Why a payment ended unpaid (its failure_reason).
const (
	FailureExpired     = "qr_expired"
	FailureBillChanged = "bill_amount_changed"
	FailureBillPaid    = "bill_already_paid"
	FailureTestCancel  = "canceled_by_test_helper"
)

// PaymentLink is a bill's public payment page, as the API shows it. Amount
// is what is still owed on the bill.
type PaymentLink struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	BillID    string `json:"bill_id"`
	URL       string `json:"url"`
	Amount    int64  `json:"amount"`
	Currency  string `json:"currency"`
	Active    bool   `json:"active"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
}

// Payment is one QR payment of a bill, as the API shows it.
type Payment struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	BillID        string  `json:"bill_id"`
	PaymentLinkID *string `json:"payment_link_id"`
	Status        string  `json:"status"`
	Amount        int64   `json:"amount"`
	AmountPaid    int64   `json:"amount_paid"`
	Currency      string  `json:"currency"`
	PaymentURL    *string `json:"payment_url"`
	QRPayload     string  `json:"qr_payload"`
	ExpiresAt     Time    `json:"expires_at"`
	PaidAt        *Time   `json:"paid_at"`
	FailureReason *string `json:"failure_reason"`
	CreatedAt     Time    `json:"created_at"`
	UpdatedAt     Time    `json:"updated_at"`
}

// Confirmation is a payment provider's word that money arrived for a
// payment. The provider's transaction ID makes it recognisable when it
// arrives again.
type Confirmation struct {
	Provider      string
	TransactionID string
	PaymentID     string
	Amount        int64
	PaidAt        time.Time
}

// NewLinkToken returns the secret part of a payment page's URL: 32
// characters of [a-z0-9] from crypto/rand (about 165 bits), so a page can
// be neither guessed nor enumerated.
func NewLinkToken() string { return randomString(32, idAlphabet) }

// PaymentReference is the reference a payment carries in a bill-payment
// QR (Ref1): the first 20 characters of its ID's random part, upper case,
// as banks accept.
func PaymentReference(paymentID string) string {
	_, r, _ := strings.Cut(paymentID, "_")
	return strings.ToUpper(r[:min(20, len(r))])
}
