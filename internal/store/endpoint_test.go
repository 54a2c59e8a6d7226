package store_test

import (
	"context"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// An endpoint whose every delivery fails for 3 days is disabled, with a
// reason; a success in between starts the count again; enabling it clears
// the record. A disabled endpoint gets no new deliveries.
func TestEndpointDisabledAfterThreeDaysOfFailures(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f, acct, ep, deliver := testEndpoint(t, e)
		// event makes a delivery and returns it as its job would load it.
		event := func() *store.DeliveryWork {
			t.Helper()
			w, err := e.DB.Read().DeliveryWork(ctx, deliver())
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		attempt := func(d *store.DeliveryWork, status int) {
			t.Helper()
			o := store.AttemptOutcome{Attempt: rental.Attempt{AttemptedAt: rental.Time{Time: e.Clock.Now()}, StatusCode: &status}}
			if status >= 300 {
				next := e.Clock.Now().Add(time.Hour)
				o.Next = &next
			}
			err := e.DB.InTx(ctx, func(tx *store.Tx) error {
				moved, err := tx.RecordAttempt(ctx, d, o)
				if err == nil && !moved {
					t.Errorf("attempt of %s did not move it", d.ID)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		status := func() *rental.WebhookEndpoint {
			got, err := e.DB.Read().GetEndpoint(ctx, f.App.ID, rental.ModeTest, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		attempt(event(), 500)
		e.Clock.Advance(48 * time.Hour)
		attempt(event(), 200) // one success: the count starts again
		e.Clock.Advance(time.Hour)
		attempt(event(), 500)
		e.Clock.Advance(71 * time.Hour)
		attempt(event(), 502)
		if s := status(); s.Status != rental.EndpointEnabled {
			t.Fatalf("disabled after 71 hours of failures: %+v", s)
		}
		e.Clock.Advance(2 * time.Hour)
		d := event()
		attempt(d, 503)
		s := status()
		if s.Status != rental.EndpointDisabled || s.DisabledReason == nil {
			t.Fatalf("after 73 hours of failures: %+v", s)
		}
		// Disabled: new events make no deliveries to it.
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.RecordEvent(ctx, acct, "property.updated", map[string]string{"id": "prop_x", "object": "property"})
		})
		if err != nil {
			t.Fatal(err)
		}
		list, _, err := e.DB.Read().ListDeliveries(ctx, f.App.ID, rental.ModeTest, ep.ID, store.DeliveryFilter{}, store.Page{Limit: 100})
		if err != nil || len(list) != 5 {
			t.Fatalf("%d deliveries, want 5 (%v)", len(list), err)
		}
		// Enabling clears the reason and the record of failures.
		enabled := rental.EndpointEnabled
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.UpdateEndpoint(ctx, f.App.ID, rental.ModeTest, ep.ID, rental.EndpointSpec{Status: &enabled})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		attempt(event(), 500)
		if s := status(); s.Status != rental.EndpointEnabled || s.DisabledReason != nil {
			t.Fatalf("after enabling and one failure: %+v", s)
		}
	})
}

// A reading's event goes to the landlord's endpoints that want it. The
// reading reads them with its room (on PostgreSQL in its first round trip;
// on SQLite once, not once an event of a batch), and they stay from then
// on: on PostgreSQL an endpoint deleted meanwhile goes only once the
// reading committed, and takes the reading's delivery with it, while the
// reading commits as if nothing happened.
func TestReadingReadsEndpointsAhead(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f, acct, ep, _ := testEndpoint(t, e)
		pg := e.DB.Engine() == store.Postgres
		var room *rental.Room
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			prop, err := tx.CreateProperty(ctx, acct, newProperty(t, "Baan Ahead"))
			if err == nil {
				room, err = tx.CreateRoom(ctx, acct, rental.Room{PropertyID: prop.ID, Number: "1", MonthlyRent: 350000, Status: "vacant"})
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		deliveries := func() (n int) {
			t.Helper()
			if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND event_type = 'meter.reading.created'`, ep.ID).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		reading := func(month string) *store.Tx {
			t.Helper()
			tx, err := e.DB.BeginAhead(ctx, acct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tx.Rollback() })
			part := rental.PartInput{Set: true, Current: rental.Of[rental.Quantity](10)}
			if _, err := tx.CreateReading(ctx, acct, store.ReadingInput{RoomID: room.ID, Month: month, Electricity: part, Water: part}); err != nil {
				t.Fatal(err)
			}
			if !tx.EndpointsReadAhead() {
				t.Fatalf("endpoints not read with the reading on %s", e.DB.Engine())
			}
			return tx
		}
		if err := reading("2026-10").Commit(); err != nil {
			t.Fatal(err)
		}
		if n := deliveries(); n != 1 {
			t.Fatalf("%d deliveries of the reading, want 1", n)
		}
		if !pg {
			return // one writer: nothing is deleted while a reading is made
		}
		tx := reading("2026-11")
		deleted := make(chan error, 1)
		go func() {
			deleted <- e.DB.InTx(context.Background(), func(tx *store.Tx) error {
				return tx.DeleteEndpoint(context.Background(), f.App.ID, rental.ModeTest, ep.ID)
			})
		}()
		// The deletion waits for the reading's lock on the endpoint.
		for waiting := 0; waiting == 0; {
			select {
			case err := <-deleted:
				t.Fatalf("the endpoint was deleted while a reading that read it was open (%v)", err)
			case <-time.After(10 * time.Millisecond):
			}
			err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM webhook_endpoints%'`).Scan(&waiting)
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("the reading, with its endpoint being deleted: %v", err)
		}
		if err := <-deleted; err != nil {
			t.Fatal(err)
		}
		if n := deliveries(); n != 0 {
			t.Fatalf("%d deliveries left of a deleted endpoint", n)
		}
		var readings int
		if err := e.DB.WritePool().QueryRowContext(ctx, `SELECT count(*) FROM meter_readings WHERE room_id = $1`, room.ID).Scan(&readings); err != nil || readings != 2 {
			t.Fatalf("%d readings (%v), want 2", readings, err)
		}
	})
}
