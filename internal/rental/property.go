package rental

import (
	"slices"
)

// Currency is the one currency of the service; every object carrying money
// names it, so amounts are never ambiguous.
const Currency = "THB"

// Water billing methods. Metered water is charged per cubic metre at
// WaterRate; the flat methods charge WaterFlatAmount per room or per
// occupant each month.
const (
	WaterMetered       = "metered"
	WaterFlatPerRoom   = "flat_per_room"
	WaterFlatPerPerson = "flat_per_person"
)

// WaterBillings lists the accepted water_billing values.
var WaterBillings = []string{WaterMetered, WaterFlatPerRoom, WaterFlatPerPerson}

// Bounds on property values: wide enough for any real dormitory, narrow
// enough that arithmetic on them cannot overflow.
const (
	MaxNameLen     = 200
	MaxAddressLen  = 500
	MaxRate        = 1_000_000   // satang per unit (10,000 THB)
	MaxFlatAmount  = 100_000_000 // satang per month (1,000,000 THB)
	DefaultDueDay  = 5
	MaxDueDay      = 31
	minDueDay      = 1
	objectProperty = "property"
)

// Property is a building of one landlord, as the API shows it.
type Property struct {
	ID              string `json:"id"`
	Object          string `json:"object"`
	Name            string `json:"name"`
	Address         string `json:"address"`
	ElectricityRate int64  `json:"electricity_rate"`
	WaterBilling    string `json:"water_billing"`
	WaterRate       int64  `json:"water_rate"`
	WaterFlatAmount *int64 `json:"water_flat_amount"`
	DueDay          int64  `json:"due_day"`
	RoomCount       int64  `json:"room_count"`
	Currency        string `json:"currency"`
	CreatedAt       Time   `json:"created_at"`
	UpdatedAt       Time   `json:"updated_at"`
	// Reminders is the schedule of payment reminders; nil when off.
	Reminders *Reminders `json:"reminders"`
	// LateFee is the fine of the property's unpaid bills (nil: none); a
	// bill takes the rule in force when it is issued.
	LateFee *LateFee `json:"late_fee"`
	// Proration is how the rent of a month a tenant moved in or out of is
	// billed: ProrationNone (the whole rent) or ProrationDaily.
	Proration string `json:"proration"`
}

// Optional is a request field that may be absent, present, or (for
// nullable fields) present as null.
type Optional[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// Of returns a present, non-null Optional.
func Of[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: v} }

// PropertyChange holds the fields of a property create or update body;
// absent fields are left as they are (or take their defaults on create).
type PropertyChange struct {
	Name            Optional[string]
	Address         Optional[string]
	ElectricityRate Optional[int64]
	WaterBilling    Optional[string]
	WaterRate       Optional[int64]
	WaterFlatAmount Optional[int64]
	DueDay          Optional[int64]
	// Reminders replaces the schedule; null turns reminders off.
	Reminders Optional[ReminderChange]
	// LateFee replaces the whole rule; null removes it.
	LateFee Optional[LateFeeChange]
	// Proration is none or daily.
	Proration Optional[string]
}

// NewProperty validates a create body and returns the property it describes
// (without ID or times, which the store assigns).
func NewProperty(c PropertyChange) (Property, error) {
	if !c.Name.Set {
		return Property{}, Missing("name")
	}
	if !c.ElectricityRate.Set {
		return Property{}, Missing("electricity_rate")
	}
	p := Property{Object: objectProperty, WaterBilling: WaterMetered, DueDay: DefaultDueDay, Currency: Currency, Proration: ProrationNone}
	if err := p.Apply(c); err != nil {
		return Property{}, err
	}
	if p.WaterBilling == WaterMetered && !c.WaterRate.Set {
		return Property{}, Missing("water_rate")
	}
	return p, nil
}

// Apply validates a change and applies it. Only the fields present change;
// the result must still be consistent: metered water has no flat amount, a
// flat method needs one.
func (p *Property) Apply(c PropertyChange) error {
	next := *p
	if c.Name.Set {
		if err := checkText("name", c.Name, 1, MaxNameLen); err != nil {
			return err
		}
		next.Name = c.Name.Value
	}
	if c.Address.Set {
		if err := checkText("address", c.Address, 0, MaxAddressLen); err != nil {
			return err
		}
		next.Address = c.Address.Value
	}
	if c.ElectricityRate.Set {
		if err := checkRange("electricity_rate", c.ElectricityRate, 0, MaxRate); err != nil {
			return err
		}
		next.ElectricityRate = c.ElectricityRate.Value
	}
	if c.WaterRate.Set {
		if err := checkRange("water_rate", c.WaterRate, 0, MaxRate); err != nil {
			return err
		}
		next.WaterRate = c.WaterRate.Value
	}
	if c.DueDay.Set {
		if err := checkRange("due_day", c.DueDay, minDueDay, MaxDueDay); err != nil {
			return err
		}
		next.DueDay = c.DueDay.Value
	}
	if c.Reminders.Set {
		next.Reminders = nil
		if !c.Reminders.Null {
			r, err := NewReminders(c.Reminders.Value)
			if err != nil {
				return err
			}
			next.Reminders = r
		}
	}
	if c.WaterBilling.Set {
		if c.WaterBilling.Null || !slices.Contains(WaterBillings, c.WaterBilling.Value) {
			return Invalid("water_billing", "water_billing must be one of metered, flat_per_room, flat_per_person.")
		}
		next.WaterBilling = c.WaterBilling.Value
	}
	if c.WaterFlatAmount.Set {
		switch {
		case c.WaterFlatAmount.Null:
			next.WaterFlatAmount = nil
		case c.WaterFlatAmount.Value < 0 || c.WaterFlatAmount.Value > MaxFlatAmount:
			return Invalid("water_flat_amount", "water_flat_amount must be between 0 and %d satang.", MaxFlatAmount)
		default:
			v := c.WaterFlatAmount.Value
			next.WaterFlatAmount = &v
		}
	}
	if c.LateFee.Set {
		next.LateFee = nil
		if !c.LateFee.Null {
			f, err := NewLateFee(c.LateFee.Value)
			if err != nil {
				return err
			}
			next.LateFee = f
		}
	}
	if c.Proration.Set {
		if err := CheckProration(c.Proration); err != nil {
			return err
		}
		next.Proration = c.Proration.Value
	}
	if next.WaterBilling == WaterMetered {
		if c.WaterFlatAmount.Set && !c.WaterFlatAmount.Null {
			return Invalid("water_flat_amount", "water_flat_amount must be null when water_billing is metered.")
		}
		next.WaterFlatAmount = nil
	} else if next.WaterFlatAmount == nil {
		if c.WaterFlatAmount.Set {
			return Invalid("water_flat_amount", "water_flat_amount is required when water_billing is %s.", next.WaterBilling)
		}
		return Missing("water_flat_amount")
	}
	*p = next
	return nil
}

func checkRange(param string, v Optional[int64], lo, hi int64) error {
	if v.Null {
		return Invalid(param, "%s must be an integer, not null.", param)
	}
	if v.Value < lo || v.Value > hi {
		return Invalid(param, "%s must be between %d and %d.", param, lo, hi)
	}
	return nil
}

// Delete checks that the property may be deleted: only once it has no
// rooms (409 property_not_empty).
func (p *Property) Delete() error {
	if p.RoomCount > 0 {
		return Conflict("property_not_empty", "Property %s has %d rooms; delete its rooms first.", p.ID, p.RoomCount)
	}
	return nil
}
