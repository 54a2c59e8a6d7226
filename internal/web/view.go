package web

import (
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
	"unicode"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// view is what the page template shows. Error, when set, is the HTTP
// status of an error page and nothing else is.
type view struct {
	Error    int
	Sandbox  bool
	Property string
	Address  string
	Room     string
	MonthEN  string
	MonthTH  string
	Lines    []line
	Total    int64
	Paid     int64
	Due      int64
	Status   string // the bill's
	// DueTH and DueEN are the bill's due date in Thai (Buddhist era) and
	// English; Overdue says it has passed unpaid.
	DueTH, DueEN string
	Overdue      bool
	// Payee is the PromptPay account holder the QR pays, as the landlord
	// named it: the name the tenant's bank app shows before the transfer.
	Payee string
	// QR is the image path of the payment to pay, with its amount and the
	// Bangkok time it expires; empty with NoQR set. QRFile is the name the
	// image is saved under on the phone.
	QR        string
	QRFile    string
	Amount    int64
	ExpiresAt string
	Payload   string
	NoQR      string
	// Upload is where the slip form posts, empty when the bill takes no
	// slip from this page; Slip is the state of the bill's newest slip;
	// ReceiptURL is the paid bill's receipt.
	Upload     string
	Slip       *slipView
	ReceiptURL string
	// RefusedTH and RefusedEN say why a slip upload was refused (an
	// error page), and Back leads to the payment page again.
	RefusedTH, RefusedEN, Back string
}

// line is one item of the bill.
type line struct {
	EN, TH, Detail string
	Amount         int64
}

func newView(co *store.Checkout) view {
	b := co.Bill
	v := view{Sandbox: co.Sandbox, Property: co.Property.Name, Address: co.Property.Address, Room: co.Room.Number,
		Total: b.Total, Paid: b.AmountPaid, Due: max(b.Total-b.AmountPaid, 0), Status: b.Status, NoQR: co.NoQR,
		Overdue: b.Status == rental.BillOverdue, Payee: co.ReceiverName}
	v.MonthEN, v.MonthTH = months(b.Month)
	if day, err := time.ParseInLocation(time.DateOnly, b.DueDate, rental.Bangkok); err == nil {
		v.DueTH, v.DueEN = dates(day)
	}
	for _, l := range b.Lines {
		v.Lines = append(v.Lines, newLine(b, l))
	}
	v.Slip = newSlipView(co.Slip)
	if b.Receipt != nil {
		v.ReceiptURL = b.Receipt.URL
	}
	if p := co.Payment; p != nil {
		v.QR = "/pay/" + tokenOf(p) + "/" + p.ID + ".png"
		v.QRFile = qrFile(co.Room.Number, b.Month)
		v.Amount, v.Payload = p.Amount, p.QRPayload
		v.ExpiresAt = p.ExpiresAt.In(rental.Bangkok).Format("15:04")
	}
	return v
}

// newLine is how the page shows one of the bill's lines: the reading's
// lines and a late fee named in Thai and English, with the reading's
// usage and rates beside electricity and water; a charge or a discount by
// the landlord's own description.
func newLine(b *rental.Bill, l rental.Line) line {
	switch l.Type {
	case rental.LineRent:
		return line{EN: "Rent", TH: "ค่าเช่าห้อง", Amount: l.Amount}
	case rental.LineElectricity:
		return line{EN: "Electricity", TH: "ค่าไฟฟ้า", Amount: l.Amount,
			Detail: fmt.Sprintf("%s kWh × %s", b.Electricity.Usage, baht(b.Electricity.Rate))}
	case rental.LineWater:
		water := line{EN: "Water", TH: "ค่าน้ำ", Amount: l.Amount}
		switch b.Water.Billing {
		case rental.WaterMetered:
			water.Detail = fmt.Sprintf("%s m³ × %s", b.Water.Usage, baht(b.Water.Rate))
		case rental.WaterFlatPerPerson:
			water.Detail = fmt.Sprintf("%d × %s", b.Water.Occupants, baht(b.Water.Amount/max(b.Water.Occupants, 1)))
		default:
			water.Detail = "เหมาจ่าย / flat rate"
		}
		return water
	case rental.LineLateFee:
		return line{EN: "Late fee", TH: "ค่าปรับชำระล่าช้า", Amount: l.Amount}
	}
	return line{TH: l.Description, Amount: l.Amount}
}

// qrFile is the name a payment's QR is saved under: the room and the
// month, in letters and digits a phone's photo library keeps as they are.
func qrFile(room, month string) string {
	clean := strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-') {
			return r
		}
		return '-'
	}, room)
	if clean = strings.Trim(clean, "-"); clean == "" {
		clean = "room"
	}
	return "promptpay-" + clean + "-" + month + ".png"
}

// tokenOf is the token of the payment's page, from its URL.
func tokenOf(p *rental.Payment) string {
	if p.PaymentURL == nil {
		return ""
	}
	return (*p.PaymentURL)[strings.LastIndex(*p.PaymentURL, "/")+1:]
}

var thaiMonths = [...]string{"มกราคม", "กุมภาพันธ์", "มีนาคม", "เมษายน", "พฤษภาคม", "มิถุนายน",
	"กรกฎาคม", "สิงหาคม", "กันยายน", "ตุลาคม", "พฤศจิกายน", "ธันวาคม"}

// months writes a YYYY-MM month in English and in Thai, with the Buddhist
// era year Thai readers expect (2026 is 2569).
func months(month string) (en, th string) {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return month, month
	}
	return t.Format("January 2006"), thaiMonths[t.Month()-1] + " " + strconv.Itoa(t.Year()+543)
}

// baht writes satang as baht with thousands separators: 617000 → 6,170.00.
func baht(satang int64) string {
	sign := ""
	if satang < 0 {
		sign, satang = "-", -satang
	}
	whole := strconv.FormatInt(satang/100, 10)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%s%s.%02d", sign, b.String(), satang%100)
}

var funcs = template.FuncMap{"baht": baht, "when": when, "excerpt": excerpt}
