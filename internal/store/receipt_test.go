package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// payBill pays amount of the bill as the sandbox's provider would: through
// the bill's payment page's QR, confirmed once. It returns the payment.
func payBill(t *testing.T, db *store.DB, acct *rental.Account, billID string, amount int64) *rental.Payment {
	t.Helper()
	p := openPayment(t, db, acct, billID)
	confirm(t, db, p.ID, amount)
	return p
}

// openPayment opens the bill's payment page: a pending payment to confirm.
func openPayment(t *testing.T, db *store.DB, acct *rental.Account, billID string) *rental.Payment {
	t.Helper()
	ctx := t.Context()
	var p *rental.Payment
	err := db.InTx(ctx, func(tx *store.Tx) error {
		l, _, err := tx.CreatePaymentLink(ctx, acct, billID, rental.NewPaymentPage("https://rentapi.test"))
		if err != nil {
			return err
		}
		co, err := tx.OpenPayment(ctx, l.URL[strings.LastIndex(l.URL, "/")+1:])
		if err != nil {
			return err
		}
		if co.Payment == nil {
			return fmt.Errorf("no QR: %s", co.NoQR)
		}
		p = co.Payment
		return nil
	})
	if err != nil {
		t.Fatalf("open payment of %s: %v", billID, err)
	}
	return p
}

// confirm records the sandbox provider's confirmation of amount paid.
func confirm(t *testing.T, db *store.DB, paymentID string, amount int64) {
	t.Helper()
	err := confirmOn(t.Context(), db, paymentID, amount)
	if err != nil {
		t.Fatalf("confirm %s: %v", paymentID, err)
	}
}

func confirmOn(ctx context.Context, db *store.DB, paymentID string, amount int64) error {
	return db.InTx(ctx, func(tx *store.Tx) error {
		_, _, err := tx.ConfirmPayment(ctx, rental.Confirmation{Provider: rental.SandboxProvider, TransactionID: rental.NewID("sbtxn"),
			PaymentID: paymentID, Amount: amount, PaidAt: tx.Now})
		return err
	})
}

