package store_test

import (
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// A payment link stored in clear before links were sealed is sealed by the
// next migration of a process with the server secret, and found by its
// token as before.
func TestClearLinksSealedAtStart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		storetest.NewFixture(t, e.DB, rental.PlanPro)
		var landlord string
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT id FROM landlords ORDER BY id LIMIT 1`).Scan(&landlord); err != nil {
			t.Fatal(err)
		}
		token := rental.NewLinkToken()
		if _, err := e.DB.WritePool().ExecContext(ctx, `INSERT INTO payment_links (id, landlord_id, bill_id, token, url, active, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, FALSE, 0, 0)`, rental.NewID(rental.PrefixPaymentLink), landlord, rental.NewID("bill"), token,
			"https://rent.example.com/pay/"+token); err != nil {
			t.Fatal(err)
		}
		if err := e.DB.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				t.Errorf("table %s still holds the token in clear: %.300s", table, row)
			}
		}
		if err := e.DB.Read().PaymentLinkExists(ctx, token); err != nil {
			t.Fatalf("the sealed link is not found by its token: %v", err)
		}
		if err := e.DB.Read().PaymentLinkExists(ctx, rental.NewLinkToken()); !rental.IsNotFound(err) {
			t.Fatalf("another token: %v", err)
		}
	})
}
