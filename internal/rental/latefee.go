package rental

import (
	"fmt"
	"slices"
)

// A property's late fee is the fine its unpaid bills get after their due
// date, as Thai landlords charge it: once, or so much a day up to a cap.
// A bill takes the rule in force when it is issued (as it takes the rates
// of its reading), so a later change of the property's rule never changes
// what a tenant was told; the fee then grows on the bill as a late_fee
// line, day by day in Thailand, while the bill is unpaid.

// How often a late fee is charged.
const (
	LateFeeOnce = "once"
	LateFeeDay  = "day"
)

// LateFeePers lists the accepted values of a late fee's per.
var LateFeePers = []string{LateFeeOnce, LateFeeDay}

// MaxGraceDays bounds a late fee's grace: a month past the due date.
const MaxGraceDays = 30

// LateFee is a late-fee rule: amount (satang) once, or each day (per),
// from the day after due date + grace_days, never above max_amount (nil:
// no cap). It is a property's rule, and the snapshot of it a bill took
// when issued.
type LateFee struct {
	Amount    int64  `json:"amount"`
	Per       string `json:"per"`
	GraceDays int64  `json:"grace_days"`
	MaxAmount *int64 `json:"max_amount"`
}

// LateFeeChange holds the late_fee object of a property's create or
// update body: a whole rule, which replaces the property's.
type LateFeeChange struct {
	Amount    Optional[int64]
	Per       Optional[string]
	GraceDays Optional[int64]
	MaxAmount Optional[int64]
}

// NewLateFee validates a late_fee object: amount (required, satang above 0
// and at most MaxChargeAmount), per (required, once or day), grace_days (0
// to 30, default 0) and max_amount (null by default, else from amount to
// MaxChargeAmount). Each refusal is 400 naming the sub-field
// (late_fee.grace_days).
func NewLateFee(c LateFeeChange) (*LateFee, error) {
	if !c.Amount.Set {
		return nil, Missing("late_fee.amount")
	}
	if c.Amount.Null || c.Amount.Value <= 0 || c.Amount.Value > MaxChargeAmount {
		return nil, Invalid("late_fee.amount", "late_fee.amount must be satang above 0 and at most %d.", MaxChargeAmount)
	}
	f := &LateFee{Amount: c.Amount.Value}
	if !c.Per.Set {
		return nil, Missing("late_fee.per")
	}
	if c.Per.Null || !slices.Contains(LateFeePers, c.Per.Value) {
		return nil, Invalid("late_fee.per", "late_fee.per must be one of %v.", LateFeePers)
	}
	f.Per = c.Per.Value
	if c.GraceDays.Set {
		if err := checkRange("late_fee.grace_days", c.GraceDays, 0, MaxGraceDays); err != nil {
			return nil, err
		}
		f.GraceDays = c.GraceDays.Value
	}
	if c.MaxAmount.Set && !c.MaxAmount.Null {
		if m := c.MaxAmount.Value; m < f.Amount || m > MaxChargeAmount {
			return nil, Invalid("late_fee.max_amount", "late_fee.max_amount must be null or satang from late_fee.amount (%d) to %d.", f.Amount, MaxChargeAmount)
		}
		f.MaxAmount = &c.MaxAmount.Value
	}
	return f, nil
}

// SameLateFee reports whether two rules (nil: none) are the same.
func SameLateFee(a, b *LateFee) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Amount == b.Amount && a.Per == b.Per && a.GraceDays == b.GraceDays &&
		(a.MaxAmount == nil) == (b.MaxAmount == nil) && (a.MaxAmount == nil || *a.MaxAmount == *b.MaxAmount)
}

// clone copies the rule, so that a bill's snapshot shares nothing with the
// property it was taken from.
func (f *LateFee) clone() *LateFee {
	if f == nil {
		return nil
	}
	c := *f
	if f.MaxAmount != nil {
		m := *f.MaxAmount
		c.MaxAmount = &m
	}
	return &c
}

// Accrued is what the rule charges a bill due on due by day (both
// YYYY-MM-DD, Thailand's calendar), and the days charged: nothing up to
// due + grace_days; from the day after, amount (one day), and for per day
// amount more on each following day, never above max_amount (the days
// then stop at the one that reached it, so the count is the same whether
// a sweep ran every day or caught up on several at once).
func (f LateFee) Accrued(due, day string) (amount, days int64) {
	days = daysBetween(due, day) - f.GraceDays
	switch {
	case days <= 0:
		return 0, 0
	case f.Per == LateFeeOnce:
		return f.Amount, 1
	case f.MaxAmount != nil && f.Amount*days > *f.MaxAmount:
		return *f.MaxAmount, min(days, (*f.MaxAmount+f.Amount-1)/f.Amount)
	}
	return f.Amount * days, days
}

// LateFeeAmount is what the bill's late_fee line charges so far (0
// without one).
func (b *Bill) LateFeeAmount() int64 {
	for _, l := range b.Lines {
		if l.Type == LineLateFee {
			return l.Amount
		}
	}
	return 0
}

// AccrueLateFee brings the bill's late_fee line to what its rule charges
// on day (its Thailand date): added as the last line once the rule
// charges anything, raised as the charge grows, and the total with it. It
// accrues while the bill is Payable: a bill without a rule, a draft, a
// paid bill and one that owes nothing (discounted to zero) accrue
// nothing; a part paid bill does. The line never goes down. It reports
// whether the line changed.
func (b *Bill) AccrueLateFee(day string) bool {
	if !b.accruing() {
		return false
	}
	amount, days := b.LateFee.Accrued(b.DueDate, day)
	if amount <= b.LateFeeAmount() {
		return false
	}
	line := Line{Type: LineLateFee, Description: lateFeeDescription(b.LateFee.Per, days), Amount: amount}
	i := slices.IndexFunc(b.Lines, func(l Line) bool { return l.Type == LineLateFee })
	if i < 0 {
		b.Lines = append(b.Lines, line)
	} else {
		b.Lines[i] = line
	}
	b.sum()
	return true
}

// lateFeeDescription is a late_fee line's description: "Late fee", with
// the days late it counts for a fee by the day.
func lateFeeDescription(per string, days int64) string {
	switch {
	case per == LateFeeOnce:
		return "Late fee"
	case days == 1:
		return "Late fee (1 day)"
	}
	return fmt.Sprintf("Late fee (%d days)", days)
}

// accruing reports whether the bill's late fee may grow: it has a rule
// and is Payable.
func (b *Bill) accruing() bool { return b.LateFee != nil && b.LateFee.Amount > 0 && b.Payable() }

// NextLateFeeDay is the date (YYYY-MM-DD, Thailand) on which the bill's
// late fee next changes, on the charge it has so far: the day after due
// date + grace_days for a first charge, the next day for a fee by the day
// below its cap; "" when it never will (not accruing, a fee charged once,
// a cap reached). A sweep looks at the bills whose day has come, and only
// at them.
func (b *Bill) NextLateFeeDay() string {
	if !b.accruing() {
		return ""
	}
	f := b.LateFee
	charged := b.LateFeeAmount()
	switch {
	case charged == 0:
	case f.Per == LateFeeOnce, f.MaxAmount != nil && charged >= *f.MaxAmount:
		return ""
	}
	// Below its cap, a fee by the day is amount × the days charged.
	return AddDays(b.DueDate, int(f.GraceDays+charged/f.Amount+1))
}
