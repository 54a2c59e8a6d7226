package rental

import (
	"strings"
	"testing"
	"time"
)

// bkk is a Bangkok time on a date, at hour.
func bkk(date string, hour int) time.Time {
	d, err := time.ParseInLocation(time.DateOnly, date, Bangkok)
	if err != nil {
		panic(err)
	}
	return d.Add(time.Duration(hour) * time.Hour).UTC()
}

// Days occupied across month lengths, leap February, in and out within a
// month, moves on the 1st and the last day, and Bangkok dates near
// midnight UTC.
func TestDaysOccupied(t *testing.T) {
	t.Parallel()
	at := func(date string) *time.Time { v := bkk(date, 10); return &v }
	for _, tc := range []struct {
		name            string
		month, in       string
		out             *time.Time
		days, monthDays int64
	}{
		{"in on the 17th of a 30-day month", "2026-11", "2026-11-17", nil, 14, 30},
		{"in on the 17th of a 31-day month", "2026-12", "2026-12-17", nil, 15, 31},
		{"in on the 1st", "2026-11", "2026-11-01", nil, 30, 30},
		{"in on the last day", "2026-11", "2026-11-30", nil, 1, 30},
		{"in on the 15th of February", "2026-02", "2026-02-15", nil, 14, 28},
		{"in on the 15th of a leap February", "2028-02", "2028-02-15", nil, 15, 29},
		{"a month after moving in", "2026-12", "2026-11-17", nil, 31, 31},
		{"a month before moving in", "2026-10", "2026-11-17", nil, 0, 31},
		{"out on the 10th", "2027-03", "2026-11-17", at("2027-03-10"), 9, 31},
		{"out on the 1st", "2027-03", "2026-11-17", at("2027-03-01"), 0, 31},
		{"out on the last day", "2027-03", "2026-11-17", at("2027-03-31"), 30, 31},
		{"out on the 1st of the next month", "2027-03", "2026-11-17", at("2027-04-01"), 31, 31},
		{"in and out within the month", "2026-11", "2026-11-05", at("2026-11-20"), 15, 30},
		{"in and out on one day", "2026-11", "2026-11-05", at("2026-11-05"), 0, 30},
		{"a month after moving out", "2027-04", "2026-11-17", at("2027-03-10"), 0, 30},
		{"out on leap day", "2028-02", "2027-01-01", at("2028-02-29"), 28, 29},
	} {
		days, monthDays := DaysOccupied(tc.month, bkk(tc.in, 10), tc.out)
		if days != tc.days || monthDays != tc.monthDays {
			t.Errorf("%s: %d of %d days, want %d of %d", tc.name, days, monthDays, tc.days, tc.monthDays)
		}
	}
	// 00:30 in Bangkok on the 17th is still the 16th in UTC: the date is Bangkok's.
	if days, _ := DaysOccupied("2026-11", bkk("2026-11-17", 0).Add(30*time.Minute), nil); days != 14 {
		t.Errorf("just after midnight in Bangkok: %d days, want 14", days)
	}
	out := bkk("2026-11-30", 23)
	if days, _ := DaysOccupied("2026-11", bkk("2026-11-01", 0), &out); days != 29 {
		t.Errorf("out late on the 30th: %d days, want 29", days)
	}
}

// Prorated rent is rounded half up to the satang.
func TestProrateRent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ rent, days, monthDays, want int64 }{
		{450000, 14, 30, 210000},
		{350000, 14, 30, 163333}, // 163333.33
		{350000, 15, 31, 169355}, // 169354.84
		{100000, 1, 8, 12500},
		{1, 1, 2, 1},             // 0.5 rounds up
		{3, 1, 2, 2},             // 1.5 rounds up
		{350000, 9, 31, 101613},  // 101612.90
		{500000, 14, 29, 241379}, // 241379.31
		{500000, 30, 30, 500000},
		{500000, 0, 30, 0},
	} {
		if got := ProrateRent(tc.rent, tc.days, tc.monthDays); got != tc.want {
			t.Errorf("ProrateRent(%d, %d, %d) = %d, want %d", tc.rent, tc.days, tc.monthDays, got, tc.want)
		}
	}
}

