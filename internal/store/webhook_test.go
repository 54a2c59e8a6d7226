package store_test

import (
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
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
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
		// event makes a delivery and returns it as its job would load it.
		event := func() *store.DeliveryWork {
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
			w, err := e.DB.Read().DeliveryWork(ctx, id)
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
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
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
