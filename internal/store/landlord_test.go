package store_test

import (
	"fmt"
	"strings"
	"testing"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// A landlord's own account: counts across its data, the receiver, and
// plan changes that the data must fit, with QR payments following the
// plan; a sandbox landlord is nobody's own account.
func TestLandlordSettings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		for _, name := range []string{"Baan Suk", "Baan Rak"} {
			p := newProperty(t, name)
			err := e.DB.InTx(ctx, func(tx *store.Tx) error {
				prop, err := tx.CreateProperty(ctx, acct, p)
				if err != nil {
					return err
				}
				for _, n := range []string{"101", "102", "103"} {
					if _, err := tx.CreateRoom(ctx, acct, rental.Room{PropertyID: prop.ID, Number: n, MonthlyRent: 350000, Status: "vacant"}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		l, err := e.DB.Read().Landlord(ctx, acct.LandlordID)
		if err != nil || l.Usage != (rental.Capacity{Properties: 2, Rooms: 6}) || l.Plan != rental.LandlordStandard || !l.QRPayments || l.Receiver != nil {
			t.Fatalf("landlord %+v (%v)", l, err)
		}
		if _, err := e.DB.Read().Landlord(ctx, f.Sandbox(t, e.DB).LandlordID); !rental.IsNotFound(err) {
			t.Fatalf("a sandbox landlord: %v", err)
		}

		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.SetPromptPay(ctx, acct.LandlordID, promptpay.Receiver{Kind: promptpay.Mobile, ID: "081-234-5678"}, "")
			return err
		})
		if l, _ = e.DB.Read().Landlord(ctx, acct.LandlordID); err != nil || l.Receiver == nil || l.Receiver.ID != "0812345678" {
			t.Fatalf("receiver %+v (%v)", l.Receiver, err)
		}

		change := func(plan rental.LandlordPlan) error {
			return e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.ChangeLandlordPlan(ctx, acct.LandlordID, plan) })
		}
		if err := change(rental.LandlordFree); codeOf(err) != "plan_too_small" {
			t.Fatalf("two properties on free: %v", err)
		}
		if err := change(rental.LandlordPro); err != nil {
			t.Fatal(err)
		}
		a, _ := e.DB.Read().GetAccount(ctx, f.App.ID, acct.ID)
		if a.Plan != rental.LandlordPro || !a.QRPayments {
			t.Fatalf("pro: %+v", a)
		}
		// Down to one property, which free holds: QR payments go with it.
		err = e.DB.InTx(ctx, func(tx *store.Tx) error {
			props, _, err := tx.ListProperties(ctx, acct, store.Page{Limit: 10})
			if err != nil {
				return err
			}
			rooms, _, err := tx.ListRooms(ctx, acct, store.RoomFilter{PropertyID: props[0].ID}, store.Page{Limit: 10})
			if err != nil {
				return err
			}
			for _, r := range rooms {
				if err := tx.DeleteRoom(ctx, acct, r.ID); err != nil {
					return err
				}
			}
			return tx.DeleteProperty(ctx, acct, props[0].ID)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := change(rental.LandlordFree); err != nil {
			t.Fatal(err)
		}
		if a, _ = e.DB.Read().GetAccount(ctx, f.App.ID, acct.ID); a.Plan != rental.LandlordFree || a.QRPayments {
			t.Fatalf("free: %+v", a)
		}
		if err := change("gold"); codeOf(err) != "invalid_parameter" {
			t.Fatalf("unknown plan: %v", err)
		}
		err = e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.ChangeLandlordPlan(ctx, "ll_nobody", rental.LandlordPro) })
		if !rental.IsNotFound(err) {
			t.Fatalf("unknown landlord: %v", err)
		}
	})
}