// getBill reads a bill back.
func getBill(t *testing.T, db *store.DB, acct *rental.Account, id string) *rental.Bill {
	t.Helper()
	b, err := db.Read().GetBill(t.Context(), acct, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// billsOf lists the account's bills of a status, oldest first.
func billsOf(t *testing.T, db *store.DB, acct *rental.Account, f store.BillFilter) []rental.Bill {
	t.Helper()
	bills, _, err := db.Read().ListBills(t.Context(), acct, f, store.Page{Limit: 100, Asc: true})
	if err != nil {
		t.Fatal(err)
	}
	return bills
}

// numbers are the receipts' numbers of the bills, sorted.
func numbers(bills []rental.Bill) []string {
	var out []string
	for _, b := range bills {
		if b.Receipt != nil {
			out = append(out, b.Receipt.Number)
		}
	}
	slices.Sort(out)
	return out
}

// series is the receipt numbers from..to of a year.
func series(year int, from, to int64) []string {
	var out []string
	for n := from; n <= to; n++ {
		out = append(out, rental.ReceiptNumber(year, n))
	}
	return out
}

// A bill gets its receipt number when it becomes paid, not before (a part
// paid leaves it without), once (a payment to a paid bill changes nothing),
// consecutive with the landlord's others of the year (the sandbox's sample
// bills paid last month took the first five); the year is Bangkok's at the
// time of payment, and a new year starts again at 000001; a sandbox reset
// starts its numbering again. The receipt's page is found by its URL's
// token and by nothing else.
func TestReceiptNumbers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		acct := f.Sandbox(t, e.DB)
		paid := billsOf(t, e.DB, acct, store.BillFilter{Status: rental.BillPaid})
		if got := numbers(paid); !slices.Equal(got, series(2026, 1, 5)) || len(paid) != 5 {
			t.Fatalf("sample receipts %v of %d paid bills", got, len(paid))
		}
		for _, b := range paid {
			if !strings.HasPrefix(b.Receipt.URL, storetest.PublicURL+"/pay/receipt/") || b.Receipt.IssuedAt.IsZero() {
				t.Fatalf("sample receipt %+v", b.Receipt)
			}
		}
		issued := billsOf(t, e.DB, acct, store.BillFilter{Status: rental.BillIssued})
		if len(issued) != 5 {
			t.Fatalf("%d issued sample bills", len(issued))
		}
		for _, b := range issued {
			if b.Receipt != nil {
				t.Fatalf("issued bill %s has receipt %v", b.ID, b.Receipt)
			}
		}

		// A part: no receipt; the rest: the next number.
		a := issued[0]
		first := payBill(t, e.DB, acct, a.ID, 1000)
		if b := getBill(t, e.DB, acct, a.ID); b.Status != rental.BillIssued || b.Receipt != nil {
			t.Fatalf("after a part: %s, receipt %v", b.Status, b.Receipt)
		}
		payBill(t, e.DB, acct, a.ID, a.Total-1000)
		ra := getBill(t, e.DB, acct, a.ID).Receipt
		if ra == nil || ra.Number != "R2026-000006" {
			t.Fatalf("receipt %+v", ra)
		}
		// Money to the paid bill (the first QR, paid late): recorded, the receipt stays.
		confirm(t, e.DB, first.ID, 500)
		if b := getBill(t, e.DB, acct, a.ID); b.AmountPaid != a.Total+500 || *b.Receipt != *ra {
			t.Fatalf("paid again: %d, receipt %+v (was %+v)", b.AmountPaid, b.Receipt, ra)
		}
		payBill(t, e.DB, acct, issued[1].ID, issued[1].Total)
		if r := getBill(t, e.DB, acct, issued[1].ID).Receipt; r == nil || r.Number != "R2026-000007" {
			t.Fatalf("next receipt %+v", r)
		}

		// Its page: by its token only.
		token := ra.URL[strings.LastIndex(ra.URL, "/")+1:]
		page, err := e.DB.Read().OpenReceipt(ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if page.Bill.ID != a.ID || page.Bill.Receipt.Number != ra.Number || page.Tenant == nil || page.Tenant.ID != *a.TenantID ||
			page.Room.ID != a.RoomID || page.Property.ID != a.PropertyID || !page.Sandbox {
			t.Fatalf("receipt page %+v", page)
		}
		var sum int64
		for _, p := range page.Payments {
			if p.Method != rental.PaidByQR || p.PaidAt.IsZero() {
				t.Fatalf("payment %+v", p)
			}
			sum += p.Amount
		}
		if len(page.Payments) != 2 || sum != a.Total+500 {
			t.Fatalf("payments %+v", page.Payments)
		}
		for _, bad := range []string{"", strings.Repeat("a", len(token)), strings.ToUpper(token), token + "a"} {
			if _, err := e.DB.Read().OpenReceipt(ctx, bad); !rental.IsNotFound(err) {
				t.Fatalf("token %q: %v", bad, err)
			}
		}

		// The last minute of the year in Bangkok, then the first of the next.
		e.Clock.Advance(time.Date(2026, 12, 31, 16, 59, 0, 0, time.UTC).Sub(e.Clock.Now()))
		payBill(t, e.DB, acct, issued[2].ID, issued[2].Total)
		e.Clock.Advance(2 * time.Minute)
		payBill(t, e.DB, acct, issued[3].ID, issued[3].Total)
		payBill(t, e.DB, acct, issued[4].ID, issued[4].Total)
		for i, want := range map[int]string{2: "R2026-000008", 3: "R2027-000001", 4: "R2027-000002"} {
			if r := getBill(t, e.DB, acct, issued[i].ID).Receipt; r == nil || r.Number != want {
				t.Errorf("bill %d: receipt %+v, want %s", i, r, want)
			}
		}

		// A reset: the sample's paid bills are the year's first again.
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.ResetSandbox(ctx, acct) }); err != nil {
			t.Fatal(err)
		}
		if got := numbers(billsOf(t, e.DB, acct, store.BillFilter{})); !slices.Equal(got, series(2027, 1, 5)) {
			t.Fatalf("receipts after the reset: %v", got)
		}
		if _, err := e.DB.Read().OpenReceipt(ctx, token); !rental.IsNotFound(err) {
			t.Fatalf("a receipt from before the reset: %v", err)
		}
	})
}