// The month's rent and its line's description: prorated only with daily
// proration, in a month lived in part.
func TestMonthRent(t *testing.T) {
	t.Parallel()
	out := Time{Time: bkk("2027-03-10", 9)}
	tenant := &Tenant{MovedInAt: Time{Time: bkk("2026-11-17", 9)}, MovedOutAt: &out}
	for _, tc := range []struct {
		name, month, proration string
		tenant                 *Tenant
		rent                   int64
		desc                   string
	}{
		{"moving-in month", "2026-11", ProrationDaily, tenant, 210000, "Rent (14 of 30 days)"},
		{"a full month", "2026-12", ProrationDaily, tenant, 450000, "Rent"},
		{"moving-out month", "2027-03", ProrationDaily, tenant, 130645, "Rent (9 of 31 days)"},
		{"no proration", "2026-11", ProrationNone, tenant, 450000, "Rent"},
		{"nobody", "2026-11", ProrationDaily, nil, 450000, "Rent"},
		{"a month before moving in (recorded late)", "2026-10", ProrationDaily, tenant, 450000, "Rent"},
	} {
		rent, desc := MonthRent(tc.month, 450000, tc.proration, tc.tenant)
		if rent != tc.rent || desc != tc.desc {
			t.Errorf("%s: %d %q, want %d %q", tc.name, rent, desc, tc.rent, tc.desc)
		}
	}
}

// A prorated bill: its rent field and line, kept through a charge added
// later.
func TestNewBillProrated(t *testing.T) {
	t.Parallel()
	tenant := &Tenant{ID: "tnt_a", Occupants: 1, MovedInAt: Time{Time: bkk("2026-11-17", 9)}}
	src := BillSource{Room: Room{ID: "room_a", MonthlyRent: 450000}, DueDay: 5, Month: "2026-11", Tenant: tenant, Proration: ProrationDaily,
		Reading: &Reading{ID: "mrd_a", Water: WaterPart{Billing: WaterMetered}}}
	b, err := NewBill(src, bkk("2026-11-30", 12))
	if err != nil {
		t.Fatal(err)
	}
	if b.Rent != 210000 || b.Lines[0].Description != "Rent (14 of 30 days)" || b.Lines[0].Amount != 210000 || b.Total != 210000 {
		t.Fatalf("prorated bill: rent %d, lines %+v, total %d", b.Rent, b.Lines, b.Total)
	}
	b.Charge([]Charge{{ID: "chg_a", Type: ChargeCharge, Description: "Internet", Amount: 30000, Month: "2026-11"}})
	if b.Lines[0].Description != "Rent (14 of 30 days)" || b.Total != 240000 {
		t.Fatalf("after a charge: %+v, total %d", b.Lines, b.Total)
	}
}

// A month billed to the tenant who left is billed again to the newcomer:
// prorated rent, recurring charges and one-offs not billed yet, no usage; billed to the tenant already (or,
// with nobody in the room, billed to nobody already), it is 409.
func TestNewBillAfterAFinalBill(t *testing.T) {
	t.Parallel()
	out := Time{Time: bkk("2027-03-10", 9)}
	old := &Tenant{ID: "tnt_old", Occupants: 1, MovedInAt: Time{Time: bkk("2026-11-17", 9)}, MovedOutAt: &out}
	next := &Tenant{ID: "tnt_new", Occupants: 2, MovedInAt: Time{Time: bkk("2027-03-11", 9)}}
	flat := int64(10000)
	reading := &Reading{ID: "mrd_a", Electricity: ReadingPart{Usage: 100, Rate: 800},
		Water: WaterPart{ReadingPart: ReadingPart{Usage: 5, Rate: 1800}, Billing: WaterFlatPerPerson, FlatAmount: &flat}}
	internet := []Charge{{ID: "chg_a", Type: ChargeCharge, Description: "Internet", Amount: 30000, Month: "2027-03", Recurring: true},
		{ID: "chg_b", Type: ChargeCharge, Description: "Key card", Amount: 5000, Month: "2027-03"}}
	src := func(t *Tenant, billed ...RoomBill) BillSource {
		return BillSource{Room: Room{ID: "room_a", Number: "401", MonthlyRent: 450000}, DueDay: 5, Month: "2027-03", Tenant: t,
			Proration: ProrationDaily, Reading: reading, Charges: internet, Bills: billed}
	}
	now := bkk("2027-03-31", 12)
	final, err := NewBill(src(old), now)
	if err != nil || final.Electricity.Amount == 0 || final.Total != 130645+final.Electricity.Amount+10000+30000+5000 {
		t.Fatalf("the final bill: %+v, %v", final.Lines, err)
	}
	// The key card is on the final bill: the newcomer pays the internet.
	b, err := NewBill(src(next, RoomBill{ID: final.ID, TenantID: &old.ID, ChargeIDs: []string{"chg_a", "chg_b"}}), now)
	if err != nil {
		t.Fatal(err)
	}
	if b.Rent != 304839 || b.Electricity.Usage != 0 || b.Electricity.Amount != 0 || b.Water.Usage != 0 || b.Water.Amount != 0 ||
		b.Total != 304839+30000 || *b.TenantID != "tnt_new" || b.ReadingID != "mrd_a" {
		t.Fatalf("the newcomer's bill: %+v, total %d", b.Lines, b.Total)
	}
	// A key card added after the final bill was made is the newcomer's.
	if b, err := NewBill(src(next, RoomBill{ID: final.ID, TenantID: &old.ID, ChargeIDs: []string{"chg_a"}}), now); err != nil || b.Total != 304839+30000+5000 {
		t.Fatalf("the newcomer's bill with the key card: %+v, %v", b.Lines, err)
	}
	// The final bill, a draft, carries the usage: the newcomer's goes first.
	draft := final
	draft.Status = BillDraft
	if err := draft.Delete([]RoomBill{{ID: b.ID}}); code(err) != "invalid_state" || err.(*Error).ResourceID != b.ID {
		t.Fatalf("deleting the first of two bills: %v", err)
	}
	if err := draft.Delete(nil); err != nil {
		t.Fatalf("deleting the month's only bill: %v", err)
	}
	for _, tc := range []struct {
		name   string
		tenant *Tenant
		billed []RoomBill
	}{
		{"the newcomer's again", next, []RoomBill{{ID: final.ID, TenantID: &old.ID}, {ID: b.ID, TenantID: &next.ID}}},
		{"the leaver's again", old, []RoomBill{{ID: final.ID, TenantID: &old.ID}}},
		{"nobody's again", nil, []RoomBill{{ID: "bill_x"}}},
	} {
		_, err := NewBill(src(tc.tenant, tc.billed...), now)
		if e, ok := AsError(err); !ok || e.Code != "resource_exists" {
			t.Errorf("%s: %v, want 409 resource_exists", tc.name, err)
		}
	}
}

