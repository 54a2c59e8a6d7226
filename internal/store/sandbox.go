package store

import (
	"context"
	"fmt"
	"time"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
)

// sampleRoom is one room of the sandbox's sample data; a tenant name makes
// it occupied.
type sampleRoom struct {
	number string
	floor  int64
	rent   int64
	status string
	tenant string
	phone  string
}

// sampleProperty is one property of the sample data.
type sampleProperty struct {
	change rental.PropertyChange
	rooms  []sampleRoom
}

// sampleData is what every sandbox starts with: a Bangkok dormitory with
// metered water and a Chiang Mai apartment with flat water, eight rooms in
// mixed states.
func sampleData() []sampleProperty {
	flat := int64(10_000)
	return []sampleProperty{
		{
			change: rental.PropertyChange{
				Name: rental.Of("Baan Suk Dormitory"), Address: rental.Of("99/1 Soi Pracha Uthit 33, Thung Khru, Bangkok 10140"),
				ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800), DueDay: rental.Of[int64](5),
			},
			rooms: []sampleRoom{
				{"101", 1, 350_000, rental.RoomOccupied, "Somchai Jaidee", "081-234-5678"},
				{"102", 1, 350_000, rental.RoomOccupied, "Suda Rakthai", "089-876-5432"},
				{"103", 1, 380_000, rental.RoomOccupied, "Anan Srisuk", "086-111-2233"},
				{"201", 2, 400_000, rental.RoomVacant, "", ""},
				{"202", 2, 400_000, rental.RoomMaintenance, "", ""},
			},
		},
		{
			change: rental.PropertyChange{
				Name: rental.Of("Chiang Mai Garden Apartment"), Address: rental.Of("88 Huay Kaew Road, Suthep, Mueang Chiang Mai 50200"),
				ElectricityRate: rental.Of[int64](700), WaterBilling: rental.Of(rental.WaterFlatPerRoom), WaterRate: rental.Of[int64](0),
				WaterFlatAmount: rental.Of(flat), DueDay: rental.Of[int64](10),
			},
			rooms: []sampleRoom{
				{"A1", 1, 550_000, rental.RoomOccupied, "Nittaya Boonmee", "092-333-4455"},
				{"A2", 1, 550_000, rental.RoomOccupied, "Kittisak Wongsa", "095-555-6677"},
				{"A3", 2, 600_000, rental.RoomVacant, "", ""},
			},
		},
	}
}

// UnreachableSandboxTenant is the sandbox tenant whose LINE never takes a
// message: its notifications end failed after the retries.
const UnreachableSandboxTenant = "Kittisak Wongsa"

// sandboxReceiver is where sandbox QRs point: a biller ID no bank routes,
// so a sandbox QR scanned by mistake pays nobody; its holder's name says
// as much on the payment page.
var sandboxReceiver = promptpay.Receiver{Kind: promptpay.Biller, ID: "000000000000000", Ref2: "SANDBOX"}

// sandboxReceiverName is the sandbox receiver's account holder.
const sandboxReceiverName = "บัญชีทดสอบ Sandbox (no real account)"

