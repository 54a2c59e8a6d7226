package store_test

import (
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// A landlord's write of readings takes its rooms from what its last one in
// this process kept, and reads them again whenever anything may have
// changed them since: a change of their property (also in the very
// transaction that wrote readings), another process's reading, two writes
// of readings in one transaction. Each reading's meters start from the
// room's latest reading as the database holds it, and a rolled-back
// reading is never taken for one. On PostgreSQL nothing is kept (see
// keptRooms), and every reading is just as right.
func TestKeptRooms(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordPro, rental.AllScopes)
		var prop *rental.Property
		var a, b *rental.Room
		err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			if prop, err = tx.CreateProperty(ctx, acct, newProperty(t, "Baan Kept")); err != nil {
				return err
			}
			if a, err = tx.CreateRoom(ctx, acct, rental.Room{PropertyID: prop.ID, Number: "A", MonthlyRent: 350000, Status: "vacant"}); err != nil {
				return err
			}
			b, err = tx.CreateRoom(ctx, acct, rental.Room{PropertyID: prop.ID, Number: "B", MonthlyRent: 350000, Status: "vacant"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		meter := rental.Quantity(1_000_000)
		input := func(room *rental.Room, month string) store.ReadingInput {
			meter += 50_000
			part := rental.PartInput{Set: true, Current: rental.Of(meter)}
			return store.ReadingInput{RoomID: room.ID, Month: month, Electricity: part, Water: part}
		}
		// post records readings in a transaction of their own, with then
		// (if any) after them in it, and checks that taken rooms came
		// from those kept.
		post := func(db *store.DB, taken int, then func(tx *store.Tx) error, in ...store.ReadingInput) []store.ReadingResult {
			t.Helper()
			if db.Engine() != store.SQLite {
				taken = 0
			}
			var out []store.ReadingResult
			err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				if out, err = tx.CreateReadings(ctx, acct, in); err != nil {
					return err
				}
				if got := tx.RoomsTaken(); got != taken {
					t.Errorf("%s: %d rooms taken from those kept; want %d", in[0].Month, got, taken)
				}
				if then != nil {
					return then(tx)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		// follows checks that each reading recorded starts from the last
		// one before it (the same room's), and returns the last.
		follows := func(last *rental.Reading, out []store.ReadingResult) *rental.Reading {
			t.Helper()
			for _, r := range out {
				if r.Err != nil {
					t.Fatalf("a reading refused: %v", r.Err)
				}
				if last != nil && r.Reading.RoomID == last.RoomID && r.Reading.Electricity.Previous != last.Electricity.Current {
					t.Fatalf("%s starts at %d; want %s's %d", r.Reading.Month, r.Reading.Electricity.Previous, last.Month, last.Electricity.Current)
				}
				if r.Reading.RoomID == a.ID {
					last = r.Reading
				}
			}
			return last
		}

		last := follows(nil, post(e.DB, 0, nil, input(a, "2026-01")))
		last = follows(last, post(e.DB, 1, nil, input(a, "2026-02")))
		last = follows(last, post(e.DB, 1, nil, input(a, "2026-03")))
		// A batch takes the rooms kept and reads the rest: B, new, then
		// B again for a month long before those kept of it.
		last = follows(last, post(e.DB, 1, nil, input(a, "2026-04"), input(b, "2026-04")))
		last = follows(last, post(e.DB, 1, nil, input(b, "2025-06"), input(b, "2026-05"), input(a, "2026-05")))

		// The property's rate changes: the room is read again.
		rate := func(r int64) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				_, err := tx.UpdateProperty(ctx, acct, prop.ID, rental.PropertyChange{ElectricityRate: rental.Of(r)})
				return err
			}
		}
		if err := e.DB.InTx(ctx, rate(900)); err != nil {
			t.Fatal(err)
		}
		out := post(e.DB, 0, nil, input(a, "2026-06"))
		if last = follows(last, out); last.Electricity.Rate != 900 {
			t.Fatalf("rate %d after the property's changed to 900", last.Electricity.Rate)
		}
		// Also when the change comes after the readings in their own
		// transaction: that transaction keeps nothing.
		last = follows(last, post(e.DB, 1, rate(950), input(a, "2026-07")))
		if last = follows(last, post(e.DB, 0, nil, input(a, "2026-08"))); last.Electricity.Rate != 950 {
			t.Fatalf("rate %d after the property's changed to 950 with the last readings", last.Electricity.Rate)
		}

		// Room B, kept before the rate changed, is not kept since: the
		// writes of A after the change read A alone, and kept A alone.
		if r := post(e.DB, 0, nil, input(b, "2026-06"))[0]; r.Err != nil || r.Reading.Electricity.Rate != 950 {
			t.Fatalf("B after the rate changed: %+v", r)
		}

		// Another process records the room's next month.
		other := e.Another(t)
		last = follows(last, post(other.DB, 0, nil, input(a, "2026-09")))
		out = post(e.DB, 0, nil, input(a, "2026-09"))
		if e, ok := rental.AsError(out[0].Err); !ok || e.Code != "resource_exists" {
			t.Fatalf("2026-09 again, after another process recorded it: %v", out[0].Err)
		}
		// That refusal's transaction read the room again, as the other
		// process left it, and kept it.
		last = follows(last, post(e.DB, 1, nil, input(a, "2026-10")))
		last = follows(last, post(other.DB, 0, nil, input(a, "2026-11")))
		last = follows(last, post(e.DB, 0, nil, input(a, "2026-12")))

		// Two writes of readings in one transaction: the second reads its
		// room as the first left it, and neither keeps it.
		var twice []store.ReadingResult
		out = post(e.DB, 1, func(tx *store.Tx) (err error) {
			if twice, err = tx.CreateReadings(ctx, acct, []store.ReadingInput{input(a, "2027-02")}); err == nil && tx.RoomsTaken() != 0 {
				t.Errorf("the transaction's second write of readings took %d rooms", tx.RoomsTaken())
			}
			return err
		}, input(a, "2027-01"))
		last = follows(follows(last, out), twice)
		last = follows(last, post(e.DB, 0, nil, input(a, "2027-03")))

		// A reading rolled back is not taken for the room's latest.
		tx, err := e.DB.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.CreateReading(ctx, acct, input(a, "2027-04")); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		last = follows(last, post(e.DB, 1, nil, input(a, "2027-04")))
		follows(last, post(e.DB, 1, nil, input(a, "2027-05")))
	})
}
