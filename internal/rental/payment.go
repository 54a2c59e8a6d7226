package rental

import (
	"fmt"
	"strings"
	"time"

	"rentapi/internal/promptpay"
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
	// SlipID is the tenant's slip the payment was recorded from; nil for
	// a QR payment a provider confirmed.
	SlipID    *string `json:"slip_id"`
	CreatedAt Time    `json:"created_at"`
	UpdatedAt Time    `json:"updated_at"`
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

// PayPath is the path of every payment link's page, before its token: the
// web pages serve it, and the store seals a stored copy that names it, as
// it may hold a link's URL.
const PayPath = "/pay/"

// PaymentPage is where a new payment link's page lives: the token that
// finds the link (the store keeps only its hash) and the page's URL.
type PaymentPage struct {
	Token string
	URL   string
}

// NewPaymentPage is a fresh, unguessable payment page under base, the
// service's public URL. The caller makes it, as it knows where the pages
// are served; the store keeps it only if the bill has no active link.
func NewPaymentPage(base string) PaymentPage {
	token := NewLinkToken()
	return PaymentPage{Token: token, URL: strings.TrimRight(base, "/") + PayPath + token}
}

// PaymentReference is the reference a payment carries in a bill-payment
// QR (Ref1): the first 20 characters of its ID's random part, upper case,
// as banks accept.
func PaymentReference(paymentID string) string {
	_, r, _ := strings.Cut(paymentID, "_")
	return strings.ToUpper(r[:min(20, len(r))])
}

// Why a payment page shows no QR.
const (
	NoQRPaid        = "paid"          // the bill is paid
	NoQRUnavailable = "qr_disabled"   // the landlord's plan has no QR payments
	NoQRNoReceiver  = "no_receiver"   // the landlord has no PromptPay receiver
	NoQRNotPayable  = "not_payable"   // the bill cannot be paid (not issued)
	NoQRInactive    = "link_inactive" // the link was replaced or closed
)

// Payee is what a landlord's QRs need: whether the plan takes QR payments,
// and the PromptPay receiver they pay into (nil until set up).
type Payee struct {
	QRPayments bool
	Receiver   *promptpay.Receiver
	// ReceiverName is the receiver's account holder as the landlord gave
	// it (CheckReceiverName), the name a tenant's bank app shows before the
	// transfer; empty when not given.
	ReceiverName string
}

// CheckReceiverName is nil when name can be given as the PromptPay
// receiver's account holder: the name the payment page shows tenants
// beside the QR, to match what their bank app shows before they confirm.
// It is text like any other name a person gives, of 1 to MaxNameLen
// characters, on one line as a bank app shows it.
func CheckReceiverName(name string) error {
	if strings.ContainsAny(name, "\r\n\t") {
		return Invalid("name", "name must be one line, without line breaks or tabs.")
	}
	return checkText("name", Of(name), 1, MaxNameLen)
}

// CheckLink is nil when a payment link can be made for the bill, else 409
// bill_not_payable saying why.
func (p Payee) CheckLink(b *Bill) error {
	if err := b.CheckPayable(); err != nil {
		return err
	}
	if !p.QRPayments {
		return Conflict("bill_not_payable", "This landlord's plan does not include QR payments (features.qr_payments is false).")
	}
	if p.Receiver == nil {
		return Conflict("bill_not_payable", "This landlord has not set up a PromptPay receiver yet, so no QR can be made.")
	}
	return nil
}

// NoticeLinks reports whether a bill notice of typ carries the bill's
// payment link (made for it when the bill has none): every notice but a
// receipt, when a link can be made for the bill (CheckLink).
func (p Payee) NoticeLinks(typ string, b *Bill) bool {
	return typ != NotifyPaymentReceipt && p.CheckLink(b) == nil
}

// NoQR is why a payment page of the bill shows no QR (one of the NoQR
// reasons), or "" when it can show one.
func (p Payee) NoQR(b *Bill, linkActive bool) string {
	switch {
	case b.Status == BillPaid:
		return NoQRPaid
	case !b.Payable():
		return NoQRNotPayable
	case !linkActive:
		return NoQRInactive
	case !p.QRPayments:
		return NoQRUnavailable
	case p.Receiver == nil:
		return NoQRNoReceiver
	}
	return ""
}

// NewPayment makes a pending payment of what is still owed on the bill at
// now, through the payment link, with its PromptPay QR into the payee's
// receiver (for a biller, Ref1 is the payment's own reference). The payee
// must have a receiver (see NoQR).
func (p Payee) NewPayment(b *Bill, linkID string, now time.Time) (Payment, error) {
	id := NewID(PrefixPayment)
	r := *p.Receiver
	if r.Kind == promptpay.Biller {
		r.Ref1 = PaymentReference(id)
	}
	amount := b.Total - b.AmountPaid
	payload, err := promptpay.Payload(r, amount)
	if err != nil {
		return Payment{}, fmt.Errorf("rental: payment QR: %w", err)
	}
	at := Time{Time: now}
	return Payment{ID: id, Object: "payment", BillID: b.ID, PaymentLinkID: &linkID, Status: PaymentPending, Amount: amount,
		Currency: Currency, QRPayload: payload, ExpiresAt: Time{Time: now.Add(QRValidity)}, CreatedAt: at, UpdatedAt: at}, nil
}

// End ends a pending payment unpaid at now, expired or canceled with the
// reason; any other state is 409 invalid_state. A payment expired before its
// time (the test helper's outcome) expires now, so expires_at never lies in
// the future of an expired payment.
func (p *Payment) End(status, reason string, now time.Time) error {
	if p.Status != PaymentPending {
		return Conflict("invalid_state", "Only a pending payment can end unpaid; this one is %s.", p.Status)
	}
	if status == PaymentExpired && p.ExpiresAt.After(now) {
		p.ExpiresAt = Time{Time: now}
	}
	p.Status, p.FailureReason, p.UpdatedAt = status, &reason, Time{Time: now}
	return nil
}

// Open reports whether a pending payment's QR can still be paid at now.
func (p *Payment) Open(now time.Time) bool {
	return p.Status == PaymentPending && p.ExpiresAt.After(now)
}

// Stale is why a pending payment of the bill must be canceled now that the
// bill's amounts or state changed ("" when it still asks for what is owed):
// a tenant must never pay a stale amount.
func (p *Payment) Stale(b *Bill) string {
	switch {
	case p.Status != PaymentPending:
		return ""
	case b.Status == BillPaid:
		return FailureBillPaid
	case p.Amount != b.Total-b.AmountPaid:
		return FailureBillChanged
	}
	return ""
}

// Confirm applies a provider's confirmation of amount at now: the first one
// makes the payment paid (first is true: payment.paid, once per payment,
// even when it had expired or been canceled: the money arrived), and every
// one adds its amount. The provider's paidAt says when the money moved, but
// never before the QR existed nor after we heard of it: at is that time.
func (p *Payment) Confirm(amount int64, paidAt, now time.Time) (at time.Time, first bool) {
	if paidAt.IsZero() || paidAt.After(now) {
		paidAt = now
	}
	if paidAt.Before(p.CreatedAt.Time) {
		paidAt = p.CreatedAt.Time
	}
	first = p.Status != PaymentPaid
	p.AmountPaid += amount
	p.UpdatedAt = Time{Time: now}
	if first {
		at := Time{Time: paidAt.UTC()}
		p.Status, p.PaidAt, p.FailureReason = PaymentPaid, &at, nil
	}
	return paidAt, first
}

// SandboxProvider is the payment provider of test mode: the test helper
// confirms sandbox payments under this name, and only sandbox payments
// accept it.
const SandboxProvider = "sandbox"

// CheckMode is nil when the confirmation may confirm a payment of a
// sandbox (or a real) landlord: sandbox payments take only
// SandboxProvider, and real ones never do. A payment of the wrong side is
// not found, as if it did not exist.
func (c Confirmation) CheckMode(sandbox bool) error {
	if sandbox != (c.Provider == SandboxProvider) {
		return NotFound("payment", c.PaymentID)
	}
	return nil
}

// Repeats checks a confirmation whose transaction ID was recorded before
// (for seenPayment and seenAmount): the same one again is a harmless
// duplicate (nil); the ID reused for another payment or amount is 409
// transaction_conflict.
func (c Confirmation) Repeats(seenPayment string, seenAmount int64) error {
	if seenPayment != c.PaymentID || seenAmount != c.Amount {
		return Conflict("transaction_conflict", "Transaction %s was already confirmed for another payment or amount.", c.TransactionID)
	}
	return nil
}
