package rental

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Quantity is a meter value or usage in thousandths of a unit (kWh or m³).
// Meters show at most three decimals, and fixed point keeps the arithmetic
// exact: no float noise can tip a bill's rounding.
type Quantity int64

// MaxQuantity bounds meter values (below ten million units).
const MaxQuantity Quantity = 10_000_000_000 - 1

// ParseQuantity reads a JSON number of at most three decimals: 0 or a
// whole number of up to seven digits without a leading zero, then
// optionally a point and one to three digits. A fraction is padded to
// thousandths ("1.5" is 1500).
func ParseQuantity(param, s string) (Quantity, error) {
	whole, frac, point := strings.Cut(s, ".")
	ok := len(whole) >= 1 && len(whole) <= 7 && (whole[0] != '0' || len(whole) == 1) &&
		(!point || len(frac) >= 1 && len(frac) <= 3)
	var q Quantity
	for i := 0; ok && i < len(whole)+3; i++ {
		c := byte('0')
		switch {
		case i < len(whole):
			c = whole[i]
		case i-len(whole) < len(frac):
			c = frac[i-len(whole)]
		}
		ok = c >= '0' && c <= '9'
		q = q*10 + Quantity(c-'0')
	}
	if !ok {
		return 0, Invalid(param, "%s must be a number from 0 to 9999999.999 with at most three decimals.", param)
	}
	return q, nil
}

// MarshalJSON writes the value as a plain JSON number (1234.5).
func (q Quantity) MarshalJSON() ([]byte, error) {
	return q.appendTo(make([]byte, 0, 16)), nil
}

// String writes the value as a decimal with up to three places (1234.5).
func (q Quantity) String() string { return string(q.appendTo(nil)) }

func (q Quantity) appendTo(b []byte) []byte {
	v := uint64(q)
	if q < 0 {
		b, v = append(b, '-'), -v
	}
	b = strconv.AppendUint(b, v/1000, 10)
	if f := v % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}
	return b
}

// Amount is usage × rate in satang, rounded half up to a whole satang.
func (q Quantity) Amount(rate int64) int64 {
	return (int64(q)*rate + 500) / 1000
}

// monthPattern is YYYY-MM.
var monthPattern = regexp.MustCompile(`^[0-9]{4}-(0[1-9]|1[0-2])$`)

// ParseMonth checks a YYYY-MM month.
func ParseMonth(param, s string) (string, error) {
	if !monthPattern.MatchString(s) || s < "2000-01" || s > "2999-12" {
		return "", Invalid(param, "%s must be a month written YYYY-MM.", param)
	}
	return s, nil
}

// ReadingPart is one meter's part of a monthly reading.
type ReadingPart struct {
	Previous Quantity `json:"previous"`
	Current  Quantity `json:"current"`
	Usage    Quantity `json:"usage"`
	Rate     int64    `json:"rate"`
	Rollover bool     `json:"rollover"`
}

// WaterPart is the water meter's part, with the flat amount charged instead
// of usage when the property bills water flat.
type WaterPart struct {
	ReadingPart
	Billing    string `json:"billing"`
	FlatAmount *int64 `json:"flat_amount"`
}

// Reading is one room's meter readings for one month, with the property's
// rates as they were when the month was first recorded.
type Reading struct {
	ID          string      `json:"id"`
	Object      string      `json:"object"`
	RoomID      string      `json:"room_id"`
	PropertyID  string      `json:"property_id"`
	Month       string      `json:"month"`
	Currency    string      `json:"currency"`
	Electricity ReadingPart `json:"electricity"`
	Water       WaterPart   `json:"water"`
	Flags       UsageFlags  `json:"flags"`
	BillID      *string     `json:"bill_id"`
	CreatedAt   Time        `json:"created_at"`
	UpdatedAt   Time        `json:"updated_at"`
}

// unmetered is the reading as a later bill of its month takes it: the
// rates, with no usage and no flat water amount, which the month's first
// bill carries (NewBill).
func (r Reading) unmetered() Reading {
	r.Electricity.Usage, r.Water.Usage, r.Water.FlatAmount = 0, 0, nil
	return r
}

// PartInput is one part of a reading body.
type PartInput struct {
	Set      bool
	Previous Optional[Quantity]
	Current  Optional[Quantity]
	Rollover Optional[bool]
}

