package rental

import (
	"fmt"
	"slices"
	"time"
)

// A tenancy's money beyond the monthly bill: the deposit taken at move-in,
// the rent of a month lived in part (proration), and the settlement made
// at move-out, which sets the deposit against what is still owed.

// Proration methods of a property: the rent of a month a tenant moved in or
// out of is the whole rent (none), or the share of the days lived there
// (daily).
const (
	ProrationNone  = "none"
	ProrationDaily = "daily"
)

// Prorations lists the accepted proration values.
var Prorations = []string{ProrationNone, ProrationDaily}

// Bounds on a tenancy's money: a deposit as large as the largest flat
// amount, and the deductions a move-out may make.
const (
	MaxDeposit                 = 100_000_000 // satang (1,000,000 THB)
	MaxDeductions              = 20
	MaxDeductionDescriptionLen = MaxChargeDescriptionLen
	MaxDeductionAmount         = MaxDeposit
	// RefundDays is how long the landlord has to return a deposit after
	// the tenant leaves, under Thai leasing rules.
	RefundDays = 7
)

// DaysOccupied counts the days of month (YYYY-MM) a tenant lived in the
// room, from the Thailand dates of moving in (counted) and out (not
// counted; nil: still there), and the days of the month. In on the 17th of
// a 30-day month: 14 of 30; out on the 10th: 9.
func DaysOccupied(month string, movedIn time.Time, movedOut *time.Time) (days, monthDays int64) {
	start, err := time.Parse("2006-01", month)
	if err != nil {
		return 0, 0
	}
	end := start.AddDate(0, 1, 0)
	monthDays = int64(end.Sub(start) / (24 * time.Hour))
	from, to := start, end
	if in := date(movedIn); in.After(start) {
		from = in
	}
	if movedOut != nil && date(*movedOut).Before(end) {
		to = date(*movedOut)
	}
	return max(int64(to.Sub(from)/(24*time.Hour)), 0), monthDays
}

// date is t's Thailand date, as midnight UTC of that date (so that dates
// subtract in whole days).
func date(t time.Time) time.Time {
	l := t.In(Bangkok)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}

// ProrateRent is rent × days ÷ monthDays, rounded half up to the satang.
func ProrateRent(rent, days, monthDays int64) int64 {
	if monthDays <= 0 {
		return rent
	}
	return (2*rent*days + monthDays) / (2 * monthDays)
}

// MonthRent is the rent of a room's month for its tenant (nil: nobody) and
// the rent line's description: with daily proration, a month the tenant
// moved in or out of and lived in only part of is prorated by the days
// lived there ("Rent (14 of 30 days)"); any other month is the whole rent.
func MonthRent(month string, rent int64, proration string, t *Tenant) (int64, string) {
	if proration != ProrationDaily || t == nil {
		return rent, rentDescription
	}
	var out *time.Time
	if t.MovedOutAt != nil {
		out = &t.MovedOutAt.Time
	}
	days, monthDays := DaysOccupied(month, t.MovedInAt.Time, out)
	if days == 0 || days >= monthDays {
		return rent, rentDescription // lived there all month, or not at all (a tenant recorded late)
	}
	return ProrateRent(rent, days, monthDays), fmt.Sprintf("%s (%d of %d days)", rentDescription, days, monthDays)
}

// CheckProration is nil for a known proration value.
func CheckProration(v Optional[string]) error {
	if v.Null || !slices.Contains(Prorations, v.Value) {
		return Invalid("proration", "proration must be one of none, daily.")
	}
	return nil
}

// CheckDeposit is nil for a deposit of 0 to MaxDeposit satang.
func CheckDeposit(v Optional[int64]) error {
	if v.Null || v.Value < 0 || v.Value > MaxDeposit {
		return Invalid("deposit", "deposit must be between 0 and %d satang.", MaxDeposit)
	}
	return nil
}

