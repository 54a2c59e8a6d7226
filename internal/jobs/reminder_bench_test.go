package jobs_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"rentapi/internal/jobs"
	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// BenchmarkReminderSweep measures the day's reminder sweep over 100,000
// unpaid bills: 100 landlords taking QR payments, each with a property of
// 1,000 rooms whose tenants the chat reaches, with reminders 3 days
// before and 2 days after the due date, and due dates spread over 30
// days, so that one bill in 15 gets a reminder (a notice with a payment
// link made for it, paced, its send job queued). Seeded by SQL. Reported:
// the sweep's time, per bill and per reminder, and the time of the sweep
// once the day is done (what every other minute of the day costs).
//
//	go test ./internal/jobs -run '^$' -bench ReminderSweep -benchtime 3x
//	RENTAPI_TEST_POSTGRES=... go test ./internal/jobs -run '^$' -bench ReminderSweep -benchtime 3x
func BenchmarkReminderSweep(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchReminders(b, storetest.SQLite(b)) })
	b.Run("postgres", func(b *testing.B) {
		if os.Getenv(storetest.PostgresEnv) == "" {
			b.Skip(storetest.PostgresEnv + " not set")
		}
		benchReminders(b, storetest.Postgres(b))
	})
}

const (
	benchLandlords = 100
	benchRooms     = 1000
)

func benchReminders(b *testing.B, e storetest.Engine) {
	ctx := context.Background()
	f := storetest.NewFixture(b, e.DB, rental.PlanEnterprise)
	// The clock is at 2026-11-22 10:00 in Thailand: due dates from 14
	// days ago to 15 days ahead.
	today, _ := time.Parse(time.DateOnly, "2026-11-22")
	var dates []string
	for k := range 30 {
		dates = append(dates, fmt.Sprintf("(%d, '%s')", k, today.AddDate(0, 0, k-14).Format(time.DateOnly)))
	}
	now := e.Clock.Now().UnixMilli()
	seed := func(tx *store.Tx, acct *rental.Account, l int) error {
		if _, err := tx.SetPromptPay(ctx, acct.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}, ""); err != nil {
			return err
		}
		p := fmt.Sprintf("p%03d", l)
		stmts := []string{
			`INSERT INTO properties (id, landlord_id, name, address, electricity_rate, water_billing, water_rate, due_day, created_at, updated_at, reminders)
				VALUES ($1, $2, 'Bench', '', 800, 'metered', 1800, 5, $3, $3, '{"before_due_days":[3],"after_due_days":[2]}')`,
			`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ` + fmt.Sprint(benchRooms) + `)
				INSERT INTO rooms (id, landlord_id, property_id, number, monthly_rent, status, created_at, updated_at)
				SELECT $1 || '_r' || i, $2, $1, '' || i, 350000, 'occupied', $3, $3 FROM n`,
			`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ` + fmt.Sprint(benchRooms) + `)
				INSERT INTO tenants (id, landlord_id, property_id, room_id, name, phone, chat_enabled, chat_registered, moved_in_at, created_at, updated_at)
				SELECT $1 || '_t' || i, $2, $1, $1 || '_r' || i, 'Tenant', '0812345678', TRUE, TRUE, $3, $3, $3 FROM n`,
			`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ` + fmt.Sprint(benchRooms) + `),
				d(k, due) AS (VALUES ` + strings.Join(dates, ", ") + `)
				INSERT INTO bills (id, landlord_id, property_id, room_id, tenant_id, reading_id, month, status, rent, e_usage, e_rate, e_amount,
					w_usage, w_rate, w_amount, w_billing, occupants, total, due_date, issued_at, created_at, updated_at, lines)
				SELECT $1 || '_b' || i, $2, $1, $1 || '_r' || i, $1 || '_t' || i, $1 || '_m' || i, '2026-10',
					CASE WHEN d.due < '2026-11-22' THEN 'overdue' ELSE 'issued' END, 350000, 0, 800, 0, 0, 1800, 0, 'metered', 1, 350000,
					d.due, $3, $3, $3, '[{"type":"rent","description":"Rent","amount":350000}]'
				FROM n JOIN d ON d.k = n.i % 30`,
		}
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s, p, acct.LandlordID, now); err != nil {
				return fmt.Errorf("seed: %w", err)
			}
		}
		return nil
	}
	for l := range benchLandlords {
		acct := f.LinkLandlord(b, e.DB, rental.LandlordPro, f.App.Scopes)
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return seed(tx, acct, l) }); err != nil {
			b.Fatal(err)
		}
	}
	reset := func() {
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			for _, s := range []string{`DELETE FROM notifications`, `DELETE FROM payment_links`, `DELETE FROM river_job`,
				`UPDATE landlords SET reminders_day = NULL, send_slot = 0`} {
				if _, err := tx.Exec(ctx, s); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	var sweep, idle time.Duration
	reminded := 0
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		reset()
		b.StartTimer()
		start := time.Now()
		n, err := jobs.SweepReminders(ctx, e.DB)
		if err != nil {
			b.Fatal(err)
		}
		sweep += time.Since(start)
		b.StopTimer()
		start = time.Now()
		if again, err := jobs.SweepReminders(ctx, e.DB); err != nil || again != 0 {
			b.Fatalf("a second sweep of the day queued %d (%v)", again, err)
		}
		idle += time.Since(start)
		b.StartTimer()
		reminded = n
	}
	bills := float64(benchLandlords * benchRooms)
	b.ReportMetric(float64(sweep.Milliseconds())/float64(b.N), "ms/sweep")
	b.ReportMetric(float64(sweep.Microseconds())/float64(b.N)/bills, "µs/bill")
	b.ReportMetric(float64(sweep.Microseconds())/float64(b.N)/float64(reminded), "µs/reminder")
	b.ReportMetric(float64(reminded), "reminders")
	b.ReportMetric(float64(idle.Microseconds())/float64(b.N)/1000, "idle-ms/sweep")
}
