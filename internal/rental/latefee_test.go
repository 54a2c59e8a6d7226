package rental

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// A late_fee object: what is taken, its defaults, and each refusal naming
// its sub-field.
func TestNewLateFee(t *testing.T) {
	t.Parallel()
	ok := func() LateFeeChange { return LateFeeChange{Amount: Of[int64](5000), Per: Of(LateFeeDay)} }
	f, err := NewLateFee(ok())
	if err != nil {
		t.Fatal(err)
	}
	if *f != (LateFee{Amount: 5000, Per: LateFeeDay}) {
		t.Fatalf("defaults: %+v", f)
	}
	null := Optional[int64]{Set: true, Null: true}
	for _, tc := range []struct {
		name        string
		change      func(*LateFeeChange)
		want        *LateFee
		code, param string
	}{
		{"once", func(c *LateFeeChange) { c.Per = Of(LateFeeOnce) }, &LateFee{Amount: 5000, Per: LateFeeOnce}, "", ""},
		{"grace 30, capped", func(c *LateFeeChange) { c.GraceDays, c.MaxAmount = Of[int64](30), Of[int64](12000) },
			&LateFee{Amount: 5000, Per: LateFeeDay, GraceDays: 30, MaxAmount: ptr[int64](12000)}, "", ""},
		{"cap equal to amount", func(c *LateFeeChange) { c.MaxAmount = Of[int64](5000) }, &LateFee{Amount: 5000, Per: LateFeeDay, MaxAmount: ptr[int64](5000)}, "", ""},
		{"cap null", func(c *LateFeeChange) { c.MaxAmount = null }, &LateFee{Amount: 5000, Per: LateFeeDay}, "", ""},
		{"largest amount", func(c *LateFeeChange) { c.Amount = Of[int64](MaxChargeAmount) }, &LateFee{Amount: MaxChargeAmount, Per: LateFeeDay}, "", ""},
		{"grace_days 31", func(c *LateFeeChange) { c.GraceDays = Of[int64](31) }, nil, "invalid_parameter", "late_fee.grace_days"},
		{"grace_days negative", func(c *LateFeeChange) { c.GraceDays = Of[int64](-1) }, nil, "invalid_parameter", "late_fee.grace_days"},
		{"grace_days null", func(c *LateFeeChange) { c.GraceDays = null }, nil, "invalid_parameter", "late_fee.grace_days"},
		{"max_amount below amount", func(c *LateFeeChange) { c.MaxAmount = Of[int64](4999) }, nil, "invalid_parameter", "late_fee.max_amount"},
		{"max_amount too large", func(c *LateFeeChange) { c.MaxAmount = Of[int64](MaxChargeAmount + 1) }, nil, "invalid_parameter", "late_fee.max_amount"},
		{"amount 0", func(c *LateFeeChange) { c.Amount = Of[int64](0) }, nil, "invalid_parameter", "late_fee.amount"},
		{"amount negative", func(c *LateFeeChange) { c.Amount = Of[int64](-5000) }, nil, "invalid_parameter", "late_fee.amount"},
		{"amount too large", func(c *LateFeeChange) { c.Amount = Of[int64](MaxChargeAmount + 1) }, nil, "invalid_parameter", "late_fee.amount"},
		{"amount null", func(c *LateFeeChange) { c.Amount = null }, nil, "invalid_parameter", "late_fee.amount"},
		{"amount missing", func(c *LateFeeChange) { c.Amount = Optional[int64]{} }, nil, "parameter_missing", "late_fee.amount"},
		{"per week", func(c *LateFeeChange) { c.Per = Of("week") }, nil, "invalid_parameter", "late_fee.per"},
		{"per null", func(c *LateFeeChange) { c.Per = Optional[string]{Set: true, Null: true} }, nil, "invalid_parameter", "late_fee.per"},
		{"per missing", func(c *LateFeeChange) { c.Per = Optional[string]{} }, nil, "parameter_missing", "late_fee.per"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok()
			tc.change(&c)
			f, err := NewLateFee(c)
			if code(err) != tc.code {
				t.Fatalf("%v; want %q", err, tc.code)
			}
			if e, _ := AsError(err); e != nil && e.Param != tc.param {
				t.Fatalf("param %q; want %q", e.Param, tc.param)
			}
			if !reflect.DeepEqual(f, tc.want) {
				t.Fatalf("rule %+v; want %+v", f, tc.want)
			}
		})
	}
}

