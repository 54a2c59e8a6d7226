package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// The operator's invoice tools against two running processes: an overdue
// open invoice refuses live requests with 402 payment_required on both
// (test mode unaffected), `admin invoice pay` restores them at the next
// request on both, and mistakes (an unknown number, paying a paid invoice,
// voiding one, a month not ended) are refused with a message saying which.
func TestAdminInvoiceTools(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			ctx := t.Context()
			env := map[string]string{"RENTAPI_DB": freshDSN(t, engine), "RENTAPI_SECRET_FILE": filepath.Join(t.TempDir(), "secret")}
			getenv := func(k string) string { return env[k] }
			one, sandboxKey, stop := serveInProcess(t, getenv, "--addr", "127.0.0.1:0")
			defer stop()
			two, _, stop2 := serveInProcess(t, getenv, "--addr", "127.0.0.1:0")
			defer stop2()
			adm := adminRunner{t, getenv}
			landlord := adm.ok("create-landlord", "--name", "Khun Somchai")
			liveKey := adm.ok("create-key", "--mode", "live", "--account", adm.ok("link-account", "--landlord", landlord))
			db, err := store.Open(ctx, env["RENTAPI_DB"], store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			appID, _ := db.Read().DemoApplication(ctx)
			app, err := db.Read().GetApplication(ctx, appID)
			if err != nil {
				t.Fatal(err)
			}
			dev := app.DeveloperID
			if out := adm.ok("set-plan", "--developer", dev, "--plan", "pro"); out != dev+" pro" {
				t.Fatalf("set-plan printed %q", out)
			}
			want := func(key string, status int, code string) {
				t.Helper()
				for _, base := range []string{one, two} {
					if got, gotCode := apiStatus(t, base, key, "/v1/account"); got != status || gotCode != code {
						t.Fatalf("GET /v1/account at %s: %d %s, want %d %s", base, got, gotCode, status, code)
					}
				}
			}
			want(liveKey, 200, "")

			// Last month's invoice, issued 20 days ago: 6 days overdue. (The
			// demo developer is made older, to have lived in that month.)
			// Aged and invoiced in one transaction: the servers' own monthly
			// close (run at start, once a leader is elected) must not see
			// the developer old before this invoice exists.
			issued := time.Now().AddDate(0, 0, -20)
			past, err := store.Open(ctx, env["RENTAPI_DB"], store.Options{Now: func() time.Time { return issued }})
			if err != nil {
				t.Fatal(err)
			}
			defer past.Close()
			month := rental.MonthOf(rental.MonthStart(issued).Add(-time.Millisecond))
			var inv *rental.Invoice
			if err := past.InTx(ctx, func(tx *store.Tx) (err error) {
				if _, err := tx.Exec(ctx, `UPDATE developers SET created_at = $1 WHERE id = $2`, issued.AddDate(0, -2, 0).UnixMilli(), dev); err != nil {
					return err
				}
				inv, err = tx.CloseMonth(ctx, dev, month)
				return err
			}); err != nil || inv == nil {
				t.Fatalf("invoice %v (%v)", inv, err)
			}
			want(liveKey, 402, "payment_required")
			want(sandboxKey, 200, "")

			list := adm.ok("invoice", "list", "--status", "open")
			fields := strings.Split(list, "\t")
			if len(fields) != 9 || fields[0] != inv.Number || fields[1] != dev || fields[2] != month || fields[3] != "pro" ||
				fields[4] != "1990.00" || fields[5] != "THB" || fields[6] != "open" {
				t.Fatalf("invoice list printed %q", list)
			}
			if out := adm.ok("invoice", "list", "--status", "paid"); out != "" {
				t.Fatalf("no paid invoice, but the list printed %q", out)
			}
			if out := adm.ok("invoice", "pay", inv.Number); out != inv.Number+" paid" {
				t.Fatalf("invoice pay printed %q", out)
			}
			want(liveKey, 200, "")

			for _, c := range []struct {
				args []string
				says string
			}{
				{[]string{"invoice", "pay", inv.Number}, "is paid; only an open invoice can be paid"},
				{[]string{"invoice", "void", inv.Number}, "is paid; only an open invoice can be voided"},
				{[]string{"invoice", "void", "INV-2026-999999"}, "no invoice INV-2026-999999"},
				{[]string{"invoice", "pay", "42"}, `"42" is not an invoice number`},
				{[]string{"invoice", "pay"}, "name one invoice"},
				{[]string{"invoice", "list", "--status", "late"}, "--status must be open, paid or void"},
				{[]string{"invoice", "close", "--month", "2999-01"}, "has not ended"},
				{[]string{"invoice", "close", "--month", "last"}, "write YYYY-MM"},
				{[]string{"set-plan", "--developer", dev, "--plan", "gold"}, "--plan must be"},
			} {
				out, err := adm.run(c.args...)
				if err == nil || !strings.Contains(err.Error(), c.says) || out != "" {
					t.Errorf("admin %v: %q, %v; want an error saying %q", c.args, out, err, c.says)
				}
			}
			// The close on demand leaves a month closed already alone.
			if out := adm.ok("invoice", "close", "--month", month); out != "0 invoices made for "+month {
				t.Fatalf("invoice close printed %q", out)
			}
			if out := adm.ok("invoice", "list", "--developer", dev); !strings.Contains(out, "\tpaid\t") {
				t.Fatalf("invoice list --developer printed %q", out)
			}
		})
	}
}