// A landlord's connections: the applications linked now, each with its
// name, company, grant and latest approval; one disconnected leaves the
// list, and comes back with the same account when approved again.
// Another landlord's account is not found.
func TestConnections(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		var other *rental.Application
		var ll, stranger string
		err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			other, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: f.Developer.ID, Name: "Accounting", Company: "Acme Co",
				Scopes: rental.Scopes{rental.ScopeBillsRead, rental.ScopePropertiesRead}})
			if err != nil {
				return err
			}
			if ll, err = tx.CreateLandlord(ctx, "Somchai", rental.LandlordFree); err != nil {
				return err
			}
			stranger, err = tx.CreateLandlord(ctx, "Somsak", rental.LandlordFree)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		link := func(appID, landlord string, granted rental.Scopes) *rental.Account {
			var a *rental.Account
			if err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) { a, err = tx.LinkAccount(ctx, appID, landlord, granted); return err }); err != nil {
				t.Fatal(err)
			}
			return a
		}
		if _, err := e.DB.Read().LandlordAccount(ctx, f.App.ID, ll); !rental.IsNotFound(err) {
			t.Fatalf("never linked: %v", err)
		}
		first := link(f.App.ID, ll, rental.Scopes{rental.ScopeRoomsRead})
		second := link(other.ID, ll, rental.Scopes{rental.ScopeBillsRead})
		link(other.ID, stranger, rental.Scopes{rental.ScopeBillsRead})
		list, err := e.DB.Read().Connections(ctx, ll)
		if err != nil || len(list) != 2 || list[0].Application != "Accounting" || list[0].Company != "Acme Co" || list[0].AccountID != second.ID ||
			list[1].Application != "App" || list[1].ApplicationID != f.App.ID || list[1].Granted.String() != "rooms:read" || list[1].ApprovedAt.IsZero() {
			t.Fatalf("connections %+v (%v)", list, err)
		}
		if _, err := e.DB.Read().Connection(ctx, stranger, first.ID); !rental.IsNotFound(err) {
			t.Fatalf("another landlord's account: %v", err)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.RevokeAccount(ctx, f.App.ID, first.ID) }); err != nil {
			t.Fatal(err)
		}
		if _, err := e.DB.Read().Connection(ctx, ll, first.ID); !rental.IsNotFound(err) {
			t.Fatalf("a disconnected application: %v", err)
		}
		if list, _ := e.DB.Read().Connections(ctx, ll); len(list) != 1 || list[0].AccountID != second.ID {
			t.Fatalf("after disconnecting: %+v", list)
		}
		if a, err := e.DB.Read().LandlordAccount(ctx, f.App.ID, ll); err != nil || a.ID != first.ID || !a.Revoked {
			t.Fatalf("the ended link: %+v (%v)", a, err)
		}
		e.Clock.Advance(rental.SessionIdle)
		again := link(f.App.ID, ll, rental.Scopes{rental.ScopeRoomsRead, rental.ScopeBillsRead})
		c, err := e.DB.Read().Connection(ctx, ll, first.ID)
		if err != nil || again.ID != first.ID || c.Granted.String() != "rooms:read bills:read" || !c.ApprovedAt.After(list[1].ApprovedAt.Time) {
			t.Fatalf("relinked: %+v %+v (%v)", again, c, err)
		}
	})
}

// An application's scopes change; grants stay as the landlords gave them.
func TestSetApplicationScopes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordFree, rental.Scopes{rental.ScopeRoomsRead})
		more := rental.Scopes{rental.ScopePaymentsRead, rental.ScopeRoomsRead}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationScopes(ctx, f.App.ID, more) }); err != nil {
			t.Fatal(err)
		}
		app, _ := e.DB.Read().GetApplication(ctx, f.App.ID)
		a, _ := e.DB.Read().GetAccount(ctx, f.App.ID, acct.ID)
		if app.Scopes.String() != "rooms:read payments:read" || a.Granted.String() != "rooms:read" {
			t.Fatalf("application %v, grant %v", app.Scopes, a.Granted)
		}
		// A scope removed leaves the grants; adding it back needs approval.
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			return tx.SetApplicationScopes(ctx, f.App.ID, rental.Scopes{rental.ScopePaymentsRead})
		}); err != nil {
			t.Fatal(err)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationScopes(ctx, f.App.ID, more) }); err != nil {
			t.Fatal(err)
		}
		if a, _ := e.DB.Read().GetAccount(ctx, f.App.ID, acct.ID); a.Granted.String() != "" {
			t.Fatalf("a removed scope came back without approval: %v", a.Granted)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationScopes(ctx, "app_nope", more) }); !rental.IsNotFound(err) {
			t.Fatalf("unknown application: %v", err)
		}
	})
}

func codeOf(err error) string {
	if e, ok := rental.AsError(err); ok {
		return e.Code
	}
	return ""
}

