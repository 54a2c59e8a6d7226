package rental

import (
	"reflect"
	"strings"
	"testing"
)

// A charge's create body: what is taken, its defaults, and each refusal
// naming its field.
func TestNewCharge(t *testing.T) {
	t.Parallel()
	room := Room{ID: "room_a", PropertyID: "prop_a"}
	ok := func() ChargeChange {
		return ChargeChange{Description: Of("Internet"), Amount: Of[int64](30000), Month: Of("2026-11")}
	}
	c, err := NewCharge(room, ok())
	if err != nil {
		t.Fatal(err)
	}
	if c.Type != ChargeCharge || c.Recurring || c.EndsMonth != nil || c.RoomID != "room_a" || c.PropertyID != "prop_a" || c.Currency != "THB" || c.Object != "charge" {
		t.Fatalf("defaults: %+v", c)
	}
	for _, tc := range []struct {
		name        string
		change      func(*ChargeChange)
		code, param string
	}{
		{"a discount", func(c *ChargeChange) { c.Type = Of("discount") }, "", ""},
		{"recurring without end", func(c *ChargeChange) { c.Recurring = Of(true) }, "", ""},
		{"recurring ending the same month", func(c *ChargeChange) { c.Recurring, c.EndsMonth = Of(true), Of("2026-11") }, "", ""},
		{"ends_month null", func(c *ChargeChange) { c.EndsMonth = Optional[string]{Set: true, Null: true} }, "", ""},
		{"100 characters", func(c *ChargeChange) { c.Description = Of(strings.Repeat("ค", 100)) }, "", ""},
		{"amount 0", func(c *ChargeChange) { c.Amount = Of[int64](0) }, "invalid_parameter", "amount"},
		{"amount negative", func(c *ChargeChange) { c.Amount = Of[int64](-500) }, "invalid_parameter", "amount"},
		{"amount too large", func(c *ChargeChange) { c.Amount = Of[int64](MaxChargeAmount + 1) }, "invalid_parameter", "amount"},
		{"amount missing", func(c *ChargeChange) { c.Amount = Optional[int64]{} }, "parameter_missing", "amount"},
		{"101 characters", func(c *ChargeChange) { c.Description = Of(strings.Repeat("a", 101)) }, "invalid_parameter", "description"},
		{"blank description", func(c *ChargeChange) { c.Description = Of("   ") }, "invalid_parameter", "description"},
		{"description missing", func(c *ChargeChange) { c.Description = Optional[string]{} }, "parameter_missing", "description"},
		{"unknown type", func(c *ChargeChange) { c.Type = Of("fine") }, "invalid_parameter", "type"},
		{"month not YYYY-MM", func(c *ChargeChange) { c.Month = Of("2026-13") }, "invalid_parameter", "month"},
		{"month a date", func(c *ChargeChange) { c.Month = Of("2026-11-01") }, "invalid_parameter", "month"},
		{"month missing", func(c *ChargeChange) { c.Month = Optional[string]{} }, "parameter_missing", "month"},
		{"ends_month not YYYY-MM", func(c *ChargeChange) { c.Recurring, c.EndsMonth = Of(true), Of("Dec 2026") }, "invalid_parameter", "ends_month"},
		{"ends_month before month", func(c *ChargeChange) { c.Recurring, c.EndsMonth = Of(true), Of("2026-10") }, "invalid_parameter", "ends_month"},
		{"ends_month on a one-off", func(c *ChargeChange) { c.EndsMonth = Of("2026-12") }, "invalid_parameter", "ends_month"},
		{"recurring null", func(c *ChargeChange) { c.Recurring = Optional[bool]{Set: true, Null: true} }, "invalid_parameter", "recurring"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := ok()
			tc.change(&ch)
			_, err := NewCharge(room, ch)
			if code(err) != tc.code {
				t.Fatalf("%v; want %q", err, tc.code)
			}
			if e, _ := AsError(err); e != nil && e.Param != tc.param {
				t.Fatalf("param %q; want %q", e.Param, tc.param)
			}
		})
	}
}

// Which months a charge goes on a bill in.
func TestChargeActiveIn(t *testing.T) {
	t.Parallel()
	dec := "2026-12"
	for _, tc := range []struct {
		name string
		c    Charge
		in   map[string]bool
	}{
		{"one-off", Charge{Month: "2026-11"}, map[string]bool{"2026-10": false, "2026-11": true, "2026-12": false}},
		{"recurring, open", Charge{Month: "2026-11", Recurring: true}, map[string]bool{"2026-10": false, "2026-11": true, "2027-06": true}},
		{"recurring, ends", Charge{Month: "2026-11", Recurring: true, EndsMonth: &dec}, map[string]bool{"2026-10": false, "2026-11": true, "2026-12": true, "2027-01": false}},
	} {
		for month, want := range tc.in {
			if got := tc.c.ActiveIn(month); got != want {
				t.Errorf("%s in %s: %v, want %v", tc.name, month, got, want)
			}
		}
	}
}

