package rental

import (
	"fmt"
	"time"
)

// Bill states. A bill is drafted or issued from a reading, becomes overdue
// the day after its due date unpaid, and paid when confirmed payments cover
// its total.
const (
	BillDraft   = "draft"
	BillIssued  = "issued"
	BillPaid    = "paid"
	BillOverdue = "overdue"
)

// BillStatuses lists the bill states.
var BillStatuses = []string{BillDraft, BillIssued, BillPaid, BillOverdue}

// BillElectricity is the electricity line of a bill.
type BillElectricity struct {
	Usage  Quantity `json:"usage"`
	Rate   int64    `json:"rate"`
	Amount int64    `json:"amount"`
}

// BillWater is the water line of a bill.
type BillWater struct {
	Usage     Quantity `json:"usage"`
	Rate      int64    `json:"rate"`
	Amount    int64    `json:"amount"`
	Billing   string   `json:"billing"`
	Occupants int64    `json:"occupants"`
}

// Bill is one room's bill for one month, as the API shows it.
type Bill struct {
	ID          string          `json:"id"`
	Object      string          `json:"object"`
	RoomID      string          `json:"room_id"`
	PropertyID  string          `json:"property_id"`
	TenantID    *string         `json:"tenant_id"`
	Month       string          `json:"month"`
	Status      string          `json:"status"`
	Currency    string          `json:"currency"`
	Rent        int64           `json:"rent"`
	Electricity BillElectricity `json:"electricity"`
	Water       BillWater       `json:"water"`
	Total       int64           `json:"total"`
	AmountPaid  int64           `json:"amount_paid"`
	DueDate     string          `json:"due_date"`
	IssuedAt    *Time           `json:"issued_at"`
	PaidAt      *Time           `json:"paid_at"`
	OverdueAt   *Time           `json:"overdue_at"`
	ReadingID   string          `json:"reading_id"`
	CreatedAt   Time            `json:"created_at"`
	UpdatedAt   Time            `json:"updated_at"`
	// Receipt is the paid bill's receipt; null until the bill is paid.
	Receipt *Receipt `json:"receipt"`
	// Lines are the bill's amounts, item by item: the total is their sum.
	Lines []Line `json:"lines"`
	// Warnings are BillWarnings, derived from IssuedAt and DueDate.
	Warnings []string `json:"warnings"`
	// LateFee is the property's late-fee rule as it was when the bill was
	// issued (null for none, and for a draft): the rule its late_fee line
	// grows by.
	LateFee *LateFee `json:"late_fee"`
}