// A live landlord's bill paid by a provider's confirmation gets its
// receipt as a sandbox's does, numbered apart from every other landlord's.
func TestReceiptOfProviderConfirmation(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		acct := f.LinkLandlord(t, e.DB, rental.LandlordStandard, rental.AllScopes)
		bills := newBills(t, e.DB, acct, 1)
		p := openPayment(t, e.DB, acct, bills[0].ID)
		err := e.DB.InTx(ctx, func(tx *store.Tx) error {
			_, _, err := tx.ConfirmPayment(ctx, rental.Confirmation{Provider: "kbank", TransactionID: "kb-1", PaymentID: p.ID,
				Amount: bills[0].Total, PaidAt: tx.Now})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		b := getBill(t, e.DB, acct, bills[0].ID)
		if b.Status != rental.BillPaid || b.Receipt == nil || b.Receipt.Number != "R2026-000001" {
			t.Fatalf("bill %s, receipt %+v", b.Status, b.Receipt)
		}
		// The bill.updated event that says it is paid carries the receipt.
		events, _, err := e.DB.Read().ListEvents(ctx, acct, store.EventFilter{Type: "bill.updated", Prefixes: []string{"bill."}}, e.Clock.Now(), store.Page{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(events) == 0 || !strings.Contains(string(events[0].Data), `"number":"R2026-000001"`) ||
			!strings.Contains(string(events[0].Data), b.Receipt.URL) {
			t.Fatalf("events %v", events)
		}
		// The token that opens the page is stored nowhere in clear: not on
		// the bill, not in the event's copy of it.
		token := b.Receipt.URL[strings.LastIndex(b.Receipt.URL, "/")+1:]
		var clear int
		err = e.DB.WritePool().QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM bills WHERE receipt_url LIKE $1 OR receipt_token_hash LIKE $1)
			+ (SELECT COUNT(*) FROM events WHERE data LIKE $1)`, "%"+token+"%").Scan(&clear)
		if err != nil || clear != 0 {
			t.Fatalf("%d rows hold the receipt's token in clear (%v)", clear, err)
		}
	})
}

// promptpayMobile is a live landlord's PromptPay receiver.
var promptpayMobile = promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}

// newBills makes n issued bills of this month for the landlord, one a room
// of a new property.
func newBills(t *testing.T, db *store.DB, acct *rental.Account, n int) []rental.Bill {
	return storetest.IssuedBills(t, db, acct, rental.PropertyChange{ElectricityRate: rental.Of[int64](800), WaterRate: rental.Of[int64](1800)},
		rental.MonthOf(db.Now()), n)
}

// Fifty bills of one landlord paid at once by two processes (two stores
// on the same database) get fifty distinct numbers, consecutive after the
// landlord's last, in the order they were issued.
func TestReceiptNumbersAcrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := t.Context()
		other, err := store.Open(ctx, e.DSN, store.Options{Secret: storetest.Secret(t), Now: e.Clock.Now, PublicURL: storetest.PublicURL})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		f := storetest.NewFixture(t, e.DB, rental.PlanPro)
		acct := f.Sandbox(t, e.DB) // five receipts already: the sample's
		const n = 50
		bills := newBills(t, e.DB, acct, n)
		payments := make([]*rental.Payment, n)
		for i, b := range bills {
			payments[i] = openPayment(t, e.DB, acct, b.ID)
		}
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i, p := range payments {
			db := e.DB
			if i%2 == 1 {
				db = other
			}
			wg.Go(func() { errs <- confirmOn(ctx, db, p.ID, bills[i].Total) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		var got []rental.Bill
		for _, b := range bills {
			got = append(got, *getBill(t, e.DB, acct, b.ID))
		}
		if nums := numbers(got); !slices.Equal(nums, series(2026, 6, 5+n)) {
			t.Fatalf("numbers %v", nums)
		}
		slices.SortFunc(got, func(a, b rental.Bill) int { return a.Receipt.IssuedAt.Compare(b.Receipt.IssuedAt.Time) })
		for i := 1; i < len(got); i++ {
			if got[i].Receipt.Number <= got[i-1].Receipt.Number || !got[i].Receipt.IssuedAt.After(got[i-1].Receipt.IssuedAt.Time) {
				t.Fatalf("issued out of order: %+v then %+v", got[i-1].Receipt, got[i].Receipt)
			}
		}
	})
}