// A bill's lines and total: the reading's lines, then charges, then
// discounts, the total their sum and never below zero.
func TestBillLines(t *testing.T) {
	t.Parallel()
	oct := "2026-10"
	internet := Charge{ID: "chg_net", Type: ChargeCharge, Description: "Internet", Amount: 30000, Recurring: true, Month: "2026-10"}
	parking := Charge{ID: "chg_park", Type: ChargeCharge, Description: "Parking", Amount: 50000, Month: "2026-11"}
	stay := Charge{ID: "chg_stay", Type: ChargeDiscount, Description: "Long stay", Amount: 20000, Month: "2026-11"}
	huge := Charge{ID: "chg_huge", Type: ChargeDiscount, Description: "Free month", Amount: 9_000_000, Month: "2026-11"}
	after := Charge{ID: "chg_after", Type: ChargeDiscount, Description: "After", Amount: 100, Month: "2026-11"}
	ended := Charge{ID: "chg_old", Type: ChargeCharge, Description: "Cleaning", Amount: 10000, Recurring: true, Month: "2026-01", EndsMonth: &oct}
	reading := []Line{
		{Type: LineRent, Description: "Rent", Amount: 350000},
		{Type: LineElectricity, Description: "Electricity", Amount: 96400},
		{Type: LineWater, Description: "Water", Amount: 10800},
	}
	for _, tc := range []struct {
		name    string
		charges []Charge
		extra   []Line // after the reading's lines
		total   int64
	}{
		{"no charges", nil, nil, 457200},
		{"recurring and one-off charges, a discount", []Charge{stay, internet, parking, ended},
			[]Line{
				{Type: LineCharge, Description: "Internet", Amount: 30000, ChargeID: "chg_net"},
				{Type: LineCharge, Description: "Parking", Amount: 50000, ChargeID: "chg_park"},
				{Type: LineDiscount, Description: "Long stay", Amount: -20000, ChargeID: "chg_stay", Full: 20000},
			}, 517200},
		{"a discount larger than the bill stops at zero", []Charge{huge, after},
			[]Line{
				{Type: LineDiscount, Description: "Free month", Amount: -457200, ChargeID: "chg_huge", Full: 9_000_000},
				{Type: LineDiscount, Description: "After", Amount: 0, ChargeID: "chg_after", Full: 100},
			}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Bill{Month: "2026-11", Rent: 350000, Electricity: BillElectricity{Amount: 96400}, Water: BillWater{Amount: 10800}}
			b.sum()
			b.Charge(tc.charges)
			want := append(append([]Line{}, reading...), tc.extra...)
			if !reflect.DeepEqual(b.Lines, want) || b.Total != tc.total {
				t.Fatalf("lines %+v total %d;\nwant %+v total %d", b.Lines, b.Total, want, tc.total)
			}
			var sum int64
			for _, l := range b.Lines {
				sum += l.Amount
			}
			if sum != b.Total {
				t.Fatalf("total %d is not the sum of the lines, %d", b.Total, sum)
			}
			if b.Charge(tc.charges) {
				t.Fatal("charging again with the same charges reported a change")
			}
		})
	}
}

// Lines survive a corrected reading, discounts resized; charges ended or
// deleted leave the bill, other lines (a late fee) stay.
func TestBillLinesRecalculated(t *testing.T) {
	t.Parallel()
	big := Charge{ID: "chg_big", Type: ChargeDiscount, Description: "Promotion", Amount: 400000, Month: "2026-11"}
	net := Charge{ID: "chg_net", Type: ChargeCharge, Description: "Internet", Amount: 30000, Month: "2026-11"}
	b, err := NewBill(BillSource{Room: Room{ID: "room_a", MonthlyRent: 350000}, Month: "2026-11", DueDay: 5,
		Reading: &Reading{ID: "mrd_a", Electricity: ReadingPart{Usage: 100_000, Rate: 800}, Water: WaterPart{ReadingPart: ReadingPart{Usage: 5000, Rate: 1800}, Billing: WaterMetered}},
		Charges: []Charge{big, net}}, now)
	if err != nil {
		t.Fatal(err)
	}
	// 350000 + 80000 + 9000 + 30000 = 469000, less 400000.
	if b.Total != 69000 || len(b.Lines) != 5 || b.Lines[4].Amount != -400000 {
		t.Fatalf("new bill: total %d lines %+v", b.Total, b.Lines)
	}
	b.Lines = append(b.Lines, Line{Type: LineLateFee, Description: "Late fee", Amount: 5000})
	b.sum()
	// The reading corrected to no usage: the discount shrinks to what is left.
	b.Reprice(Reading{Electricity: ReadingPart{Rate: 800}, Water: WaterPart{ReadingPart: ReadingPart{Rate: 1800}, Billing: WaterMetered}}, now)
	if b.Total != 0 || b.Lines[4].Amount != -385000 || b.Lines[5].Type != LineLateFee {
		t.Fatalf("repriced: total %d lines %+v", b.Total, b.Lines)
	}
	// The discount deleted: the internet charge and the late fee stay.
	if !b.Charge([]Charge{net}) {
		t.Fatal("taking a discount off reported no change")
	}
	if b.Total != 385000 || len(b.Lines) != 5 || b.Lines[3].ChargeID != "chg_net" || b.Lines[4].Type != LineLateFee {
		t.Fatalf("after the discount went: total %d lines %+v", b.Total, b.Lines)
	}
}

// Deleting a charge: deleted when no bill past draft carries it, a
// recurring one ended at the last such month, a one-off refused.
func TestChargeRemove(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		recurring bool
		billed    []string
		ended     bool
		ends      string
		code      string
	}{
		{"one-off, only on drafts", false, nil, false, "", ""},
		{"recurring, only on drafts", true, nil, false, "", ""},
		{"recurring, billed", true, []string{"2026-10", "2026-12", "2026-11"}, true, "2026-12", ""},
		{"one-off, billed", false, []string{"2026-11"}, false, "", "charge_billed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Charge{ID: "chg_a", Month: "2026-10", Recurring: tc.recurring}
			ended, err := c.Remove(tc.billed)
			if code(err) != tc.code || ended != tc.ended {
				t.Fatalf("ended %v err %v; want %v %q", ended, err, tc.ended, tc.code)
			}
			got := ""
			if c.EndsMonth != nil {
				got = *c.EndsMonth
			}
			if got != tc.ends {
				t.Fatalf("ends_month %q; want %q", got, tc.ends)
			}
		})
	}
}