// Measure computes a part from its input and the default previous value
// (the room's last reading, or 0). A current below the previous is refused
// unless the previous was given explicitly with rollover: the meter passed
// its maximum (9999, or 99999 for a five-digit meter) and started again.
func Measure(param string, in PartInput, defaultPrevious Quantity, rate int64) (ReadingPart, error) {
	if !in.Current.Set || in.Current.Null {
		return ReadingPart{}, Missing(param + ".current")
	}
	p := ReadingPart{Previous: defaultPrevious, Current: in.Current.Value, Rate: rate}
	if in.Previous.Set && !in.Previous.Null {
		p.Previous = in.Previous.Value
	}
	p.Rollover = in.Rollover.Set && in.Rollover.Value
	if p.Rollover && !(in.Previous.Set && !in.Previous.Null) {
		return ReadingPart{}, Invalid(param+".rollover", "A rollover needs the previous value given explicitly in %s.previous.", param)
	}
	switch {
	case p.Rollover && p.Current >= p.Previous:
		return ReadingPart{}, Invalid(param+".rollover", "rollover is for a current value below the previous one.")
	case p.Rollover && p.Previous >= 100_000_000:
		return ReadingPart{}, Invalid(param+".previous", "A rollover is possible only on meters of up to five digits.")
	case !p.Rollover && p.Current < p.Previous:
		return ReadingPart{}, Invalid(param+".current",
			"%s.current (%s) is below the previous value (%s); if the meter wrapped past its maximum, send %s.previous with rollover: true.",
			param, p.Current, p.Previous, param)
	}
	p.Usage = Usage(p.Previous, p.Current, p.Rollover)
	return p, nil
}

// Usage is what a meter counted from previous to current. Across a
// rollover the meter passed its maximum (9999, or 99999 on a five-digit
// meter) and started again from zero.
func Usage(previous, current Quantity, rollover bool) Quantity {
	if !rollover {
		return current - previous
	}
	return rolloverSpan(previous) - previous + current
}

// rolloverSpan is how many units a meter counts before it starts again:
// 10,000 on a four-digit meter (the previous value is below 10000), else
// 100,000.
func rolloverSpan(previous Quantity) Quantity {
	if previous < 10_000_000 {
		return 10_000_000
	}
	return 100_000_000
}

// Meter kinds, one meter of each per room.
const (
	MeterElectricity = "electricity"
	MeterWater       = "water"
)

// Meter is one of a room's two meters, with its latest recorded value.
type Meter struct {
	ID         string    `json:"id"`
	Object     string    `json:"object"`
	RoomID     string    `json:"room_id"`
	PropertyID string    `json:"property_id"`
	Kind       string    `json:"kind"`
	Unit       string    `json:"unit"`
	LastValue  *Quantity `json:"last_value"`
	LastMonth  *string   `json:"last_month"`
	CreatedAt  Time      `json:"created_at"`
	UpdatedAt  Time      `json:"updated_at"`
}

// ReadingExists is 409 resource_exists for a room's month that has its
// reading (id, when known).
func ReadingExists(room, month, id string) *Error {
	return Exists(id, "A reading for room %s in %s exists already.", room, month)
}

// ReadingSource is what a month's reading is made from: the room (whose
// status says whether a tenant lives there), its property (whose current
// rates and water billing the reading keeps: later changes do not touch
// it), the room's readings and the meter values sent.
type ReadingSource struct {
	Room     Room
	Property Property
	// Readings are the room's readings; those that count are the month's
	// own (it exists already), the latest before it (where the meters
	// start from) and those of the months its flags look back on (see
	// FlagsFrom). Others may be there too; only their IDs, months and
	// meter parts are read.
	Readings    []Reading
	Month       string
	Electricity PartInput
	Water       PartInput
}

// NewReading records a room's meters for a month at now. A meter's
// previous value, unless sent, is its current value in the latest reading
// before the month, or 0 for a room never read. A month that has its
// reading is 409 resource_exists naming it. Its flags judge its usage
// against the room's readings before it (see Flag).
func NewReading(src ReadingSource, now time.Time) (Reading, error) {
	var ePrev, wPrev Quantity
	var latest *Reading
	for i := range src.Readings {
		l := &src.Readings[i]
		if l.Month == src.Month {
			return Reading{}, ReadingExists(src.Room.Number, src.Month, l.ID)
		}
		if l.Month < src.Month && (latest == nil || l.Month > latest.Month) {
			latest = l
		}
	}
	if latest != nil {
		ePrev, wPrev = latest.Electricity.Current, latest.Water.Current
	}
	at := Time{Time: now}
	r := Reading{ID: NewID(PrefixReading), Object: "meter_reading", RoomID: src.Room.ID, PropertyID: src.Room.PropertyID,
		Month: src.Month, Currency: Currency, CreatedAt: at, UpdatedAt: at}
	var err error
	if r.Electricity, err = Measure("electricity", src.Electricity, ePrev, src.Property.ElectricityRate); err != nil {
		return Reading{}, err
	}
	if r.Water.ReadingPart, err = Measure("water", src.Water, wPrev, src.Property.WaterRate); err != nil {
		return Reading{}, err
	}
	r.Water.Billing, r.Water.FlatAmount = src.Property.WaterBilling, src.Property.WaterFlatAmount
	r.Flags = Flag(r, src.Readings, src.Room.Status == RoomOccupied)
	return r, nil
}