// The PromptPay receiver's account holder: kept beside the receiver (a
// bad name is 400 invalid_parameter on "name" and changes nothing, no name
// clears it), and given to the payment page with the bill; the sandbox's
// receiver has one too.
func TestPromptPayReceiverName(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		set := func(landlord, id, name string) error {
			return e.DB.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.SetPromptPay(ctx, landlord, promptpay.Receiver{Kind: promptpay.Mobile, ID: id}, name)
				return err
			})
		}
		if err := set(acct.LandlordID, "081-234-5678", "สมชาย ใจดี"); err != nil {
			t.Fatal(err)
		}
		l, err := e.DB.Read().Landlord(ctx, acct.LandlordID)
		if err != nil || l.ReceiverName != "สมชาย ใจดี" || l.Receiver.ID != "0812345678" {
			t.Fatalf("landlord %+v (%v)", l, err)
		}
		for _, bad := range []string{"Somchai\x00", "Som\nchai", strings.Repeat("ก", rental.MaxNameLen+1), "  ", "\u200b"} {
			err := set(acct.LandlordID, "0899999999", bad)
			if e, ok := rental.AsError(err); !ok || e.Code != "invalid_parameter" || e.Param != "name" {
				t.Fatalf("name %q: %v", bad, err)
			}
		}
		if l, _ = e.DB.Read().Landlord(ctx, acct.LandlordID); l.ReceiverName != "สมชาย ใจดี" || l.Receiver.ID != "0812345678" {
			t.Fatalf("a refused name changed the receiver: %+v", l)
		}
		if err := set(acct.LandlordID, "0812345678", ""); err != nil {
			t.Fatal(err)
		}
		if l, _ = e.DB.Read().Landlord(ctx, acct.LandlordID); l.ReceiverName != "" {
			t.Fatalf("no name kept %q", l.ReceiverName)
		}

		// The payment page's checkout carries the name: the sandbox's own,
		// then the one set.
		sandbox := f.Sandbox(t, e.DB)
		open := func() *store.Checkout {
			t.Helper()
			var co *store.Checkout
			err := e.DB.InTx(ctx, func(tx *store.Tx) error {
				bills, _, err := tx.ListBills(ctx, sandbox, store.BillFilter{Status: rental.BillIssued}, store.Page{Limit: 1})
				if err != nil || len(bills) == 0 {
					return fmt.Errorf("no issued sandbox bill (%w)", err)
				}
				link, _, err := tx.CreatePaymentLink(ctx, sandbox, bills[0].ID, rental.NewPaymentPage("http://127.0.0.1"))
				if err != nil {
					return err
				}
				co, err = tx.OpenPayment(ctx, link.URL[strings.LastIndex(link.URL, "/")+1:])
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return co
		}
		if co := open(); co.ReceiverName != "บัญชีทดสอบ Sandbox (no real account)" || co.Payment == nil {
			t.Fatalf("the sandbox's checkout: %q %+v", co.ReceiverName, co.Payment)
		}
		if err := set(sandbox.LandlordID, "0812345678", "Baan Suk Co., Ltd."); err != nil {
			t.Fatal(err)
		}
		if co := open(); co.ReceiverName != "Baan Suk Co., Ltd." {
			t.Fatalf("the checkout after a new name: %q", co.ReceiverName)
		}
	})
}

// The counts of a landlord's properties and rooms that the plan's limits
// are checked against follow every way rows come and go: creates, deletes,
// a rolled-back transaction, a sandbox's reset and its sample data.
func TestCapacityCounts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		check := func(acct *rental.Account, step string, want rental.Capacity) {
			t.Helper()
			var counted rental.Capacity
			err := e.DB.WritePool().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM properties WHERE landlord_id = $1),
				(SELECT COUNT(*) FROM rooms WHERE landlord_id = $1)`, acct.LandlordID).Scan(&counted.Properties, &counted.Rooms)
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.DB.Read().Usage(ctx, acct)
			if err != nil || got != counted || (want != rental.Capacity{} && got != want) {
				t.Fatalf("%s: usage %+v (%v), %+v rows, want %+v", step, got, err, counted, want)
			}
		}
		check(acct, "new", rental.Capacity{})
		var props []string
		var rooms []string
		for _, name := range []string{"Baan Suk", "Baan Rak", "Baan Wang"} {
			err := e.DB.InTx(ctx, func(tx *store.Tx) error {
				prop, err := tx.CreateProperty(ctx, acct, newProperty(t, name))
				if err != nil {
					return err
				}
				props = append(props, prop.ID)
				for _, n := range []string{"101", "102"} {
					if name == "Baan Wang" {
						break
					}
					r, err := tx.CreateRoom(ctx, acct, rental.Room{PropertyID: prop.ID, Number: n, MonthlyRent: 350000, Status: "vacant"})
					if err != nil {
						return err
					}
					rooms = append(rooms, r.ID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		check(acct, "created", rental.Capacity{Properties: 3, Rooms: 4})
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.CreateRoom(ctx, acct, rental.Room{PropertyID: props[0], Number: "103", MonthlyRent: 350000, Status: "vacant"}); err != nil {
				return err
			}
			return fmt.Errorf("rolled back")
		})
		if err == nil || err.Error() != "rolled back" {
			t.Fatal(err)
		}
		check(acct, "a room rolled back", rental.Capacity{Properties: 3, Rooms: 4})
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteRoom(ctx, acct, rooms[0]) }); err != nil {
			t.Fatal(err)
		}
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteProperty(ctx, acct, props[2]) }); err != nil {
			t.Fatal(err)
		}
		check(acct, "deleted", rental.Capacity{Properties: 2, Rooms: 3})

		sandbox := f.Sandbox(t, e.DB)
		check(sandbox, "the sandbox's sample", rental.Capacity{})
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.ResetSandbox(ctx, sandbox) }); err != nil {
			t.Fatal(err)
		}
		check(sandbox, "a reset sandbox", rental.Capacity{})
		if u, _ := e.DB.Read().Usage(ctx, sandbox); u.Rooms == 0 || u.Properties == 0 {
			t.Fatalf("the sandbox's sample counts %+v", u)
		}
		check(acct, "the landlord after the sandbox's reset", rental.Capacity{Properties: 2, Rooms: 3})

		// The counts of rows made before the counting began.
		if err := e.DB.MigrateDownTo(ctx, 33); err != nil {
			t.Fatalf("migrate down to 33: %v", err)
		}
		if err := e.DB.Migrate(ctx); err != nil {
			t.Fatalf("migrate up: %v", err)
		}
		check(acct, "migrated", rental.Capacity{Properties: 2, Rooms: 3})
		check(sandbox, "the sandbox migrated", rental.Capacity{})
	})
}
