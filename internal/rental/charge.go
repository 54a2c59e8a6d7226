package rental

import "slices"

// A bill is its lines: rent, electricity and water from the reading, then
// the room's other charges and discounts of the month, then a late fee.
// The total is their sum, so what a tenant is asked to pay can always be
// read off, item by item.

// Line types.
const (
	LineRent        = "rent"
	LineElectricity = "electricity"
	LineWater       = "water"
	LineCharge      = "charge"
	LineDiscount    = "discount"
	LineLateFee     = "late_fee"
)

// LineTypes lists the types of a bill's lines.
var LineTypes = []string{LineRent, LineElectricity, LineWater, LineCharge, LineDiscount, LineLateFee}

// Line is one amount of a bill, as the API shows it. A discount's amount
// is negative.
type Line struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Amount      int64  `json:"amount"`
	// ChargeID is the charge a charge or discount line comes from, kept
	// with the bill (not shown) so that a charge knows the bills it is on.
	ChargeID string `json:"-"`
	// Full is a discount's whole amount (positive): the line takes at most
	// what the bill's other lines leave, so Full is what it grows back to
	// when they grow.
	Full int64 `json:"-"`
}

// The descriptions of the lines a reading makes.
const (
	rentDescription        = "Rent"
	electricityDescription = "Electricity"
	waterDescription       = "Water"
)

// sum rebuilds the rent, electricity and water lines from the bill's
// fields, keeps its other lines, sizes its discounts and makes the total
// the sum of the lines. A discount takes at most what the lines before it
// leave, so a total is never below zero.
func (b *Bill) sum() {
	rent := rentDescription // or a prorated month's, which the bill keeps
	for _, l := range b.Lines {
		if l.Type == LineRent {
			rent = l.Description
		}
	}
	lines := []Line{
		{Type: LineRent, Description: rent, Amount: b.Rent},
		{Type: LineElectricity, Description: electricityDescription, Amount: b.Electricity.Amount},
		{Type: LineWater, Description: waterDescription, Amount: b.Water.Amount},
	}
	for _, l := range b.Lines {
		if !fromReading(l.Type) {
			lines = append(lines, l)
		}
	}
	var owed int64
	for _, l := range lines {
		if l.Type != LineDiscount {
			owed += l.Amount
		}
	}
	b.Total = 0
	for i, l := range lines {
		if l.Type == LineDiscount {
			lines[i].Amount = -min(l.Full, owed)
			owed += lines[i].Amount
		}
		b.Total += lines[i].Amount
	}
	b.Lines = lines
}

func fromReading(typ string) bool {
	return typ == LineRent || typ == LineElectricity || typ == LineWater
}

// Charge puts the room's charges of the bill's month on it (those
// ActiveIn the month: the caller may pass more), charges before discounts,
// each in the order given, in place of the charges it carried; its other
// lines stay. It reports whether the lines changed.
func (b *Bill) Charge(charges []Charge) bool {
	before := slices.Clone(b.Lines)
	var added, discounts, rest []Line
	for _, c := range charges {
		if !c.ActiveIn(b.Month) {
			continue
		}
		if c.Type == LineDiscount {
			discounts = append(discounts, Line{Type: c.Type, Description: c.Description, Amount: -c.Amount, ChargeID: c.ID, Full: c.Amount})
		} else {
			added = append(added, Line{Type: c.Type, Description: c.Description, Amount: c.Amount, ChargeID: c.ID})
		}
	}
	for _, l := range b.Lines {
		if l.Type == LineRent || !fromReading(l.Type) && l.Type != LineCharge && l.Type != LineDiscount {
			rest = append(rest, l) // a late fee comes last; the rent line keeps its description (sum puts it first)
		}
	}
	b.Lines = slices.Concat(added, discounts, rest)
	b.sum() // the reading's lines first
	return !slices.Equal(before, b.Lines)
}

// Charge types: what the landlord adds to a bill, or takes off it.
const (
	ChargeCharge   = LineCharge
	ChargeDiscount = LineDiscount
)

// ChargeTypes lists the types of a charge.
var ChargeTypes = []string{ChargeCharge, ChargeDiscount}

// Bounds on charges.
const (
	MaxChargeDescriptionLen = 100
	MaxChargeAmount         = 10_000_000 // satang (100,000 THB), as a month's rent
)

// PrefixCharge is the prefix of a charge's ID.
const PrefixCharge = "chg"

// Charge is a room's other charge or discount, once in a month or every
// month from one, as the API shows it.
type Charge struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	RoomID      string  `json:"room_id"`
	PropertyID  string  `json:"property_id"`
	Type        string  `json:"type"`
	Description string  `json:"description"`
	Amount      int64   `json:"amount"`
	Currency    string  `json:"currency"`
	Recurring   bool    `json:"recurring"`
	Month       string  `json:"month"`
	EndsMonth   *string `json:"ends_month"`
	CreatedAt   Time    `json:"created_at"`
	UpdatedAt   Time    `json:"updated_at"`
}

