package rental

import (
	"reflect"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)

// code is the error code of err ("" for nil).
func code(err error) string {
	if err == nil {
		return ""
	}
	e, ok := AsError(err)
	if !ok {
		return "not a rental.Error: " + err.Error()
	}
	return e.Code
}

// Every move of a bill from every state: the allowed ones land in the
// documented state, the others are refused with the documented code and
// change nothing.
func TestBillTransitions(t *testing.T) {
	t.Parallel()
	type move struct {
		name string
		do   func(b *Bill) error
	}
	moves := []move{
		{"issue", func(b *Bill) error { return b.Issue(now, nil) }},
		{"delete", func(b *Bill) error { return b.Delete(nil) }},
		{"pay link", func(b *Bill) error { return b.CheckPayable() }},
		{"correct reading", func(b *Bill) error { return b.Correct() }},
	}
	cases := []struct {
		status string
		paid   int64 // of a total of 1000
		want   map[string]string
		after  string // the state after an allowed issue
	}{
		{BillDraft, 0, map[string]string{"issue": "", "delete": "", "pay link": "bill_not_payable", "correct reading": ""}, BillIssued},
		{BillIssued, 0, map[string]string{"issue": "invalid_state", "delete": "invalid_state", "pay link": "", "correct reading": ""}, BillIssued},
		{BillIssued, 400, map[string]string{"issue": "invalid_state", "delete": "invalid_state", "pay link": "", "correct reading": ""}, BillIssued},
		{BillOverdue, 0, map[string]string{"issue": "invalid_state", "delete": "invalid_state", "pay link": "", "correct reading": ""}, BillOverdue},
		{BillPaid, 1000, map[string]string{"issue": "invalid_state", "delete": "invalid_state", "pay link": "bill_not_payable", "correct reading": "bill_already_paid"}, BillPaid},
	}
	for _, c := range cases {
		for _, m := range moves {
			b := &Bill{ID: "bill_x", Month: "2026-11", Status: c.status, Total: 1000, AmountPaid: c.paid}
			before := *b
			err := m.do(b)
			if got := code(err); got != c.want[m.name] {
				t.Errorf("%s (paid %d): %s: %q, want %q", c.status, c.paid, m.name, got, c.want[m.name])
			}
			if err != nil && !reflect.DeepEqual(*b, before) {
				t.Errorf("%s: refused %s changed the bill", c.status, m.name)
			}
			if m.name == "issue" && err == nil && (b.Status != c.after || b.IssuedAt == nil || !b.IssuedAt.Equal(now)) {
				t.Errorf("%s: issued to %s at %v", c.status, b.Status, b.IssuedAt)
			}
		}
	}
	if e, _ := AsError((&Bill{ID: "bill_p", Status: BillPaid}).Correct()); e.ResourceID != "bill_p" {
		t.Errorf("bill_already_paid names %q", e.ResourceID)
	}
}

// Money received settles an issued or overdue bill once it covers the total
// (also when a correction lowers the total), never a draft; amount_paid
// keeps every satang.
func TestBillReceiveAndReprice(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status      string
		paid, total int64
		receive     int64
		want        string
	}{
		{BillIssued, 0, 1000, 400, BillIssued},
		{BillIssued, 400, 1000, 600, BillPaid},
		{BillOverdue, 0, 1000, 1000, BillPaid},
		{BillIssued, 0, 1000, 1500, BillPaid},
		{BillDraft, 0, 1000, 1000, BillDraft},
		{BillPaid, 1000, 1000, 200, BillPaid},
	}
	for _, c := range cases {
		b := &Bill{Status: c.status, Total: c.total, AmountPaid: c.paid}
		b.Receive(c.receive, now)
		if b.Status != c.want || b.AmountPaid != c.paid+c.receive {
			t.Errorf("%s %d/%d + %d: %s with %d paid", c.status, c.paid, c.total, c.receive, b.Status, b.AmountPaid)
		}
		if c.want == BillPaid && c.status != BillPaid && (b.PaidAt == nil || !b.PaidAt.Equal(now)) {
			t.Errorf("%s: paid_at %v", c.status, b.PaidAt)
		}
		if b.ClosesLinks() != (c.want == BillPaid) {
			t.Errorf("%s %d/%d + %d: closes links %v", c.status, c.paid, c.total, c.receive, b.ClosesLinks())
		}
	}
	// A correction that lowers the total below what was paid settles it.
	b := &Bill{Status: BillIssued, Rent: 500, AmountPaid: 600}
	b.Reprice(Reading{Water: WaterPart{Billing: WaterMetered}}, now)
	if b.Status != BillPaid || b.Total != 500 || !b.ClosesLinks() {
		t.Errorf("repriced to %d: %s", b.Total, b.Status)
	}
}

// A bill is made from the month's reading: none is 409 reading_required, a
// billed month 409 resource_exists naming its bill; otherwise a draft or
// issued bill with the tenant's occupants and the property's due day.
func TestNewBill(t *testing.T) {
	t.Parallel()
	room := Room{ID: "room_1", PropertyID: "prop_1", Number: "101", MonthlyRent: 350000}
	reading := &Reading{ID: "mrd_1", Water: WaterPart{Billing: WaterMetered}}
	billID := "bill_9"
	billed := &Reading{ID: "mrd_2", BillID: &billID}
	tenant := &Tenant{ID: "tnt_1", Occupants: 2}
	cases := []struct {
		src  BillSource
		code string
	}{
		{BillSource{Room: room, Month: "2026-11"}, "reading_required"},
		{BillSource{Room: room, Reading: billed, Bills: []RoomBill{{ID: billID}}, Month: "2026-11"}, "resource_exists"},
		{BillSource{Room: room, Reading: reading, DueDay: 31, Month: "2027-01", Issue: true}, ""},
		{BillSource{Room: room, Reading: reading, Tenant: tenant, DueDay: 5, Month: "2026-11"}, ""},
	}
	for i, c := range cases {
		b, err := NewBill(c.src, now)
		if code(err) != c.code {
			t.Fatalf("%d: %v, want %s", i, err, c.code)
		}
		if err != nil {
			if e, _ := AsError(err); c.code == "resource_exists" && e.ResourceID != "bill_9" {
				t.Errorf("%d: names %q", i, e.ResourceID)
			}
			continue
		}
		wantStatus := BillDraft
		if c.src.Issue {
			wantStatus = BillIssued
		}
		if b.Status != wantStatus || b.Total != 350000 || b.ReadingID != "mrd_1" || (wantStatus == BillIssued) != (b.IssuedAt != nil) {
			t.Errorf("%d: %+v", i, b)
		}
		if (c.src.Tenant != nil) != (b.TenantID != nil) || (c.src.Tenant != nil && b.Water.Occupants != 2) {
			t.Errorf("%d: tenant %v occupants %d", i, b.TenantID, b.Water.Occupants)
		}
	}
	if b, _ := NewBill(cases[2].src, now); b.DueDate != "2027-02-28" {
		t.Errorf("due %s", b.DueDate)
	}
}
