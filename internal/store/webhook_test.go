package store_test

import (
	"context"
	"slices"
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

// Attempts recorded together in one transaction come out as if recorded one
// by one: each delivery moves by its own outcome, each attempt is logged
// with its number, an attempt of a stale generation is logged but moves
// nothing, one of a deleted delivery is dropped, and the endpoint's record
// of failing follows the batch's order (a failure after a success starts
// the record again from now).
func TestRecordAttemptsInOneBatch(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f, _, ep, deliver := testEndpoint(t, e)
		event := func() *store.DeliveryWork {
			t.Helper()
			id := deliver()
			ws, err := e.DB.Read().DeliveryWorks(ctx, []string{id})
			if err != nil || ws[0] == nil {
				t.Fatalf("load %s: %v %v", id, ws, err)
			}
			return ws[0]
		}
		outcome := func(status int, final bool) store.AttemptOutcome {
			o := store.AttemptOutcome{Attempt: rental.Attempt{AttemptedAt: rental.Time{Time: e.Clock.Now()}, StatusCode: &status}, Final: final}
			if status >= 300 && !final {
				next := e.Clock.Now().Add(time.Hour).Truncate(time.Millisecond)
				o.Next = &next
			}
			return o
		}
		record := func(recs ...store.AttemptRecord) []bool {
			t.Helper()
			var moved []bool
			err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
				moved, err = tx.RecordAttempts(ctx, recs)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return moved
		}
		get := func(id string) *rental.Delivery {
			t.Helper()
			d, err := e.DB.Read().GetDelivery(ctx, f.App.ID, rental.ModeTest, id)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		enabled := func() bool {
			t.Helper()
			got, err := e.DB.Read().GetEndpoint(ctx, f.App.ID, rental.ModeTest, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.Status == rental.EndpointEnabled
		}

		// A failure starts the endpoint's record 48 hours before the batch.
		old := event()
		if moved := record(store.AttemptRecord{Work: old, Outcome: outcome(500, false)}); !moved[0] {
			t.Fatal("first failure did not move its delivery")
		}
		e.Clock.Advance(48 * time.Hour)

		ok, retry, final, stale := event(), event(), event(), event()
		var resent *rental.Delivery
		err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			resent, err = tx.Resend(ctx, f.App.ID, rental.ModeTest, stale.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		gone := *old
		gone.ID = "dlv_gone"
		moved := record(
			store.AttemptRecord{Work: ok, Outcome: outcome(200, false)},
			store.AttemptRecord{Work: stale, Outcome: outcome(200, false)},
			store.AttemptRecord{Work: &gone, Outcome: outcome(200, false)},
			store.AttemptRecord{Work: final, Outcome: outcome(410, true)},
			store.AttemptRecord{Work: retry, Outcome: outcome(503, false)},
		)
		if want := []bool{true, false, false, true, true}; !slices.Equal(moved, want) {
			t.Fatalf("moved %v, want %v", moved, want)
		}
		for _, c := range []struct {
			id, status string
			next       bool
		}{{ok.ID, rental.DeliverySucceeded, false}, {final.ID, rental.DeliveryFailed, false}, {retry.ID, rental.DeliveryPending, true},
			{stale.ID, rental.DeliveryPending, true}} {
			d := get(c.id)
			if d.Status != c.status || (d.NextAttemptAt != nil) != c.next || d.AttemptCount != 1 || len(d.Attempts) != 1 || d.Attempts[0].Attempt != 1 {
				t.Errorf("%s: %+v, want %s with one attempt (next attempt: %v)", c.id, d, c.status, c.next)
			}
		}
		if d := get(retry.ID); !d.NextAttemptAt.Equal(e.Clock.Now().Add(time.Hour).Truncate(time.Millisecond)) {
			t.Errorf("retry due %v, want in an hour", d.NextAttemptAt)
		}
		if d := get(stale.ID); d.NextAttemptAt == nil || !d.NextAttemptAt.Equal(resent.NextAttemptAt.Time) {
			t.Errorf("stale attempt moved the resent delivery: %+v, resent %+v", d, resent)
		}

		// A delivery twice in one batch is refused.
		twice := event()
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.RecordAttempts(ctx, []store.AttemptRecord{{Work: twice, Outcome: outcome(200, false)}, {Work: twice, Outcome: outcome(200, false)}})
			return err
		})
		if err == nil {
			t.Fatal("a delivery twice in one batch was recorded")
		}

		// The success in the batch cleared the record and the failure after
		// it started it again: 71 hours on the endpoint has failed for less
		// than 3 days, 73 hours on it has not.
		e.Clock.Advance(71 * time.Hour)
		record(store.AttemptRecord{Work: event(), Outcome: outcome(500, false)})
		if !enabled() {
			t.Fatal("disabled 71 hours after the batch's failure")
		}
		e.Clock.Advance(2 * time.Hour)
		record(store.AttemptRecord{Work: event(), Outcome: outcome(500, false)})
		if enabled() {
			t.Fatal("still enabled 73 hours after the batch's failure")
		}
	})
}

// testEndpoint makes a developer with a sandbox endpoint that takes every
// event, and a function that records a webhook.test event to it and
// returns the ID of the delivery made.
func testEndpoint(t *testing.T, e storetest.Engine) (storetest.Fixture, *rental.Account, *rental.WebhookEndpoint, func() string) {
	t.Helper()
	ctx := t.Context()
	f := storetest.NewFixture(t, e.DB, rental.PlanPro)
	acct := f.Sandbox(t, e.DB)
	var ep *rental.WebhookEndpoint
	err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
		url := "https://hooks.example.com/"
		ep, err = tx.CreateEndpoint(ctx, f.App, rental.ModeTest, rental.EndpointSpec{URL: &url, EnabledEvents: []string{"*"}}, storetest.Secret(t))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, acct, ep, func() string {
		t.Helper()
		var id string
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			d, err := tx.RecordTestEvent(ctx, acct, ep)
			if d != nil {
				id = d.ID
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

// A reading's event goes to the landlord's endpoints that want it. On
// PostgreSQL the reading reads them with its room, in its first round
// trip, and they stay from then on: an endpoint deleted meanwhile goes only
// once the reading committed, and takes the reading's delivery with it,
// while the reading commits as if nothing happened.
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
			if tx.EndpointsReadAhead() != pg {
				t.Fatalf("endpoints read ahead: %v on %s", !pg, e.DB.Engine())
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