// ChargeChange holds a charge's create body.
type ChargeChange struct {
	Type        Optional[string]
	Description Optional[string]
	Amount      Optional[int64]
	Recurring   Optional[bool]
	Month       Optional[string]
	EndsMonth   Optional[string]
}

// NewCharge validates a create body for a room: a description of 1 to 100
// characters, an amount above zero, a month; a type (default charge) and
// recurring (default false); an ends_month, only for a recurring charge
// and not before its month. Every refusal is 400 naming the field.
func NewCharge(room Room, c ChargeChange) (Charge, error) {
	ch := Charge{Object: "charge", RoomID: room.ID, PropertyID: room.PropertyID, Type: ChargeCharge, Currency: Currency}
	if c.Type.Set {
		if c.Type.Null || !slices.Contains(ChargeTypes, c.Type.Value) {
			return Charge{}, Invalid("type", "type must be one of %v.", ChargeTypes)
		}
		ch.Type = c.Type.Value
	}
	if !c.Description.Set {
		return Charge{}, Missing("description")
	}
	if err := checkText("description", c.Description, 1, MaxChargeDescriptionLen); err != nil {
		return Charge{}, err
	}
	ch.Description = c.Description.Value
	if !c.Amount.Set {
		return Charge{}, Missing("amount")
	}
	if c.Amount.Null || c.Amount.Value <= 0 || c.Amount.Value > MaxChargeAmount {
		return Charge{}, Invalid("amount", "amount must be satang above 0 and at most %d (a discount's amount is positive too).", MaxChargeAmount)
	}
	ch.Amount = c.Amount.Value
	if c.Recurring.Set {
		if c.Recurring.Null {
			return Charge{}, Invalid("recurring", "recurring must be true or false.")
		}
		ch.Recurring = c.Recurring.Value
	}
	if !c.Month.Set || c.Month.Null {
		return Charge{}, Missing("month")
	}
	month, err := ParseMonth("month", c.Month.Value)
	if err != nil {
		return Charge{}, err
	}
	ch.Month = month
	if c.EndsMonth.Set && !c.EndsMonth.Null {
		ends, err := ParseMonth("ends_month", c.EndsMonth.Value)
		if err != nil {
			return Charge{}, err
		}
		if !ch.Recurring {
			return Charge{}, Invalid("ends_month", "Only a recurring charge has an ends_month; a one-off is billed in its month only.")
		}
		if ends < ch.Month {
			return Charge{}, Invalid("ends_month", "ends_month (%s) must not be before month (%s).", ends, ch.Month)
		}
		ch.EndsMonth = &ends
	}
	return ch, nil
}

// ActiveIn reports whether the charge belongs on a bill of month: a
// one-off in its month, a recurring charge from its month to its
// ends_month (with none, on and on).
func (c Charge) ActiveIn(month string) bool {
	if !c.Recurring {
		return month == c.Month
	}
	return month >= c.Month && (c.EndsMonth == nil || month <= *c.EndsMonth)
}

// ChargesFor are the charges a bill of a room's month takes, of charges
// (those of the room active in the month), given the room's other bills
// of the month: every recurring one, which each tenant billed for the
// month pays, and each one-off that none of the others carries, so that
// a one-off is billed once, on the first bill that takes it.
func ChargesFor(charges []Charge, others []RoomBill) []Charge {
	if len(others) == 0 {
		return charges
	}
	out := make([]Charge, 0, len(charges))
	for _, c := range charges {
		if c.Recurring || !slices.ContainsFunc(others, func(b RoomBill) bool { return slices.Contains(b.ChargeIDs, c.ID) }) {
			out = append(out, c)
		}
	}
	return out
}

// BilledOn reports whether the bill's lines carry the charge.
func (c Charge) BilledOn(b Bill) bool {
	return slices.ContainsFunc(b.Lines, func(l Line) bool { return l.ChargeID == c.ID })
}

// Remove decides what deleting the charge does, given the months of the
// room's bills past draft (issued, overdue, paid) that carry it: none, and
// it is deleted (ended false); a recurring one ends instead, its
// ends_month the last of those months (ended true); a one-off is 409
// charge_billed, since a tenant has seen it on a bill.
func (c *Charge) Remove(billedMonths []string) (ended bool, err error) {
	if len(billedMonths) == 0 {
		return false, nil
	}
	if !c.Recurring {
		return false, Conflict("charge_billed", "Charge %s is on the bill of %s, which is no longer a draft; it can no longer be deleted.", c.ID, c.Month)
	}
	last := slices.Max(billedMonths)
	c.EndsMonth = &last
	return true, nil
}
