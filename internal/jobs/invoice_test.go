package jobs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// On the 1st the previous month is closed once per developer, however many
// closes race (two job clients given the job five times each, besides
// their own run at start, and four direct closes) and however often it
// runs after: one invoice each for the paid plans, none for Free, numbered
// without gaps.
func TestMonthlyCloseExactlyOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		plans := []rental.DeveloperPlan{rental.PlanFree, rental.PlanDeveloper, rental.PlanPro, rental.PlanBusiness, rental.PlanDeveloper, rental.PlanPro}
		var devs []storetest.Fixture
		for _, p := range plans {
			devs = append(devs, storetest.NewFixture(t, e.DB, p))
		}
		// The Pro developer (third) went past its 500,000 by 1,500: two
		// started thousands at 6 THB.
		if _, err := e.DB.AddUsage(ctx, store.UsagePeriod{Developer: devs[2].Developer.ID, Mode: rental.ModeLive, From: "2026-11-01", To: "2026-11-30"},
			map[store.UsageCell]int64{{Application: devs[2].App.ID, Day: "2026-11-10"}: 300_000, {Application: devs[2].App.ID, Day: "2026-11-30"}: 201_500}); err != nil {
			t.Fatal(err)
		}
		if n, err := jobs.CloseMonth(ctx, e.DB, "2026-11"); err != nil || n != 0 {
			t.Fatalf("%d invoices for a month not yet ended (%v)", n, err)
		}
		e.Clock.Advance(time.Date(2026, 12, 1, 0, 0, 0, 0, rental.Bangkok).Sub(e.Clock.Now()))
		racers := race(t, e, store.CloseMonthArgs{}, func() (int, error) { return jobs.CloseLastMonth(context.Background(), e.DB) })
		quiesce(t, racers, store.CloseMonthArgs{}.Kind())
		if n, err := jobs.CloseMonth(ctx, e.DB, "2026-11"); err != nil || n != 0 {
			t.Fatalf("a second close made %d invoices (%v)", n, err)
		}
		invs, err := e.DB.Read().Invoices(ctx, store.InvoiceFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(invs) != len(plans)-1 {
			t.Fatalf("%d invoices for %d paid developers", len(invs), len(plans)-1)
		}
		numbers := map[string]bool{}
		per := map[string]rental.Invoice{}
		for _, inv := range invs {
			numbers[inv.Number] = true
			per[inv.DeveloperID] = inv
		}
		for i := 1; i <= len(invs); i++ {
			if n := fmt.Sprintf("INV-2026-%06d", i); !numbers[n] {
				t.Fatalf("no %s among %v: numbers have a gap", n, numbers)
			}
		}
		if _, ok := per[devs[0].Developer.ID]; ok {
			t.Fatal("the Free developer has an invoice")
		}
		if inv := per[devs[2].Developer.ID]; inv.Total != 1_990_00+2*6_00 || len(inv.Lines) != 2 || inv.Lines[1].Quantity != 2 {
			t.Fatalf("Pro invoice %+v", inv)
		}
		if inv := per[devs[3].Developer.ID]; inv.Total != 6_900_00 || inv.Plan != rental.PlanBusiness || inv.Month != "2026-11" {
			t.Fatalf("Business invoice %+v", inv)
		}
		// The next month's invoices carry on the year's numbers.
		e.Clock.Advance(time.Date(2027, 1, 1, 0, 0, 0, 0, rental.Bangkok).Sub(e.Clock.Now()))
		if n, err := jobs.CloseLastMonth(ctx, e.DB); err != nil || n != len(plans)-1 {
			t.Fatalf("December: %d invoices (%v)", n, err)
		}
		all, _ := e.DB.Read().Invoices(ctx, store.InvoiceFilter{})
		next := map[string]bool{}
		for _, inv := range all {
			if inv.Month == "2026-12" {
				next[inv.Number] = true
			}
		}
		for i := 1; i <= len(plans)-1; i++ {
			if n := fmt.Sprintf("INV-2027-%06d", i); !next[n] {
				t.Fatalf("no %s among December's %v: a new year starts at 1", n, next)
			}
		}
	})
}

// The plan billed is the one in effect at the month's end: a downgrade
// chosen in November bills November on the larger plan, and an upgrade
// made on 1 December, before the close, does not change November's bill.
func TestCloseBillsThePlanAtMonthEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		change := func(to rental.DeveloperPlan) {
			t.Helper()
			if err := e.DB.InTx(ctx, func(tx *store.Tx) error { _, err := tx.ChangeDeveloperPlan(ctx, f.Developer.ID, to); return err }); err != nil {
				t.Fatal(err)
			}
		}
		change(rental.PlanDeveloper) // from 1 December
		e.Clock.Advance(time.Date(2026, 12, 1, 8, 0, 0, 0, rental.Bangkok).Sub(e.Clock.Now()))
		change(rental.PlanBusiness) // closes November first
		if n, err := jobs.CloseLastMonth(ctx, e.DB); err != nil || n != 0 {
			t.Fatalf("the job made %d more (%v)", n, err)
		}
		invs, _ := e.DB.Read().Invoices(ctx, store.InvoiceFilter{Developer: f.Developer.ID})
		if len(invs) != 1 || invs[0].Plan != rental.PlanPro || invs[0].Total != 1_990_00 {
			t.Fatalf("November billed %+v", invs)
		}
	})
}