// CheckLeaseEnd reads a lease_end (YYYY-MM-DD, or null for none), which
// may not fall before the Thailand date of moving in.
func CheckLeaseEnd(v Optional[string], movedIn time.Time) (*string, error) {
	if v.Null {
		return nil, nil
	}
	d, err := time.Parse(time.DateOnly, v.Value)
	if err != nil || d.Format(time.DateOnly) != v.Value {
		return nil, Invalid("lease_end", "lease_end must be a date as YYYY-MM-DD, or null.")
	}
	if in := DayOf(movedIn); v.Value < in {
		return nil, Invalid("lease_end", "lease_end %s is before the tenant moved in (%s).", v.Value, in)
	}
	s := v.Value
	return &s, nil
}

// PrefixSettlement is the prefix of a settlement's ID.
const PrefixSettlement = "stl"

// Settlement states: open until the landlord has returned the refund or
// received what is owed, then closed.
const (
	SettlementOpen   = "open"
	SettlementClosed = "closed"
)

// SettlementStatuses lists the settlement states.
var SettlementStatuses = []string{SettlementOpen, SettlementClosed}

// UnpaidBill is a bill a tenant still owed on at moving out, and how much.
type UnpaidBill struct {
	BillID    string `json:"bill_id"`
	AmountDue int64  `json:"amount_due"`
}

// Deduction is what the landlord keeps from a deposit beyond the bills
// (damage, cleaning), with why.
type Deduction struct {
	Description string `json:"description"`
	Amount      int64  `json:"amount"`
}

// DeductionInput is one deduction of a move-out body.
type DeductionInput struct {
	Description Optional[string]
	Amount      Optional[int64]
}

// Settlement is the statement of a tenancy's money at moving out, as the
// API shows it: the deposit against the unpaid bills and deductions. Its
// figures are as of moving out; bills keep their own states.
type Settlement struct {
	ID            string       `json:"id"`
	Object        string       `json:"object"`
	TenantID      string       `json:"tenant_id"`
	RoomID        string       `json:"room_id"`
	PropertyID    string       `json:"property_id"`
	Deposit       int64        `json:"deposit"`
	UnpaidBills   []UnpaidBill `json:"unpaid_bills"`
	Deductions    []Deduction  `json:"deductions"`
	RefundAmount  int64        `json:"refund_amount"`
	AmountDue     int64        `json:"amount_due"`
	Currency      string       `json:"currency"`
	RefundDueDate string       `json:"refund_due_date"`
	Status        string       `json:"status"`
	ClosedAt      *Time        `json:"closed_at"`
	CreatedAt     Time         `json:"created_at"`
	UpdatedAt     Time         `json:"updated_at"`
}

// NewDeductions validates a move-out's deductions: at most MaxDeductions,
// each with a description and an amount of 1 to MaxDeductionAmount satang.
func NewDeductions(in []DeductionInput) ([]Deduction, error) {
	if len(in) > MaxDeductions {
		return nil, Invalid("deductions", "deductions may hold at most %d items; this one has %d.", MaxDeductions, len(in))
	}
	out := make([]Deduction, len(in))
	for i, d := range in {
		p := fmt.Sprintf("deductions[%d].", i)
		if !d.Description.Set {
			return nil, Missing(p + "description")
		}
		if err := checkText(p+"description", d.Description, 1, MaxDeductionDescriptionLen); err != nil {
			return nil, err
		}
		if !d.Amount.Set {
			return nil, Missing(p + "amount")
		}
		if err := checkRange(p+"amount", d.Amount, 1, MaxDeductionAmount); err != nil {
			return nil, err
		}
		out[i] = Deduction{Description: d.Description.Value, Amount: d.Amount.Value}
	}
	return out, nil
}