// Who a month is billed to: the last to move in of those who lived there
// some day of it, else the tenant there now.
func TestBilledTenant(t *testing.T) {
	t.Parallel()
	out := Time{Time: bkk("2027-03-10", 9)}
	old := &Tenant{ID: "tnt_old", MovedInAt: Time{Time: bkk("2026-11-17", 9)}, MovedOutAt: &out}
	next := &Tenant{ID: "tnt_new", MovedInAt: Time{Time: bkk("2027-03-11", 9)}}
	for _, tc := range []struct {
		month   string
		tenants []*Tenant
		want    string
	}{
		{"2027-03", []*Tenant{old, next}, "tnt_new"},
		{"2027-03", []*Tenant{old}, "tnt_old"},
		{"2027-02", []*Tenant{old}, "tnt_old"},
		{"2027-04", []*Tenant{next}, "tnt_new"},
		{"2027-02", []*Tenant{next}, "tnt_new"}, // recorded late: the tenant there now
		{"2027-03", nil, ""},
	} {
		got := BilledTenant(tc.month, tc.tenants)
		if (got == nil && tc.want != "") || (got != nil && got.ID != tc.want) {
			t.Errorf("%s: %+v, want %s", tc.month, got, tc.want)
		}
	}
}

// Settlement figures: the refund and the amount due, never both, and the
// refund due 7 days after moving out (Bangkok date).
func TestSettle(t *testing.T) {
	t.Parallel()
	out := bkk("2027-03-10", 20)
	for _, tc := range []struct {
		name              string
		deposit           int64
		unpaid            []int64
		deductions        []int64
		refund, amountDue int64
	}{
		{"all back", 900000, nil, nil, 900000, 0},
		{"bills and deductions from the deposit", 900000, []int64{512345, 130645}, []int64{50000, 35000}, 172010, 0},
		{"exactly the deposit", 100000, []int64{60000}, []int64{40000}, 0, 0},
		{"more owed than the deposit", 100000, []int64{90000}, []int64{30000}, 0, 20000},
		{"no deposit", 0, []int64{12345}, nil, 0, 12345},
	} {
		var unpaid []UnpaidBill
		for _, u := range tc.unpaid {
			unpaid = append(unpaid, UnpaidBill{BillID: "bill_x", AmountDue: u})
		}
		var deductions []Deduction
		for _, d := range tc.deductions {
			deductions = append(deductions, Deduction{Description: "Damage", Amount: d})
		}
		s := Settle(&Tenant{ID: "tnt_a", Deposit: tc.deposit}, out, unpaid, deductions, out)
		if s.RefundAmount != tc.refund || s.AmountDue != tc.amountDue || s.Status != SettlementOpen || s.RefundDueDate != "2027-03-17" ||
			!strings.HasPrefix(s.ID, "stl_") || s.Currency != Currency {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
	late := bkk("2027-03-31", 23) // 16:00 UTC on the 31st: Bangkok's date counts
	if s := Settle(&Tenant{}, late, nil, nil, late); s.RefundDueDate != "2027-04-07" {
		t.Errorf("refund due %s, want 2027-04-07", s.RefundDueDate)
	}
	s := Settle(&Tenant{}, out, nil, nil, out)
	if err := s.Close(out); err != nil || s.Status != SettlementClosed || s.ClosedAt == nil {
		t.Fatalf("close: %v %+v", err, s)
	}
	if err := s.Close(out); err == nil || err.(*Error).Code != "invalid_state" {
		t.Fatalf("closing twice: %v", err)
	}
}

// What the tenant's bills still ask: issued and overdue bills' total −
// amount_paid.
func TestUnpaidBills(t *testing.T) {
	t.Parallel()
	got := UnpaidBills([]Bill{
		{ID: "bill_a", Status: BillPaid, Total: 100, AmountPaid: 100},
		{ID: "bill_b", Status: BillOverdue, Total: 500, AmountPaid: 200},
		{ID: "bill_c", Status: BillDraft, Total: 400},
		{ID: "bill_d", Status: BillIssued, Total: 300},
	})
	if len(got) != 2 || got[0] != (UnpaidBill{"bill_b", 300}) || got[1] != (UnpaidBill{"bill_d", 300}) {
		t.Fatalf("unpaid: %+v", got)
	}
}

// Deductions, the deposit, lease_end and the move-out's time: each refusal
// names its field.
func TestTenancyRefusals(t *testing.T) {
	t.Parallel()
	d := func(desc string, amount int64) DeductionInput {
		return DeductionInput{Description: Of(desc), Amount: Of(amount)}
	}
	many := make([]DeductionInput, 21)
	for i := range many {
		many[i] = d("Cleaning", 100)
	}
	in := Time{Time: bkk("2026-11-17", 9)}
	tenant := &Tenant{MovedInAt: in}
	now := bkk("2027-03-20", 9)
	for _, tc := range []struct {
		name        string
		err         error
		code, param string
	}{
		{"20 deductions", func() error { _, err := NewDeductions(many[:20]); return err }(), "", ""},
		{"21 deductions", func() error { _, err := NewDeductions(many); return err }(), "invalid_parameter", "deductions"},
		{"a deduction of 0", func() error { _, err := NewDeductions([]DeductionInput{d("Cleaning", 1), d("Key", 0)}); return err }(), "invalid_parameter", "deductions[1].amount"},
		{"a blank description", func() error { _, err := NewDeductions([]DeductionInput{d("  ", 100)}); return err }(), "invalid_parameter", "deductions[0].description"},
		{"no amount", func() error { _, err := NewDeductions([]DeductionInput{{Description: Of("Key")}}); return err }(), "parameter_missing", "deductions[0].amount"},
		{"deposit 0", CheckDeposit(Of[int64](0)), "", ""},
		{"deposit at the bound", CheckDeposit(Of[int64](MaxDeposit)), "", ""},
		{"deposit negative", CheckDeposit(Of[int64](-1)), "invalid_parameter", "deposit"},
		{"deposit over", CheckDeposit(Of[int64](MaxDeposit + 1)), "invalid_parameter", "deposit"},
		{"lease_end the day of moving in", func() error { _, err := CheckLeaseEnd(Of("2026-11-17"), in.Time); return err }(), "", ""},
		{"lease_end before moving in", func() error { _, err := CheckLeaseEnd(Of("2026-11-16"), in.Time); return err }(), "invalid_parameter", "lease_end"},
		{"lease_end not a date", func() error { _, err := CheckLeaseEnd(Of("2026-02-30"), in.Time); return err }(), "invalid_parameter", "lease_end"},
		{"proration weekly", CheckProration(Of("weekly")), "invalid_parameter", "proration"},
		{"out before in", CheckMoveOut(tenant, in.Add(-time.Minute), now, "", ""), "invalid_parameter", "moved_out_at"},
		{"out in the future", CheckMoveOut(tenant, now.Add(time.Minute), now, "", ""), "invalid_parameter", "moved_out_at"},
		{"out in a month before a bill", CheckMoveOut(tenant, bkk("2027-02-10", 9), now, "2027-03", "bill_x"), "invalid_parameter", "moved_out_at"},
		{"out in the month of the last bill", CheckMoveOut(tenant, bkk("2027-03-10", 9), now, "2027-03", "bill_x"), "", ""},
	} {
		if tc.code == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		e, ok := AsError(tc.err)
		if !ok || e.Code != tc.code || e.Param != tc.param {
			t.Errorf("%s: %v, want %s naming %s", tc.name, tc.err, tc.code, tc.param)
		}
	}
}
