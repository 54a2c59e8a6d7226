package web

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// A paid bill's receipt is a page of its own for the tenant to keep or
// print, on the token of the receipt's URL (its only credential, as the
// payment page's is): who was paid, by whom, for what, and how the money
// came. It lives under the payment pages' path, so it is logged, refused
// and answered 404 as they are.

//go:embed receipt.html
var receiptHTML string

// receiptPage is the receipt's template.
var receiptPage = template.Must(template.New("receipt").Funcs(funcs).Parse(receiptHTML))

// receiptView is what the receipt's template shows: Thai first, English
// beside or below it.
type receiptView struct {
	// Missing makes the page say that no receipt has this link, and
	// nothing else.
	Missing            bool
	Sandbox            bool
	Number             string
	IssuedTH, IssuedEN string
	Property, Address  string
	// Tenant is the name the bill was made out to; empty for a room
	// billed without a tenant.
	Tenant           string
	Room             string
	MonthTH, MonthEN string
	// Lines are the bill's lines as its payment page shows them.
	Lines    []line
	Total    int64
	Payments []receiptPayment
	Paid     int64
}

// receiptPayment is one payment on the receipt: when, how and how much.
type receiptPayment struct {
	WhenTH, WhenEN string
	HowTH, HowEN   string
	Amount         int64
}

// paidBy names each way of paying (rental.PaidBy) in Thai and English.
var paidBy = map[string][2]string{
	rental.PaidByQR:   {"พร้อมเพย์ QR", "PromptPay QR"},
	rental.PaidBySlip: {"โอนเงิน (ตรวจสลิปแล้ว)", "Bank transfer, slip verified"},
}

func newReceiptView(rp *store.ReceiptPage) receiptView {
	b := rp.Bill
	// The bill's lines and month, exactly as the payment page shows them.
	bill := newView(&store.Checkout{Sandbox: rp.Sandbox, Bill: b, Property: rp.Property, Room: rp.Room})
	v := receiptView{Sandbox: rp.Sandbox, Number: b.Receipt.Number, Property: rp.Property.Name, Address: rp.Property.Address,
		Room: rp.Room.Number, MonthTH: bill.MonthTH, MonthEN: bill.MonthEN, Lines: bill.Lines, Total: b.Total, Paid: b.AmountPaid}
	v.IssuedTH, v.IssuedEN = dates(b.Receipt.IssuedAt.Time)
	if rp.Tenant != nil {
		v.Tenant = rp.Tenant.Name
	}
	for _, p := range rp.Payments {
		how := paidBy[p.Method]
		th, en := dates(p.PaidAt.Time)
		at := p.PaidAt.In(rental.Bangkok).Format("15:04")
		v.Payments = append(v.Payments, receiptPayment{WhenTH: th + " " + at + " น.", WhenEN: en + ", " + at + " (Bangkok)",
			HowTH: how[0], HowEN: how[1], Amount: p.Amount})
	}
	return v
}

// handleReceipt shows the receipt of the token in the path. A token no
// receipt has gets a 404 page that says so; other failures are the payment
// pages' own.
func (s *site) handleReceipt(w http.ResponseWriter, r *http.Request, _ *visit) error {
	rp, err := s.db.Read().OpenReceipt(r.Context(), r.PathValue("token"))
	status, v := http.StatusOK, receiptView{Missing: true}
	switch {
	case rental.IsNotFound(err):
		status = http.StatusNotFound
	case err != nil:
		return err
	default:
		v = newReceiptView(rp)
	}
	var buf bytes.Buffer
	if err := receiptPage.Execute(&buf, v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}
