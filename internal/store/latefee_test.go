package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// theRule is the example of the specification: 5,000 satang a day after
// two days' grace, at most 12,000.
func theRule() rental.LateFeeChange {
	return rental.LateFeeChange{Amount: rental.Of[int64](5000), Per: rental.Of(rental.LateFeeDay), GraceDays: rental.Of[int64](2),
		MaxAmount: rental.Of[int64](12000)}
}

// lateFeeBills makes a property with the late-fee rule and n rooms, each
// with its issued bill of November 2026, due on 5 December.
func lateFeeBills(t *testing.T, db *store.DB, acct *rental.Account, n int, rule rental.LateFeeChange) []rental.Bill {
	return storetest.IssuedBills(t, db, acct, rental.PropertyChange{ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800),
		LateFee: rental.Of(rule)}, "2026-11", n)
}

// at moves the engine's clock to a minute past 00:00 Thailand time of day.
func at(e storetest.Engine, day string) {
	d, _ := time.ParseInLocation(time.DateOnly, day, rental.Bangkok)
	e.Clock.Advance(d.Add(time.Minute).Sub(e.Clock.Now()))
}

// sweepLateFees runs the landlord's late fees for its today to the end, a
// batch a transaction, as the job does.
func sweepLateFees(ctx context.Context, db *store.DB, landlordID string) (int, error) {
	total := 0
	for more := true; more; {
		err := db.InTx(ctx, func(tx *store.Tx) error {
			n, left, err := tx.AccrueLateFees(ctx, landlordID, "")
			total, more = total+n, left
			return err
		})
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// lateFees reads the late fee and total of each of the bills.
func lateFees(t *testing.T, db *store.DB, acct *rental.Account, bills []rental.Bill) (fees, totals []int64) {
	t.Helper()
	for _, b := range bills {
		got, err := db.Read().GetBill(t.Context(), acct, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		fees, totals = append(fees, got.LateFeeAmount()), append(totals, got.Total)
	}
	return fees, totals
}

// Bills take their property's rule when issued and keep it: a late fee
// grows day by day (5,000 from 12-08, 10,000 from 12-09, 12,000 from
// 12-10) exactly once a bill and day, with one bill.updated each time,
// while sweeps of two processes (two stores on one database) run at once
// every day.
func TestLateFeesExactlyOnceAcrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		other, err := store.Open(ctx, e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, PublicURL: storetest.PublicURL})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		acct := storetest.NewFixture(t, e.DB, rental.PlanPro).Sandbox(t, e.DB)
		const n = 12
		bills := lateFeeBills(t, e.DB, acct, n, theRule())
		base := bills[0].Total
		if r := bills[0].LateFee; r == nil || r.Amount != 5000 || r.Per != rental.LateFeeDay || r.GraceDays != 2 || *r.MaxAmount != 12000 {
			t.Fatalf("the bill's rule: %+v", r)
		}
		// The property's rule changes after the bills were issued: theirs stay.
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.UpdateProperty(ctx, acct, bills[0].PropertyID, rental.PropertyChange{LateFee: rental.Of(rental.LateFeeChange{
				Amount: rental.Of[int64](100), Per: rental.Of(rental.LateFeeOnce)})})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		updated, _ := e.DB.Read().CountEvents(ctx, acct, "bill.updated")
		for _, day := range []struct {
			day string
			fee int64
			// grown is how many bills' fees grew that day.
			grown int
		}{
			{"2026-12-05", 0, 0}, {"2026-12-06", 0, 0}, {"2026-12-07", 0, 0},
			{"2026-12-08", 5000, n}, {"2026-12-09", 10000, n}, {"2026-12-10", 12000, n}, {"2026-12-11", 12000, 0},
		} {
			at(e, day.day)
			var wg sync.WaitGroup
			var mu sync.Mutex
			total := 0
			for _, db := range []*store.DB{e.DB, other, e.DB, other, e.DB, other} {
				wg.Go(func() {
					got, err := sweepLateFees(context.Background(), db, acct.LandlordID)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					total += got
					mu.Unlock()
				})
			}
			wg.Wait()
			if total != day.grown {
				t.Errorf("%s: the sweeps grew %d fees, want %d", day.day, total, day.grown)
			}
			updated += day.grown
			if got, _ := e.DB.Read().CountEvents(ctx, acct, "bill.updated"); got != updated {
				t.Fatalf("%s: %d bill.updated events, want %d", day.day, got, updated)
			}
			fees, totals := lateFees(t, e.DB, acct, bills)
			for i := range fees {
				if fees[i] != day.fee || totals[i] != base+day.fee {
					t.Fatalf("%s: bill %d has a late fee of %d (total %d), want %d", day.day, i, fees[i], totals[i], day.fee)
				}
			}
		}
		got, err := e.DB.Read().GetBill(ctx, acct, bills[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if last := got.Lines[len(got.Lines)-1]; last.Type != rental.LineLateFee || last.Description != "Late fee (3 days)" || got.LateFee.Amount != 5000 {
			t.Fatalf("the late fee's line %+v, rule %+v", last, got.LateFee)
		}
		if day, err := e.DB.Read().NextLateFeeDay(ctx, acct.LandlordID); err != nil || day != "" {
			t.Fatalf("capped fees still have a next day %q (%v)", day, err)
		}
	})
}

// A process that was down for days (a new store on the database, after
// it) catches up in one sweep: each fee jumps to what the day charges,
// with one bill.updated; a bill paid meanwhile accrues nothing, one paid in
// part does, and its pending payment, asking for a stale amount, is
// canceled.
func TestLateFeesAfterDaysDown(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		acct := storetest.NewFixture(t, e.DB, rental.PlanPro).Sandbox(t, e.DB)
		bills := lateFeeBills(t, e.DB, acct, 4, rental.LateFeeChange{Amount: rental.Of[int64](1000), Per: rental.Of(rental.LateFeeDay)})
		at(e, "2026-12-06")
		if n, err := sweepLateFees(ctx, e.DB, acct.LandlordID); err != nil || n != 4 {
			t.Fatalf("first day: %d fees grew (%v)", n, err)
		}
		// Meanwhile: bill 1 is paid in full, bill 2 in part, and bill 3
		// has a QR open for what it owes now.
		confirm(t, e.DB, openPayment(t, e.DB, acct, bills[1].ID).ID, bills[1].Total+1000)
		confirm(t, e.DB, openPayment(t, e.DB, acct, bills[2].ID).ID, 100000)
		if paid := getBill(t, e.DB, acct, bills[1].ID); paid.Status != rental.BillPaid {
			t.Fatalf("bill 1 is %s", paid.Status)
		}
		open := openPayment(t, e.DB, acct, bills[3].ID)
		if open.Amount != bills[3].Total+1000 {
			t.Fatalf("QR for %d", open.Amount)
		}

		updated, _ := e.DB.Read().CountEvents(ctx, acct, "bill.updated")
		at(e, "2026-12-10")
		later, err := store.Open(ctx, e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, PublicURL: storetest.PublicURL})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { later.Close() })
		if n, err := sweepLateFees(ctx, later, acct.LandlordID); err != nil || n != 3 {
			t.Fatalf("after four days down: %d fees grew (%v)", n, err)
		}
		if got, _ := e.DB.Read().CountEvents(ctx, acct, "bill.updated"); got != updated+3 {
			t.Fatalf("%d bill.updated events after the catch-up, want %d", got, updated+3)
		}
		fees, totals := lateFees(t, e.DB, acct, bills)
		if want := []int64{5000, 1000, 5000, 5000}; fmt.Sprint(fees) != fmt.Sprint(want) {
			t.Fatalf("late fees %v, want %v", fees, want)
		}
		part, _ := e.DB.Read().GetBill(ctx, acct, bills[2].ID)
		if part.Status != rental.BillIssued || part.AmountPaid != 100000 || totals[2] != bills[2].Total+5000 {
			t.Fatalf("the part paid bill: %s, %d paid of %d", part.Status, part.AmountPaid, part.Total)
		}
		p, err := e.DB.Read().GetPayment(ctx, acct, open.ID)
		if err != nil || p.Status != rental.PaymentCanceled || p.FailureReason == nil || *p.FailureReason != rental.FailureBillChanged {
			t.Fatalf("the stale QR: %+v (%v)", p, err)
		}
		// Nothing more the same day.
		if n, err := sweepLateFees(ctx, e.DB, acct.LandlordID); err != nil || n != 0 {
			t.Fatalf("again: %d (%v)", n, err)
		}
	})
}