// seedSandbox fills a sandbox account with the sample data, through the
// same methods the API uses, without events (the sandbox starts with a
// clean event log). The two months are last month (paid, with the payments
// that paid it) and this month (issued), in Thailand time.
func (tx *Tx) seedSandbox(ctx context.Context, acct *rental.Account) error {
	tx.quiet = true
	defer func() { tx.quiet = false }()
	if _, err := tx.SetPromptPay(ctx, acct.LandlordID, sandboxReceiver, sandboxReceiverName); err != nil {
		return err
	}
	thisMonth := rental.MonthOf(tx.Now)
	lastMonth := rental.PreviousMonth(thisMonth)
	n := 0
	for _, sp := range sampleData() {
		p, err := rental.NewProperty(sp.change)
		if err != nil {
			return err
		}
		prop, err := tx.CreateProperty(ctx, acct, p)
		if err != nil {
			return err
		}
		for _, sr := range sp.rooms {
			n++
			r, err := rental.NewRoom(prop.ID, rental.RoomChange{Number: rental.Of(sr.number), Floor: rental.Of(sr.floor), MonthlyRent: rental.Of(sr.rent)})
			if err != nil {
				return err
			}
			room, err := tx.CreateRoom(ctx, acct, r)
			if err != nil {
				return err
			}
			if sr.status == rental.RoomMaintenance {
				if _, err := tx.UpdateRoom(ctx, acct, room.ID, rental.RoomChange{Status: rental.Of(sr.status)}); err != nil {
					return err
				}
			}
			if sr.tenant == "" {
				continue
			}
			t, err := rental.NewTenant(rental.TenantChange{Name: rental.Of(sr.tenant), Phone: rental.Of(sr.phone)},
				rental.Time{Time: tx.Now.AddDate(0, -(n%5)-3, 0)})
			if err != nil {
				return err
			}
			tenant, err := tx.MoveIn(ctx, acct, room.ID, t)
			if err != nil {
				return err
			}
			// Sandbox tenants are registered with the chat channel, as if
			// they had sent their codes; Kittisak's LINE is never reached,
			// so a developer sees a notification fail after its retries.
			if _, err := tx.c.ExecContext(ctx, `UPDATE tenants SET chat_registered = TRUE, chat_registration_code = NULL,
					chat_unreachable = $2 WHERE id = $1`, tenant.ID, sr.tenant == UnreachableSandboxTenant); err != nil {
				return fmt.Errorf("store: sandbox chat: %w", err)
			}
			// Plausible meters: 90-160 kWh and 4-8 m³ a month.
			e := rental.Quantity(1_000_000 + n*137_500)
			w := rental.Quantity(300_000 + n*11_200)
			for i, month := range []string{lastMonth, thisMonth} {
				e += rental.Quantity(90_000 + (n*17+i*29)%70*1000 + 500*(n%2))
				w += rental.Quantity(4_000 + (n*3+i)%5*1000)
				in := ReadingInput{RoomID: room.ID, Month: month,
					Electricity: rental.PartInput{Set: true, Current: rental.Of(e)},
					Water:       rental.PartInput{Set: true, Current: rental.Of(w)}}
				if i == 0 {
					in.Electricity.Previous = rental.Of(e - rental.Quantity(95_000+n*3000))
					in.Water.Previous = rental.Of(w - rental.Quantity(5_000))
				}
				if _, err := tx.CreateReading(ctx, acct, in); err != nil {
					return err
				}
				bill, err := tx.CreateBill(ctx, acct, room.ID, month, true)
				if err != nil {
					return err
				}
				if month == lastMonth {
					if err := tx.seedPayment(ctx, acct, bill); err != nil {
						return err
					}
				}
			}
		}
	}
	return tx.seedSlips(ctx, acct)
}

// seedPayment records a confirmed QR payment of a whole bill, paid a few
// days before it fell due.
func (tx *Tx) seedPayment(ctx context.Context, acct *rental.Account, b *rental.Bill) error {
	due, _ := time.ParseInLocation(time.DateOnly, b.DueDate, rental.Bangkok)
	paid := due.Add(-50 * time.Hour)
	if paid.After(tx.Now) {
		paid = tx.Now
	}
	_, err := tx.c.ExecContext(ctx, `INSERT INTO payments (id, landlord_id, bill_id, status, amount, amount_paid, qr_payload,
			provider_ref, expires_at, paid_at, created_at, updated_at)
		VALUES ($1, $2, $3, 'paid', $4, $4, '', $5, $6, $7, $8, $7)`,
		rental.NewID(rental.PrefixPayment), acct.LandlordID, b.ID, b.Total, "sandbox-"+b.ID, ms(paid.Add(10*time.Minute)), ms(paid), ms(paid.Add(-5*time.Minute)))
	if err != nil {
		return fmt.Errorf("store: seed payment: %w", err)
	}
	pt := rental.Time{Time: paid.UTC()}
	b.Status, b.AmountPaid, b.PaidAt = rental.BillPaid, b.Total, &pt
	return tx.saveBill(ctx, acct, b)
}

// ResetSandbox deletes everything in a sandbox account (its events and its
// receipts' numbering too), returns its clock to real time and puts the
// sample data back, as the landlord's one writer (it claims the account
// when the caller has not).
func (tx *Tx) ResetSandbox(ctx context.Context, acct *rental.Account) error {
	if err := acct.CheckReset(); err != nil {
		return err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return err
	}
	if err := tx.flush(ctx); err != nil { // events recorded earlier go too
		return err
	}
	if err := tx.resetClock(ctx, acct.LandlordID); err != nil {
		return err
	}
	// Paced sends and the day's reminders start again with the clock.
	if _, err := tx.c.ExecContext(ctx, `UPDATE landlords SET send_slot = 0, reminders_day = NULL WHERE id = $1`, acct.LandlordID); err != nil {
		return fmt.Errorf("store: reset sandbox: %w", err)
	}
	tx.changedRooms()
	for _, table := range []string{"slip_images", "slips", "payment_confirmations", "payments", "payment_links", "bills", "charges", "meter_readings", "meters", "tenants", "rooms", "properties", "events", "receipt_counters"} {
		if _, err := tx.c.ExecContext(ctx, `DELETE FROM `+table+` WHERE landlord_id = $1`, acct.LandlordID); err != nil {
			return fmt.Errorf("store: reset sandbox: %w", err)
		}
	}
	return tx.seedSandbox(ctx, acct)
}