// Usage flags: a reading's usage that a landlord may want to look at
// before billing it (a leak, a meter misread, a tenant gone without
// notice).
const (
	FlagUsageHigh = "usage_high"
	FlagUsageZero = "usage_zero"
)

// UsageFlags are a reading's flags, in the order of the constants above.
// None is written [] (never null), so clients can test for an empty list.
type UsageFlags []string

// MarshalJSON writes the flags, [] when there are none.
func (f UsageFlags) MarshalJSON() ([]byte, error) {
	if f == nil {
		f = UsageFlags{}
	}
	return json.Marshal([]string(f))
}

// flagMonths is how many months before a reading's own its usage is judged
// against, and flagBasis how many readings of those months a judgment of
// high usage needs.
const (
	flagMonths = 6
	flagBasis  = 3
)

// FlagsFrom is the first month whose reading counts for the flags of
// month's reading (see Flag): six months before it.
func FlagsFrom(month string) string {
	t, _ := time.Parse("2006-01", month)
	return t.AddDate(0, -flagMonths, 0).Format("2006-01")
}

// Flag judges a reading's usage. usage_high: electricity's or water's
// usage is above twice the median of that meter's usage in the room's
// readings of the six months before the reading's month, when there are
// at least three of them (each meter against its own median; exactly
// twice is not high). usage_zero: the room is occupied (a tenant lives
// there) and either meter counted nothing. The water meter is judged
// whatever the property's water billing: a flat-billed room's meter that
// did not move is zero usage too. earlier may hold any readings of the
// room, r's own month included: only those of the six months before count.
func Flag(r Reading, earlier []Reading, occupied bool) UsageFlags {
	from := FlagsFrom(r.Month)
	var e, w []Quantity
	for _, p := range earlier {
		if p.Month >= from && p.Month < r.Month {
			e, w = append(e, p.Electricity.Usage), append(w, p.Water.Usage)
		}
	}
	flags := UsageFlags{}
	if len(e) >= flagBasis && (r.Electricity.Usage > twiceMedian(e) || r.Water.Usage > twiceMedian(w)) {
		flags = append(flags, FlagUsageHigh)
	}
	if occupied && (r.Electricity.Usage == 0 || r.Water.Usage == 0) {
		flags = append(flags, FlagUsageZero)
	}
	return flags
}

// twiceMedian is twice the median of usages, exactly: twice the middle
// one of an odd count, the sum of the two middle ones of an even count (a
// median that would fall between two thousandths is never rounded).
func twiceMedian(usages []Quantity) Quantity {
	slices.Sort(usages)
	n := len(usages)
	if n%2 == 1 {
		return 2 * usages[n/2]
	}
	return usages[n/2-1] + usages[n/2]
}

// MaxReadingBatch is the most readings one batch records: a whole
// property's month in one request, well within the body's 1 MB.
const MaxReadingBatch = 500

// CheckReadingBatch refuses a batch whose readings are not an array of 1
// to MaxReadingBatch items (400 invalid_parameter naming readings); each
// item is then judged on its own.
func CheckReadingBatch(array bool, items int) error {
	if !array || items < 1 || items > MaxReadingBatch {
		return Invalid("readings", "readings must be an array of 1 to %d reading create bodies.", MaxReadingBatch)
	}
	return nil
}

// Correct changes the reading's meter values at now, at the rates it
// recorded. A part not sent stays as it is; in a part sent, a current
// value or rollover not sent keeps the recorded one, and a previous value
// not sent is the recorded one (which, with rollover, counts as given).
// A refused correction changes nothing. Whether the month's bill still
// allows it is Bill.Correct's to say.
func (r *Reading) Correct(electricity, water PartInput, now time.Time) error {
	e, err := correctPart("electricity", r.Electricity, electricity)
	if err != nil {
		return err
	}
	w, err := correctPart("water", r.Water.ReadingPart, water)
	if err != nil {
		return err
	}
	r.Electricity, r.Water.ReadingPart, r.UpdatedAt = e, w, Time{Time: now}
	return nil
}

// correctPart is a recorded part after a correction's input for it.
func correctPart(param string, part ReadingPart, in PartInput) (ReadingPart, error) {
	if !in.Set {
		return part, nil
	}
	if !in.Current.Set {
		in.Current = Of(part.Current)
	}
	if !in.Rollover.Set {
		in.Rollover = Of(part.Rollover)
	}
	if !in.Previous.Set && in.Rollover.Value {
		in.Previous = Of(part.Previous) // the recorded previous counts as given
	}
	return Measure(param, in, part.Previous, part.Rate)
}
