package rental

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PrefixInvoice is the prefix of invoice IDs; people read invoices by
// their number (INV-2026-000123).
const PrefixInvoice = "inv"

// InvoiceStatus is where an invoice stands: open until paid or voided.
type InvoiceStatus string

// The invoice statuses.
const (
	InvoiceOpen InvoiceStatus = "open"
	InvoicePaid InvoiceStatus = "paid"
	InvoiceVoid InvoiceStatus = "void"
)

// Valid reports whether s is one of the statuses.
func (s InvoiceStatus) Valid() bool {
	return s == InvoiceOpen || s == InvoicePaid || s == InvoiceVoid
}

// InvoiceDueDays is how long after issue an invoice falls due.
const InvoiceDueDays = 14

// VATRate is Thailand's VAT in percent; invoice amounts include it.
const VATRate = 7

// Invoice is a developer's bill for one month of the service: the plan's
// fee and the requests past the plan's included amount.
type Invoice struct {
	ID          string
	Number      string // INV-YYYY-NNNNNN, without gaps per year of issue
	DeveloperID string
	Month       string // YYYY-MM, Thailand time
	Plan        DeveloperPlan
	Lines       []InvoiceLine
	Total       int64 // satang, VAT included
	Currency    string
	Status      InvoiceStatus
	Buyer       Buyer
	IssuedAt    Time
	DueAt       Time
	PaidAt      *Time
	VoidedAt    *Time
}

// Buyer is who an invoice is made out to, as they were at issue.
type Buyer struct {
	Name, Email, Company string
}

// InvoiceLine is one item of an invoice.
type InvoiceLine struct {
	Kind        string `json:"kind"` // "plan" or "extra_requests"
	Description string `json:"description"`
	Quantity    int64  `json:"quantity"`
	UnitPrice   int64  `json:"unit_price"` // satang
	Amount      int64  `json:"amount"`     // satang
}

// MonthBill is what closing a month bills a developer: the lines and their
// total. Bill is false when there is nothing to bill, and no invoice is made.
type MonthBill struct {
	Plan  DeveloperPlan
	Lines []InvoiceLine
	Total int64
	Bill  bool
}

// MonthClosable reports whether the month that starts at start can be
// closed for a developer created at created: at now the month has ended,
// and the developer existed in it. Any other month gets no invoice.
func MonthClosable(start, created, now time.Time) bool {
	end := start.AddDate(0, 1, 0)
	return !now.Before(end) && created.Before(end)
}

// CloseMonth bills a month of a developer on plan (the plan in effect at
// the month's end, the one whose quota ended it) that made used billable
// requests: the plan's fee for the month, whole, however late in it the
// plan began (no proration in v1), and each started 1,000 requests past
// the included amount at the plan's price. The Free plan has no fee and
// stops at its quota, so it is never billed: no invoice, not a zero one.
// Neither is a month that comes to nothing (Enterprise within its quota:
// its fee is agreed and billed outside the service).
func CloseMonth(plan DeveloperPlan, month string, used int64) MonthBill {
	b := MonthBill{Plan: plan}
	if plan == PlanFree {
		return b
	}
	price := plan.Price()
	if price.Fee > 0 {
		b.Lines = append(b.Lines, InvoiceLine{Kind: "plan", Description: fmt.Sprintf("%s plan, %s", plan.Name(), month),
			Quantity: 1, UnitPrice: price.Fee, Amount: price.Fee})
	}
	if extra := plan.ExtraRequests(used); extra > 0 {
		thousands := (extra + 999) / 1000
		b.Lines = append(b.Lines, InvoiceLine{Kind: "extra_requests",
			Description: fmt.Sprintf("Requests past the %s included: %s, per started 1,000", Thousands(plan.Limits().MonthlyIncluded), Thousands(extra)),
			Quantity:    thousands, UnitPrice: price.PerThousand, Amount: thousands * price.PerThousand})
	}
	for _, l := range b.Lines {
		b.Total += l.Amount
	}
	b.Bill = b.Total > 0
	return b
}

// InvoiceNumber writes the n-th invoice of a year: INV-2026-000123.
func InvoiceNumber(year, n int) string { return fmt.Sprintf("INV-%04d-%06d", year, n) }

// ValidInvoiceNumber reports whether s has the shape of an invoice number.
func ValidInvoiceNumber(s string) bool {
	rest, ok := strings.CutPrefix(s, "INV-")
	if !ok || len(rest) != 11 || rest[4] != '-' {
		return false
	}
	_, err1 := strconv.ParseUint(rest[:4], 10, 16)
	_, err2 := strconv.ParseUint(rest[5:], 10, 32)
	return err1 == nil && err2 == nil
}

// CheckInvoiceNumber is nil for a number in the shape of an invoice
// number, else 400 naming it: an operator's typing mistake is told apart
// from an invoice that does not exist.
func CheckInvoiceNumber(number string) error {
	if !ValidInvoiceNumber(number) {
		return Invalid("number", "'%s' is not an invoice number: they look like INV-2026-000123.", number)
	}
	return nil
}

// IssueTimes are an invoice's issue and due instants when issued at now.
func IssueTimes(now time.Time) (issued, due time.Time) {
	return now, now.AddDate(0, 0, InvoiceDueDays)
}

// Overdue reports whether the invoice is open past its due time at now:
// live requests are then refused with 402 payment_required.
func (inv *Invoice) Overdue(now time.Time) bool {
	return inv.Status == InvoiceOpen && inv.DueAt.Before(now)
}

// CheckPay is nil when the invoice can be marked paid: an open one. Paying
// a paid or voided invoice is 409 invalid_state.
func (inv *Invoice) CheckPay() error {
	if inv.Status != InvoiceOpen {
		return Conflict("invalid_state", "Invoice %s is %s; only an open invoice can be paid.", inv.Number, inv.Status)
	}
	return nil
}

// CheckVoid is nil when the invoice can be voided: an open one (a paid
// invoice was paid; a void one is void already).
func (inv *Invoice) CheckVoid() error {
	if inv.Status != InvoiceOpen {
		return Conflict("invalid_state", "Invoice %s is %s; only an open invoice can be voided.", inv.Number, inv.Status)
	}
	return nil
}

// VATIncluded is the VAT inside a total that includes it at VATRate,
// rounded to the nearest satang: total × 7 / 107.
func VATIncluded(total int64) int64 {
	return (total*VATRate*2 + (100 + VATRate)) / (2 * (100 + VATRate))
}

// Thousands writes n with thousands separators: 1234567 → 1,234,567.
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// CheckOwner is nil when the invoice is the developer's; another
// developer's is not found, exactly as one that does not exist, so an
// invoice number says nothing of whose it is.
func (inv *Invoice) CheckOwner(developerID string) error {
	if inv.DeveloperID != developerID {
		return NotFound("invoice", "")
	}
	return nil
}
