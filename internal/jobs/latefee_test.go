package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// lateFeeBills makes a property charging 1,000 satang a day late (no
// grace, no cap) with n rooms, each with its issued bill of November 2026,
// due on 5 December.
func lateFeeBills(t *testing.T, db *store.DB, acct *rental.Account, n int) []rental.Bill {
	return storetest.IssuedBills(t, db, acct, rental.PropertyChange{ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800),
		LateFee: rental.Of(rental.LateFeeChange{Amount: rental.Of[int64](1000), Per: rental.Of(rental.LateFeeDay)})}, "2026-11", n)
}

// Late fees grow at 00:00 Thailand time, exactly once a bill and day
// (one bill.updated each), while two job clients (two processes' worth)
// and direct sweeps all run at once; a day missed is caught up in one
// jump, and the next day's sweeps add one day more.
func TestLateFeesExactlyOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		acct := storetest.NewFixture(t, e.DB, rental.PlanPro).Sandbox(t, e.DB)
		bills := lateFeeBills(t, e.DB, acct, 6)
		// 2026-12-05 23:59 in Bangkok: due today, nothing yet.
		e.Clock.Advance(time.Date(2026, 12, 5, 16, 59, 0, 0, time.UTC).Sub(e.Clock.Now()))
		if n, err := jobs.SweepLateFees(ctx, e.DB); n != 0 || err != nil {
			t.Fatalf("%d late fees on the due date (%v)", n, err)
		}
		updated, _ := e.DB.Read().CountEvents(ctx, acct, "bill.updated")
		for _, day := range []struct {
			at   time.Time
			fee  int64
			days int // the days each bill's fee grew on
		}{
			// 2026-12-07 00:00 in Bangkok: the sweep of the 6th was missed,
			// and is made up, one day after the other.
			{time.Date(2026, 12, 6, 17, 0, 0, 0, time.UTC), 2000, 2},
			{time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC), 3000, 1},
		} {
			e.Clock.Advance(day.at.Sub(e.Clock.Now()))
			racers := race(t, e, store.LateFeeArgs{}, func() (int, error) { return jobs.SweepLateFees(context.Background(), e.DB) })
			quiesce(t, racers, store.LateFeeArgs{}.Kind())
			updated += day.days * len(bills)
			if n, err := e.DB.Read().CountEvents(ctx, acct, "bill.updated"); err != nil || n != updated {
				t.Fatalf("%v: %d bill.updated events, want %d (%v)", day.at, n, updated, err)
			}
			// The first bill's last events carry each day's amount in turn.
			evs, _, err := e.DB.Read().ListEvents(ctx, acct, store.EventFilter{Type: "bill.updated", Prefixes: []string{"bill."}}, e.Clock.Now(), store.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			var fees []int64
			for _, ev := range evs { // newest first
				var b struct {
					ID    string `json:"id"`
					Lines []struct {
						Type   string `json:"type"`
						Amount int64  `json:"amount"`
					} `json:"lines"`
				}
				if err := json.Unmarshal(ev.Data, &b); err != nil {
					t.Fatal(err)
				}
				for _, l := range b.Lines {
					if b.ID == bills[0].ID && l.Type == "late_fee" && len(fees) < day.days {
						fees = append([]int64{l.Amount}, fees...)
					}
				}
			}
			if want := day.fee - int64(day.days-1)*1000; len(fees) != day.days || fees[0] != want || fees[len(fees)-1] != day.fee {
				t.Fatalf("%v: the last bill.updated of a bill carry late fees %v, want %d days from %d to %d", day.at, fees, day.days, want, day.fee)
			}
			for _, b := range bills {
				got, err := e.DB.Read().GetBill(ctx, acct, b.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got.LateFeeAmount() != day.fee || got.Total != b.Total+day.fee {
					t.Fatalf("%v: a late fee of %d, total %d; want %d", day.at, got.LateFeeAmount(), got.Total, day.fee)
				}
			}
		}
	})
}