// Price sets the bill's amounts from its rent and a reading, at the rates
// the reading recorded: electricity is usage × rate; water is usage × rate
// when metered, the flat amount per room, or the flat amount per occupant;
// each rounded half up to a whole satang. Its other lines stay, and the
// total is the sum of the lines.
func (b *Bill) Price(r Reading) {
	b.Electricity = BillElectricity{Usage: r.Electricity.Usage, Rate: r.Electricity.Rate, Amount: r.Electricity.Usage.Amount(r.Electricity.Rate)}
	occupants := max(b.Water.Occupants, 1)
	b.Water = BillWater{Usage: r.Water.Usage, Rate: r.Water.Rate, Billing: r.Water.Billing, Occupants: occupants}
	switch r.Water.Billing {
	case WaterMetered:
		b.Water.Amount = r.Water.Usage.Amount(r.Water.Rate)
	case WaterFlatPerRoom:
		b.Water.Amount = deref(r.Water.FlatAmount)
	case WaterFlatPerPerson:
		b.Water.Amount = deref(r.Water.FlatAmount) * occupants
	}
	b.sum()
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// DueDate is the due day of the month after the bill's month, clamped to
// that month's length (due day 31 in February is the 28th or 29th).
func DueDate(month string, dueDay int64) string {
	t, _ := time.Parse("2006-01", month)
	next := t.AddDate(0, 1, 0)
	last := next.AddDate(0, 1, -1).Day()
	return fmt.Sprintf("%s-%02d", next.Format("2006-01"), min(int(dueDay), last))
}

// Payable reports whether a tenant can still pay the bill: it is issued or
// overdue and something is left to pay (a QR never asks for nothing).
func (b *Bill) Payable() bool {
	return b.awaitingPayment() && b.AmountPaid < b.Total
}

// ClosesLinks reports whether the bill's payment links close: once it is
// paid, none of its pages takes money again.
func (b *Bill) ClosesLinks() bool { return b.Status == BillPaid }

// awaitingPayment reports whether the bill is out with the tenant: issued
// or overdue, the states in which money is expected.
func (b *Bill) awaitingPayment() bool { return b.Status == BillIssued || b.Status == BillOverdue }

// Settle marks an issued or overdue bill paid at now once the money
// received covers its total, whether a payment raised amount_paid or a
// corrected reading lowered the total. amount_paid keeps counting every
// confirmed satang, so it may exceed the total (an overpayment to refund).
func (b *Bill) Settle(now time.Time) {
	if b.awaitingPayment() && b.AmountPaid >= b.Total {
		at := Time{Time: now}
		b.Status, b.PaidAt = BillPaid, &at
	}
}

// BillSource is what a month's bill is made from: the room, the property's
// due day, the month's reading (nil when none is recorded) and the tenant
// living there (nil when the room is empty).
type BillSource struct {
	Room    Room
	DueDay  int64
	Reading *Reading
	Tenant  *Tenant
	Month   string
	// Charges are the room's charges and discounts; those active in the
	// month go on the bill.
	Charges []Charge
	// Issue makes the bill issued at once rather than a draft.
	Issue bool
	// LateFee is the property's late-fee rule, which an issued bill takes.
	LateFee *LateFee
	// Proration is the property's: with daily, the rent of a month the
	// tenant moved in or out of is prorated (MonthRent).
	Proration string
	// Bills are the room's bills of the month made already, the first
	// first: a tenant who moved out during the month has its final bill,
	// and the tenant who came after may still be billed (NewBill).
	Bills []RoomBill
}

// RoomBill is a bill a room's month has already: one per tenant.
type RoomBill struct {
	ID       string
	TenantID *string
	// ChargeIDs are the charges its lines carry.
	ChargeIDs []string
}

// billedTo reports whether the month's bill m is the tenant's (t nil: a
// bill of the room with nobody in it).
func (m RoomBill) billedTo(t *Tenant) bool {
	if m.TenantID == nil || t == nil {
		return m.TenantID == nil && t == nil
	}
	return *m.TenantID == t.ID
}

// NewBill makes the bill of a room's month from its reading: the room's
// rent and the reading's usage at the rates it recorded, with the room's
// charges and discounts of the month (Charge), due on the
// property's due day of the next month; with daily proration, the rent
// of a month the tenant moved in or out of is the days' share. A month
// without a reading is 409 reading_required; a month billed already to
// the tenant billed (src.Tenant) is 409 resource_exists.
//
// A month billed to another tenant already (the final bill of one who
// moved out during it) is billed again to the one who moved in after:
// the newcomer's days of rent, the month's recurring charges and the
// one-offs no bill carries yet (ChargesFor), and no usage. The
// reading's usage is the first bill's, and the newcomer's from the
// move-out's reading on is on the next month's reading, whose previous
// values that reading is.
func NewBill(src BillSource, now time.Time) (Bill, error) {
	if src.Reading == nil {
		return Bill{}, Conflict("reading_required", "Room %s has no meter reading for %s; record the month's reading first.", src.Room.Number, src.Month)
	}
	reading := *src.Reading
	for _, m := range src.Bills {
		if m.billedTo(src.Tenant) {
			return Bill{}, BillExists(src.Room.Number, src.Month, m.ID)
		}
		reading = reading.unmetered()
	}
	at := Time{Time: now}
	b := Bill{ID: NewID(PrefixBill), Object: "bill", RoomID: src.Room.ID, PropertyID: src.Room.PropertyID, Month: src.Month,
		Status: BillDraft, Currency: Currency, Rent: src.Room.MonthlyRent, ReadingID: src.Reading.ID,
		DueDate: DueDate(src.Month, src.DueDay), CreatedAt: at, UpdatedAt: at}
	b.Water.Occupants = 1
	var rent string
	b.Rent, rent = MonthRent(src.Month, src.Room.MonthlyRent, src.Proration, src.Tenant)
	b.Lines = []Line{{Type: LineRent, Description: rent}}
	if src.Tenant != nil {
		b.TenantID, b.Water.Occupants = &src.Tenant.ID, src.Tenant.Occupants
	}
	if src.Issue {
		b.Status, b.IssuedAt, b.LateFee = BillIssued, &at, src.LateFee.clone()
	}
	b.Warnings = BillWarnings(b.IssuedAt, b.DueDate)
	b.Price(reading)
	b.Charge(ChargesFor(src.Charges, src.Bills))
	return b, nil
}

// BillExists is 409 resource_exists for a room's month that has its bill
// (id, when known).
func BillExists(room, month, id string) *Error {
	return Exists(id, "Room %s is billed for %s already.", room, month)
}

// Issue moves a draft to issued at now, taking the property's late-fee
// rule in force (nil: none) as the bill's; any other state is 409
// invalid_state.
func (b *Bill) Issue(now time.Time, lateFee *LateFee) error {
	if b.Status != BillDraft {
		return Conflict("invalid_state", "Only a draft bill can be issued; this one is %s.", b.Status)
	}
	at := Time{Time: now}
	b.Status, b.IssuedAt, b.LateFee = BillIssued, &at, lateFee.clone()
	b.Warnings = BillWarnings(b.IssuedAt, b.DueDate)
	return nil
}

// Delete checks that the bill may be deleted: only a draft, which no
// tenant has seen; any other state is 409 invalid_state. later are the
// room's bills of the month made after it: the month's first bill carries
// its reading's usage, which a later one (a newcomer's) does not, so while
// one exists it is 409 invalid_state naming it, to be deleted first.
func (b *Bill) Delete(later []RoomBill) error {
	if b.Status != BillDraft {
		return Conflict("invalid_state", "Only a draft bill can be deleted; this one is %s.", b.Status)
	}
	if len(later) > 0 {
		e := Conflict("invalid_state", "Bill %s carries its month's usage, which the later bill %s of the same room and month does not: delete %s first.",
			b.ID, later[0].ID, later[0].ID)
		e.ResourceID = later[0].ID
		return e
	}
	return nil
}

// CheckPayable is nil when a tenant can be asked to pay the bill, else 409
// bill_not_payable saying why.
func (b *Bill) CheckPayable() error {
	if !b.Payable() {
		return Conflict("bill_not_payable", "Bill %s is %s with %d satang left to pay; only an issued or overdue bill with something owed can be paid.",
			b.ID, b.Status, max(b.Total-b.AmountPaid, 0))
	}
	return nil
}

// Correct checks that the bill's reading may still be corrected: not once
// the bill is paid (409 bill_already_paid, naming the bill).
func (b *Bill) Correct() error {
	if b.Status == BillPaid {
		e := Conflict("bill_already_paid", "The bill of %s is paid; its reading can no longer be corrected.", b.Month)
		e.ResourceID = b.ID
		return e
	}
	return nil
}

// Reprice recalculates the bill from a corrected reading, its status
// unchanged unless the money received now covers the new total.
func (b *Bill) Reprice(r Reading, now time.Time) {
	b.Price(r)
	b.Settle(now)
}

// Receive adds a confirmed payment's amount to what the bill has received,
// and settles it.
func (b *Bill) Receive(amount int64, now time.Time) {
	b.AmountPaid += amount
	b.Settle(now)
}
