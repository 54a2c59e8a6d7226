package store_test

import (
	"reflect"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// Bills made before lines existed get them from their amounts when
// 00024 runs: a bill written on a database at the version before it, then
// migrated up, has its rent, electricity and water lines summing to its
// total.
func TestMigrationFillsBillLines(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		acct := storetest.NewFixture(t, e.DB, rental.PlanEnterprise).Sandbox(t, e.DB)
		bill := newBills(t, e.DB, acct, 1)[0]
		if err := e.DB.MigrateDownTo(ctx, 23); err != nil {
			t.Fatalf("migrate down to 23: %v", err)
		}
		// The bill as the version before wrote it: amounts, no lines.
		_, err := e.DB.WritePool().ExecContext(ctx, `UPDATE bills SET rent = 123400, e_amount = 5600, w_amount = 789, total = 129789 WHERE id = $1`, bill.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.DB.Migrate(ctx); err != nil {
			t.Fatalf("migrate up: %v", err)
		}
		got, err := e.DB.Read().GetBill(ctx, acct, bill.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := []rental.Line{
			{Type: rental.LineRent, Description: "Rent", Amount: 123400},
			{Type: rental.LineElectricity, Description: "Electricity", Amount: 5600},
			{Type: rental.LineWater, Description: "Water", Amount: 789},
		}
		if !reflect.DeepEqual(got.Lines, want) || got.Total != 129789 {
			t.Fatalf("lines %+v total %d; want %+v", got.Lines, got.Total, want)
		}
	})
}

// The month filter and a bill's charges agree with rental.Charge.ActiveIn
// on both engines (a boolean in SQL is not the same thing on each), and
// the charges' lines are kept with the bill, charge IDs included.
func TestChargesOfAMonth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		acct := storetest.NewFixture(t, e.DB, rental.PlanEnterprise).Sandbox(t, e.DB)
		bill := newBills(t, e.DB, acct, 1)[0]
		month := bill.Month
		next := nextMonth(month)
		// One transaction each, as the API makes them: a room's charges go
		// on its bills in the order they were made.
		var charges []*rental.Charge
		for _, c := range []rental.ChargeChange{
			{Description: rental.Of("Internet"), Amount: rental.Of[int64](30000), Recurring: rental.Of(true), Month: rental.Of(month)},
			{Description: rental.Of("Cleaning"), Amount: rental.Of[int64](10000), Recurring: rental.Of(true), Month: rental.Of(month), EndsMonth: rental.Of(month)},
			{Description: rental.Of("Parking"), Amount: rental.Of[int64](50000), Month: rental.Of(next)},
			{Type: rental.Of("discount"), Description: rental.Of("Welcome"), Amount: rental.Of[int64](5000), Month: rental.Of(month)},
		} {
			err := e.DB.InTx(ctx, func(tx *store.Tx) error {
				ch, err := tx.CreateCharge(ctx, acct, bill.RoomID, c)
				charges = append(charges, ch)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		for m, n := range map[string]int{month: 3, next: 2, nextMonth(next): 1} {
			list, _, err := e.DB.Read().ListCharges(ctx, acct, store.ChargeFilter{Month: m}, store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != n {
				t.Errorf("charges active in %s: %d, want %d", m, len(list), n)
			}
			for _, c := range list {
				if !c.ActiveIn(m) {
					t.Errorf("%s listed for %s", c.Description, m)
				}
			}
		}
		// The issued bill kept its lines; a draft of the next month takes
		// the charges active then, with their IDs.
		var draft *rental.Bill
		err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			if _, err := tx.CreateReading(ctx, acct, store.ReadingInput{RoomID: bill.RoomID, Month: next,
				Electricity: rental.PartInput{Set: true, Current: rental.Of[rental.Quantity](1_200_000)},
				Water:       rental.PartInput{Set: true, Current: rental.Of[rental.Quantity](60_000)}}); err != nil {
				return err
			}
			draft, err = tx.CreateBill(ctx, acct, bill.RoomID, next, false)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := e.DB.Read().GetBill(ctx, acct, bill.ID); len(b.Lines) != 3 || b.Total != bill.Total {
			t.Fatalf("the issued bill changed: %+v", b)
		}
		got, err := e.DB.Read().GetBill(ctx, acct, draft.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Lines) != 5 || got.Lines[3].ChargeID != charges[0].ID || got.Lines[4].ChargeID != charges[2].ID || !reflect.DeepEqual(got.Lines, draft.Lines) {
			t.Fatalf("draft lines %+v; created with %+v", got.Lines, draft.Lines)
		}
	})
}

// nextMonth is the month after a YYYY-MM month.
func nextMonth(m string) string {
	t, _ := time.Parse("2006-01", m)
	return t.AddDate(0, 1, 0).Format("2006-01")
}