// CheckMoveOut checks a move-out's time against the tenancy and the room's
// bills: not before moving in, not after now, and not in a month before
// the latest month the room is billed for (lastBilled, "" for none; its
// bill billID), which the tenant would then be billed for without living
// there.
func CheckMoveOut(t *Tenant, out, now time.Time, lastBilled, billID string) error {
	if out.Before(t.MovedInAt.Time) {
		return Invalid("moved_out_at", "moved_out_at is before the tenant moved in (%s).", t.MovedInAt.Time.Format(time.RFC3339))
	}
	if out.After(now) {
		return Invalid("moved_out_at", "moved_out_at is in the future; record a move-out once it has happened.")
	}
	if month := MonthOf(out); lastBilled > month {
		e := Invalid("moved_out_at", "moved_out_at is in %s, but the room is billed for %s already (bill %s); move out in %s or later.",
			month, lastBilled, billID, lastBilled)
		e.ResourceID = billID
		return e
	}
	return nil
}

// Settle makes the settlement of a tenant who moved out at out, from the
// deposit, the unpaid bills and the deductions: refund = max(0, deposit −
// unpaid − deductions), amount due = max(0, unpaid + deductions −
// deposit), the refund due RefundDays after moving out (Thailand date).
func Settle(t *Tenant, out time.Time, unpaid []UnpaidBill, deductions []Deduction, now time.Time) Settlement {
	var owed int64
	for _, b := range unpaid {
		owed += b.AmountDue
	}
	for _, d := range deductions {
		owed += d.Amount
	}
	at := Time{Time: now}
	return Settlement{ID: NewID(PrefixSettlement), Object: "settlement", TenantID: t.ID, RoomID: t.RoomID, PropertyID: t.PropertyID,
		Deposit: t.Deposit, UnpaidBills: unpaid, Deductions: deductions,
		RefundAmount: max(0, t.Deposit-owed), AmountDue: max(0, owed-t.Deposit), Currency: Currency,
		RefundDueDate: AddDays(DayOf(out), RefundDays), Status: SettlementOpen, CreatedAt: at, UpdatedAt: at}
}

// Close marks an open settlement closed at now (the money has changed
// hands); a closed one is 409 invalid_state.
func (s *Settlement) Close(now time.Time) error {
	if s.Status != SettlementOpen {
		return Conflict("invalid_state", "Settlement %s is closed already.", s.ID)
	}
	at := Time{Time: now}
	s.Status, s.ClosedAt, s.UpdatedAt = SettlementClosed, &at, at
	return nil
}

// UnpaidBills lists what a tenant's bills still ask at moving out: each
// issued or overdue bill's total − amount_paid (drafts were never sent,
// paid bills owe nothing).
func UnpaidBills(bills []Bill) []UnpaidBill {
	out := []UnpaidBill{}
	for _, b := range bills {
		if b.awaitingPayment() && b.Total > b.AmountPaid {
			out = append(out, UnpaidBill{BillID: b.ID, AmountDue: b.Total - b.AmountPaid})
		}
	}
	return out
}

// BilledTenant is who a room's month is billed to, of the tenants who
// lived there that month and the one living there now: the last to move in
// of those who lived there some day of the month (a month one tenant left
// and another came into is the newcomer's, prorated by the newcomer's days:
// the leaver's days are on the final bill the move-out makes, or on no
// bill), else the tenant living there now (a month before a move-in
// recorded late, billed in full as before), else nobody.
func BilledTenant(month string, tenants []*Tenant) *Tenant {
	var billed, current *Tenant
	for _, t := range tenants {
		if t.MovedOutAt == nil {
			current = t
		}
		if t.LivedIn(month) && (billed == nil || t.MovedInAt.After(billed.MovedInAt.Time)) {
			billed = t
		}
	}
	if billed == nil {
		return current
	}
	return billed
}

// LivedIn reports whether the tenant lived in the room some day of month:
// a move-out's final bill is made only then (out on the 1st, the month was
// not lived in, and its reading's bill is the landlord's to make).
func (t *Tenant) LivedIn(month string) bool {
	var out *time.Time
	if t.MovedOutAt != nil {
		out = &t.MovedOutAt.Time
	}
	days, _ := DaysOccupied(month, t.MovedInAt.Time, out)
	return days > 0
}
