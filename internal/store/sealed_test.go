package store_test

import (
	"slices"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
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

// Events' data, deliveries' bodies and chat notices holding a payment
// link's URL stored in clear (by the version before copies were sealed, or
// by a process without the server secret) read as they are, and the next
// migration of a process with the secret seals them: no table holds the
// link's token any more, and every reader gets the very same text back.
// Copies made since are sealed at once; a copy without a link stays in
// clear JSON; a sealed copy opens only in its own row.
func TestClearCopiesSealedAtStart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f, acct, ep, _ := testEndpoint(t, e)
		token := rental.NewLinkToken()
		payURL := "https://rent.example.com/pay/" + token
		plain, err := store.Open(ctx, e.DSN, store.Options{Now: e.Clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		payment := map[string]any{"id": "pay_x", "object": "payment", "status": "pending", "payment_url": payURL}
		record := func(db *store.DB) {
			t.Helper()
			if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.RecordEvent(ctx, acct, "payment.pending", payment) }); err != nil {
				t.Fatal(err)
			}
		}
		record(plain)
		record(plain)
		tenants, _, err := e.DB.Read().ListTenants(ctx, acct, store.TenantFilter{}, store.Page{Limit: 1})
		if err != nil || len(tenants) != 1 {
			t.Fatalf("tenants %v %v", tenants, err)
		}
		var n *rental.Notification
		err = e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			n, err = tx.CreateNotification(ctx, acct, store.NotifySpec{Type: rental.NotifyMessage, TenantID: tenants[0].ID, Text: "hello"}, rental.PaymentPage{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		notice := `{"type":"reminder","property":"Baan Suk","room":"204","total":439000,"pay_url":"` + payURL + `"}`
		if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE notifications SET notice = $2 WHERE id = $1`, n.ID, notice); err != nil {
			t.Fatal(err)
		}

		// read gives what each reader sees: the events' data, the
		// deliveries' bodies (as listed and as their jobs load them), the
		// notice as its send job loads it.
		read := func() (events, bodies []string, pay string) {
			t.Helper()
			q := e.DB.Read()
			list, _, err := q.ListEvents(ctx, acct, store.EventFilter{Prefixes: []string{"payment."}}, e.Clock.Now(), store.Page{Limit: 10})
			if err != nil || len(list) != 2 {
				t.Fatalf("events %v %v", list, err)
			}
			for _, ev := range list {
				one, err := q.GetEvent(ctx, acct, ev.ID, store.EventFilter{Prefixes: []string{"payment."}}, e.Clock.Now())
				if err != nil || string(one.Data) != string(ev.Data) {
					t.Fatalf("event %s: %s %v, listed %s", ev.ID, one.Data, err, ev.Data)
				}
				events = append(events, string(ev.Data))
			}
			ds, _, err := q.ListDeliveries(ctx, f.App.ID, rental.ModeTest, ep.ID, store.DeliveryFilter{}, store.Page{Limit: 10})
			if err != nil || len(ds) != 2 {
				t.Fatalf("deliveries %v %v", ds, err)
			}
			for _, d := range ds {
				w, err := q.DeliveryWork(ctx, d.ID)
				if err != nil || w.Body != d.Body {
					t.Fatalf("delivery %s: %q %v, listed %q", d.ID, w.Body, err, d.Body)
				}
				bodies = append(bodies, d.Body)
			}
			w, err := q.SendWork(ctx, n.ID)
			if err != nil {
				t.Fatal(err)
			}
			return events, bodies, w.Notice.PayURL
		}
		events, bodies, pay := read()
		for _, text := range append(events, bodies...) {
			if !strings.Contains(text, `"payment_url":"`+payURL+`"`) {
				t.Fatalf("stored in clear, read back as %s", text)
			}
		}
		if pay != payURL {
			t.Fatalf("the notice's link %q", pay)
		}
		clear := 0
		for _, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				clear++
			}
		}
		if clear != 5 {
			t.Fatalf("%d rows hold the token before the migration, want 5 (2 events, 2 deliveries, 1 notice)", clear)
		}

		if err := e.DB.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				t.Errorf("table %s still holds the token in clear: %.300s", table, row)
			}
		}
		again, againBodies, againPay := read()
		if !slices.Equal(again, events) || !slices.Equal(againBodies, bodies) || againPay != pay {
			t.Fatalf("after sealing: events %v\nbodies %v\nlink %s", again, againBodies, againPay)
		}
		// Written from now on with the secret: sealed at once.
		record(e.DB)
		for table, row := range storetest.EveryRow(t, e.DB) {
			if strings.Contains(row, token) {
				t.Errorf("table %s holds a new copy of the token in clear: %.300s", table, row)
			}
		}
		// A copy that holds no link stays in clear JSON.
		_, _, _, deliver := testEndpoint(t, e)
		deliver()
		var plainData string
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT data FROM events WHERE type = 'webhook.test'`).Scan(&plainData); err != nil || !strings.HasPrefix(plainData, `{"id":"we_`) {
			t.Fatalf("webhook.test stored as %.100s (%v)", plainData, err)
		}
		// A process without the secret cannot read a sealed copy; a sealed
		// copy moved to another row does not open.
		if _, _, err := plain.Read().ListEvents(ctx, acct, store.EventFilter{Prefixes: []string{"payment."}}, e.Clock.Now(), store.Page{Limit: 10}); err == nil {
			t.Fatal("a process without the server secret read sealed events")
		}
		var first, second string
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT MIN(id), MAX(id) FROM events WHERE type = 'payment.pending'`).Scan(&first, &second); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DB.WritePool().ExecContext(ctx, `UPDATE events SET data = (SELECT data FROM events WHERE id = $1) WHERE id = $2`, first, second); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DB.Read().GetEvent(ctx, acct, second, store.EventFilter{Prefixes: []string{"payment."}}, e.Clock.Now()); err == nil {
			t.Fatal("a sealed copy moved to another row opened")
		}
	})
}
