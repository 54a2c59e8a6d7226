package store_test

import (
	"slices"
	"testing"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

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