// What a rule charges, day by day, across month and year ends.
func TestLateFeeAccrued(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rule LateFee
		due  string
		// want is the charge on each day from the due date on.
		want []int64
		days []int64
	}{
		// The example of the specification.
		{"5,000 a day after 2 days' grace, cap 12,000", LateFee{Amount: 5000, Per: LateFeeDay, GraceDays: 2, MaxAmount: ptr[int64](12000)},
			"2026-12-05", []int64{0, 0, 0, 5000, 10000, 12000, 12000, 12000}, []int64{0, 0, 0, 1, 2, 3, 3, 3}},
		{"once, grace 0: the day it becomes overdue", LateFee{Amount: 20000, Per: LateFeeOnce},
			"2026-12-05", []int64{0, 20000, 20000, 20000}, []int64{0, 1, 1, 1}},
		{"once after 3 days", LateFee{Amount: 20000, Per: LateFeeOnce, GraceDays: 3},
			"2026-12-05", []int64{0, 0, 0, 0, 20000, 20000}, []int64{0, 0, 0, 0, 1, 1}},
		{"by the day, no cap", LateFee{Amount: 1000, Per: LateFeeDay},
			"2026-12-05", []int64{0, 1000, 2000, 3000, 4000, 5000}, []int64{0, 1, 2, 3, 4, 5}},
		{"a cap that is not a multiple", LateFee{Amount: 3000, Per: LateFeeDay, MaxAmount: ptr[int64](7000)},
			"2026-12-05", []int64{0, 3000, 6000, 7000, 7000}, []int64{0, 1, 2, 3, 3}},
		{"cap equal to amount", LateFee{Amount: 3000, Per: LateFeeDay, MaxAmount: ptr[int64](3000)},
			"2026-12-05", []int64{0, 3000, 3000}, []int64{0, 1, 1}},
		{"over the year's end", LateFee{Amount: 1000, Per: LateFeeDay, GraceDays: 1},
			"2026-12-30", []int64{0, 0, 1000, 2000, 3000}, []int64{0, 0, 1, 2, 3}},
		{"over February's end", LateFee{Amount: 1000, Per: LateFeeDay},
			"2027-02-27", []int64{0, 1000, 2000, 3000}, []int64{0, 1, 2, 3}},
		{"over a leap February's end", LateFee{Amount: 1000, Per: LateFeeDay},
			"2028-02-28", []int64{0, 1000, 2000, 3000}, []int64{0, 1, 2, 3}},
		{"a 31-day month", LateFee{Amount: 1000, Per: LateFeeOnce, GraceDays: 30},
			"2027-01-01", append(make([]int64, 31), 1000), append(make([]int64, 31), 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				day := AddDays(tc.due, i)
				if got, days := tc.rule.Accrued(tc.due, day); got != want || days != tc.days[i] {
					t.Errorf("%s: %d for %d days, want %d for %d", day, got, days, want, tc.days[i])
				}
			}
		})
	}
	// Days are Thailand's calendar days, whatever the months.
	for _, tc := range []struct {
		day  string
		n    int
		want string
	}{
		{"2026-12-31", 1, "2027-01-01"}, {"2027-02-28", 1, "2027-03-01"}, {"2028-02-28", 1, "2028-02-29"}, {"2026-11-30", 5, "2026-12-05"},
	} {
		if got := AddDays(tc.day, tc.n); got != tc.want {
			t.Errorf("AddDays(%s, %d) = %s, want %s", tc.day, tc.n, got, tc.want)
		}
	}
}

// lateBill is an issued bill of 439,000 satang with a rule, due on
// 2026-12-05.
func lateBill(rule *LateFee) *Bill {
	b := &Bill{ID: "bill_x", Month: "2026-11", Status: BillIssued, Rent: 350000, DueDate: "2026-12-05", LateFee: rule,
		Electricity: BillElectricity{Amount: 80000}, Water: BillWater{Amount: 9000}}
	b.sum()
	return b
}

func lineText(b *Bill) string {
	var out []string
	for _, l := range b.Lines {
		out = append(out, fmt.Sprintf("%s:%s:%d", l.Type, l.Description, l.Amount))
	}
	return strings.Join(out, " ")
}

