package rental

import (
	"fmt"
	"strings"
	"time"
)

// Receipt is the proof a tenant keeps that a bill was paid: a number the
// landlord's books can follow without gaps, when it was issued, and the
// address of its printable page. A bill has one from the moment it is
// paid, and keeps it.
type Receipt struct {
	Number   string `json:"number"`
	IssuedAt Time   `json:"issued_at"`
	URL      string `json:"url"`
}

// ReceiptDue reports whether the bill needs its receipt now: it is paid
// and has none yet. A receipt is issued once; a bill paid again (an
// overpayment) or saved again keeps the first.
func ReceiptDue(b *Bill) bool { return b.Status == BillPaid && b.Receipt == nil }

// ReceiptYear is the year a receipt issued at is numbered in: the year in
// Thailand, where the landlord keeps books, so a bill paid at 00:30 on
// 1 January in Bangkok (still 31 December in UTC) opens the new year's
// numbers.
func ReceiptYear(at time.Time) int { return at.In(Bangkok).Year() }

// ReceiptNumber is the number of a landlord's seq-th receipt (from 1) of
// the year: R<YYYY>-<NNNNNN>, so numbers sort as they were issued and a
// missing one shows. A landlord issuing more than 999,999 receipts in a
// year would get seven digits, still in order.
func ReceiptNumber(year int, seq int64) string { return fmt.Sprintf("R%04d-%06d", year, seq) }

// How a payment on a receipt was made: a PromptPay QR from the payment
// page, or a transfer the tenant proved with a verified slip.
const (
	PaidByQR   = "promptpay_qr"
	PaidBySlip = "slip"
)

// PaidBy is how a payment was made: by slip when a verified slip recorded
// it (slipID set), else by the payment page's QR.
func PaidBy(slipID *string) string {
	if slipID != nil && *slipID != "" {
		return PaidBySlip
	}
	return PaidByQR
}

// ReceiptPath is the path of every receipt's page, before its token. It is
// under the payment pages' path on purpose: a stored copy that holds a
// receipt's URL (a bill's event, a receipt notice) is then sealed as one
// holding a payment link's is, since the token opens a page with the
// tenant's name on it, and the page is answered, logged and refused as the
// payment pages are.
const ReceiptPath = PayPath + "receipt/"

// NewReceiptPage is a fresh, unguessable receipt page under base, the
// service's public URL (empty: a path only, for a process that serves no
// pages). The store keeps only the token's hash and the URL sealed.
func NewReceiptPage(base string) PaymentPage {
	token := NewLinkToken()
	return PaymentPage{Token: token, URL: strings.TrimRight(base, "/") + ReceiptPath + token}
}