// BenchmarkLateFees measures the late-fee sweep (jobs.SweepLateFees, as
// the periodic job runs it) over 100,000 unpaid overdue bills of one
// landlord, each charged 1,000 satang a day: every sweep grows every
// bill's fee by one day (bill.updated each). The bills are seeded with
// direct inserts; each iteration moves the clock on a day and sweeps.
//
//	go test ./internal/jobs -run '^$' -bench LateFees -benchtime 2x -timeout 30m
//	RENTAPI_TEST_POSTGRES=... go test ./internal/jobs -run '^$' -bench LateFees -benchtime 2x -timeout 30m
func BenchmarkLateFees(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchLateFees(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			b.Skip(storetest.PostgresEnv + " not set")
		}
		benchLateFees(b, storetest.Postgres(b))
	})
}

// lateFeeBenchBills is how many bills BenchmarkLateFees sweeps.
const lateFeeBenchBills = 100_000

func benchLateFees(b *testing.B, e storetest.Engine) {
	ctx := context.Background()
	f := storetest.NewFixture(b, e.DB, rental.PlanPro)
	acct := f.LinkLandlord(b, e.DB, rental.LandlordPro, f.App.Scopes)
	rule := `{"amount":1000,"per":"day","grace_days":0,"max_amount":null}`
	lines := `[{"type":"rent","description":"Rent","amount":300000},{"type":"electricity","description":"Electricity","amount":80000},` +
		`{"type":"water","description":"Water","amount":9000}]`
	created := e.Clock.Now().UnixMilli()
	// 25 rows a statement: SQLite looks a statement's parameters up by
	// name one by one, so a statement of many costs the square.
	const perStmt, perTx = 25, 2000
	for start := 0; start < lateFeeBenchBills; start += perTx {
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			for first := start; first < min(start+perTx, lateFeeBenchBills); first += perStmt {
				var q strings.Builder
				q.WriteString(`INSERT INTO bills (id, landlord_id, property_id, room_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
					w_usage, w_rate, w_amount, w_billing, occupants, total, due_date, issued_at, overdue_at, created_at, updated_at, lines,
					late_fee, late_fee_amount, late_fee_next) VALUES `)
				var args []any
				for i := first; i < min(first+perStmt, lateFeeBenchBills); i++ {
					if i > first {
						q.WriteString(", ")
					}
					n := len(args)
					q.WriteString("(")
					for j := 1; j <= 26; j++ {
						if j > 1 {
							q.WriteString(", ")
						}
						fmt.Fprintf(&q, "$%d", n+j)
					}
					q.WriteString(")")
					args = append(args, rental.NewID(rental.PrefixBill), acct.LandlordID, "prop_bench", fmt.Sprintf("room_bench%06d", i), fmt.Sprintf("mrd_bench%06d", i),
						"2026-11", rental.BillOverdue, 300000, 100_000, 800, 80000, 5000, 1800, 9000, rental.WaterMetered, 1, 389000, "2026-12-05",
						created, created, created, created, lines, rule, 0, "2026-12-06")
				}
				if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if e.Name == "postgres" {
		// Statistics, as a table of that size has in production (the
		// autovacuum daemon gathers them a while after the inserts).
		if _, err := e.DB.WritePool().ExecContext(ctx, `ANALYZE bills`); err != nil {
			b.Fatal(err)
		}
	}
	// 2026-12-06 00:00 in Bangkok, the first day the bills are late.
	day := time.Date(2026, 12, 5, 17, 0, 0, 0, time.UTC)
	e.Clock.Advance(day.Sub(e.Clock.Now()))
	b.ResetTimer()
	for i := range b.N {
		if i > 0 {
			e.Clock.Advance(24 * time.Hour)
		}
		n, err := jobs.SweepLateFees(ctx, e.DB)
		if err != nil {
			b.Fatal(err)
		}
		if n != lateFeeBenchBills {
			b.Fatalf("sweep %d grew %d fees, want %d", i, n, lateFeeBenchBills)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/lateFeeBenchBills, "µs/bill")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "sec/sweep")
}