// A bill's late_fee line day by day: added on the first day the rule
// charges, raised as it grows, its total with it, and its next day of
// change; the same day again changes nothing; a paid bill, a draft and a
// bill without a rule accrue nothing; a part paid one does.
func TestAccrueLateFee(t *testing.T) {
	t.Parallel()
	const reading = "rent:Rent:350000 electricity:Electricity:80000 water:Water:9000"
	rule := &LateFee{Amount: 5000, Per: LateFeeDay, GraceDays: 2, MaxAmount: ptr[int64](12000)}
	b := lateBill(rule)
	if next := b.NextLateFeeDay(); next != "2026-12-08" {
		t.Fatalf("first day %q", next)
	}
	for _, step := range []struct {
		day     string
		changed bool
		line    string
		total   int64
		next    string
	}{
		{"2026-12-05", false, "", 439000, "2026-12-08"},
		{"2026-12-07", false, "", 439000, "2026-12-08"},
		{"2026-12-08", true, " late_fee:Late fee (1 day):5000", 444000, "2026-12-09"},
		{"2026-12-08", false, " late_fee:Late fee (1 day):5000", 444000, "2026-12-09"},
		{"2026-12-09", true, " late_fee:Late fee (2 days):10000", 449000, "2026-12-10"},
		{"2026-12-10", true, " late_fee:Late fee (3 days):12000", 451000, ""},
		{"2026-12-11", false, " late_fee:Late fee (3 days):12000", 451000, ""},
		{"2027-03-01", false, " late_fee:Late fee (3 days):12000", 451000, ""},
	} {
		if got := b.AccrueLateFee(step.day); got != step.changed {
			t.Errorf("%s: changed %v, want %v", step.day, got, step.changed)
		}
		if got := lineText(b); got != reading+step.line || b.Total != step.total || b.LateFeeAmount() != b.Total-439000 {
			t.Errorf("%s: %s, total %d; want %s, %d", step.day, got, b.Total, reading+step.line, step.total)
		}
		if got := b.NextLateFeeDay(); got != step.next {
			t.Errorf("%s: next day %q, want %q", step.day, got, step.next)
		}
	}

	// Days missed: the line jumps to what the day charges, as it is after
	// every day swept.
	b = lateBill(rule)
	if !b.AccrueLateFee("2026-12-20") || lineText(b) != reading+" late_fee:Late fee (3 days):12000" || b.NextLateFeeDay() != "" {
		t.Fatalf("after missed days: %s, next %q", lineText(b), b.NextLateFeeDay())
	}
	b = lateBill(&LateFee{Amount: 1000, Per: LateFeeDay})
	if !b.AccrueLateFee("2026-12-09") || lineText(b) != reading+" late_fee:Late fee (4 days):4000" || b.NextLateFeeDay() != "2026-12-10" {
		t.Fatalf("uncapped after missed days: %s, next %q", lineText(b), b.NextLateFeeDay())
	}

	// Once: one line on the day after due + grace, then nothing more.
	b = lateBill(&LateFee{Amount: 20000, Per: LateFeeOnce})
	if b.NextLateFeeDay() != "2026-12-06" || !b.AccrueLateFee("2026-12-06") || lineText(b) != reading+" late_fee:Late fee:20000" ||
		b.NextLateFeeDay() != "" || b.AccrueLateFee("2026-12-07") {
		t.Fatalf("once: %s, next %q", lineText(b), b.NextLateFeeDay())
	}

	// Overdue and part paid: still accruing, and the total rises above
	// what was paid.
	b = lateBill(rule)
	b.Status, b.AmountPaid = BillOverdue, 439000-1
	if !b.AccrueLateFee("2026-12-08") || b.Total != 444000 || !b.Payable() {
		t.Fatalf("part paid: %s, total %d, payable %v", lineText(b), b.Total, b.Payable())
	}
	// Paid (a late fee paid too): no more.
	b.Receive(b.Total-b.AmountPaid, now)
	if b.Status != BillPaid || b.AccrueLateFee("2026-12-09") || b.LateFeeAmount() != 5000 || b.NextLateFeeDay() != "" {
		t.Fatalf("paid: %s %s, next %q", b.Status, lineText(b), b.NextLateFeeDay())
	}
	// A draft, and a bill issued without a rule, never.
	for _, b := range []*Bill{func() *Bill { b := lateBill(rule); b.Status = BillDraft; return b }(), lateBill(nil)} {
		if b.AccrueLateFee("2026-12-20") || b.NextLateFeeDay() != "" || lineText(b) != reading {
			t.Fatalf("%s, rule %v: %s, next %q", b.Status, b.LateFee, lineText(b), b.NextLateFeeDay())
		}
	}

	// A bill discounted to nothing owes nothing, and is never late.
	b = lateBill(&LateFee{Amount: 5000, Per: LateFeeOnce})
	b.Charge([]Charge{{ID: "chg_d", Type: ChargeDiscount, Description: "Free month", Amount: 500000, Month: "2026-11"}})
	if b.Total != 0 || b.NextLateFeeDay() != "" || b.AccrueLateFee("2026-12-06") || b.Total != 0 {
		t.Fatalf("a bill of nothing: %s, total %d, next %q", lineText(b), b.Total, b.NextLateFeeDay())
	}
	// A smaller discount stays what it is; the late fee comes after it,
	// and charges recalculated keep it last.
	b = lateBill(&LateFee{Amount: 5000, Per: LateFeeOnce})
	b.Charge([]Charge{{ID: "chg_d", Type: ChargeDiscount, Description: "Promotion", Amount: 39000, Month: "2026-11"}})
	if !b.AccrueLateFee("2026-12-06") || b.Total != 405000 || lineText(b) != reading+" discount:Promotion:-39000 late_fee:Late fee:5000" {
		t.Fatalf("late on a discounted bill: %s, total %d", lineText(b), b.Total)
	}
	b.Charge([]Charge{{ID: "chg_c", Type: ChargeCharge, Description: "Parking", Amount: 1000, Month: "2026-11"}})
	if lineText(b) != reading+" charge:Parking:1000 late_fee:Late fee:5000" || b.Total != 445000 {
		t.Fatalf("recharged: %s, total %d", lineText(b), b.Total)
	}
}

// A bill takes the property's rule when issued, as a copy: a later change
// of the property's rule leaves it as it was.
func TestIssueTakesLateFee(t *testing.T) {
	t.Parallel()
	rule := &LateFee{Amount: 5000, Per: LateFeeDay, MaxAmount: ptr[int64](12000)}
	draft := &Bill{Status: BillDraft}
	if err := draft.Issue(now, rule); err != nil {
		t.Fatal(err)
	}
	*rule.MaxAmount, rule.Amount = 1, 1
	if draft.LateFee == rule || *draft.LateFee.MaxAmount != 12000 || draft.LateFee.Amount != 5000 {
		t.Fatalf("snapshot %+v follows the property's rule", draft.LateFee)
	}
	room := Room{ID: "room_a", PropertyID: "prop_a", MonthlyRent: 350000}
	reading := &Reading{ID: "mr_a"}
	for _, issue := range []bool{true, false} {
		b, err := NewBill(BillSource{Room: room, DueDay: 5, Reading: reading, Month: "2026-11", Issue: issue, LateFee: rule}, now)
		if err != nil {
			t.Fatal(err)
		}
		if (b.LateFee != nil) != issue || issue && (b.LateFee == rule || !SameLateFee(b.LateFee, rule)) {
			t.Fatalf("issue %v: rule %+v", issue, b.LateFee)
		}
	}
	if err := (&Bill{Status: BillIssued}).Issue(now, rule); code(err) != "invalid_state" {
		t.Fatalf("issuing an issued bill: %v", err)
	}
}

// A property's late_fee: set on create, replaced whole on update, removed
// with null; a refusal changes nothing.
func TestPropertyLateFee(t *testing.T) {
	t.Parallel()
	base := PropertyChange{Name: Of("Baan Suk"), ElectricityRate: Of[int64](800), WaterRate: Of[int64](1800)}
	p, err := NewProperty(base)
	if err != nil || p.LateFee != nil {
		t.Fatalf("no rule by default: %+v %v", p.LateFee, err)
	}
	base.LateFee = Of(LateFeeChange{Amount: Of[int64](5000), Per: Of(LateFeeDay), GraceDays: Of[int64](2), MaxAmount: Of[int64](12000)})
	if p, err = NewProperty(base); err != nil || !SameLateFee(p.LateFee, &LateFee{Amount: 5000, Per: LateFeeDay, GraceDays: 2, MaxAmount: ptr[int64](12000)}) {
		t.Fatalf("create: %+v %v", p.LateFee, err)
	}
	// The whole rule is replaced: grace and cap not sent go back to their defaults.
	if err := p.Apply(PropertyChange{LateFee: Of(LateFeeChange{Amount: Of[int64](20000), Per: Of(LateFeeOnce)})}); err != nil ||
		!SameLateFee(p.LateFee, &LateFee{Amount: 20000, Per: LateFeeOnce}) {
		t.Fatalf("replace: %+v %v", p.LateFee, err)
	}
	before := p
	err = p.Apply(PropertyChange{Name: Of("New name"), LateFee: Of(LateFeeChange{Amount: Of[int64](5000), Per: Of(LateFeeDay), GraceDays: Of[int64](31)})})
	if e, _ := AsError(err); e == nil || e.Param != "late_fee.grace_days" || !reflect.DeepEqual(p, before) {
		t.Fatalf("refused: %v, property %+v", err, p)
	}
	if err := p.Apply(PropertyChange{LateFee: Optional[LateFeeChange]{Set: true, Null: true}}); err != nil || p.LateFee != nil {
		t.Fatalf("null: %+v %v", p.LateFee, err)
	}
	if !SameLateFee(nil, nil) || SameLateFee(nil, &LateFee{}) || SameLateFee(&LateFee{MaxAmount: ptr[int64](1)}, &LateFee{MaxAmount: ptr[int64](2)}) ||
		SameLateFee(&LateFee{MaxAmount: ptr[int64](1)}, &LateFee{}) {
		t.Fatal("SameLateFee")
	}
}
