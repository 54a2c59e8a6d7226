package rental

import (
	"strings"
	"testing"
	"time"

	"rentapi/internal/promptpay"
)

// A payment ends unpaid only from pending; an expiry before its time
// expires it now.
func TestPaymentEnd(t *testing.T) {
	t.Parallel()
	later := Time{Time: now.Add(10 * time.Minute)}
	for _, from := range PaymentStatuses {
		for _, to := range []string{PaymentExpired, PaymentCanceled} {
			p := &Payment{Status: from, ExpiresAt: later}
			err := p.End(to, FailureTestCancel, now)
			if from == PaymentPending {
				if err != nil || p.Status != to || *p.FailureReason != FailureTestCancel || !p.UpdatedAt.Equal(now) {
					t.Errorf("pending → %s: %v %+v", to, err, p)
				}
				if wantExp := map[string]time.Time{PaymentExpired: now, PaymentCanceled: later.Time}[to]; !p.ExpiresAt.Equal(wantExp) {
					t.Errorf("pending → %s: expires %v", to, p.ExpiresAt)
				}
				continue
			}
			if code(err) != "invalid_state" || p.Status != from || p.FailureReason != nil {
				t.Errorf("%s → %s: %v %+v", from, to, err, p)
			}
		}
	}
}

// The first confirmation pays the payment, whatever it was (the money
// arrived); later ones only add. The time paid is the provider's, kept
// between the QR's making and now.
func TestPaymentConfirm(t *testing.T) {
	t.Parallel()
	created := now.Add(-10 * time.Minute)
	cases := []struct {
		name      string
		status    string
		paidAt    time.Time
		wantFirst bool
		wantAt    time.Time
	}{
		{"pending", PaymentPending, now.Add(-time.Minute), true, now.Add(-time.Minute)},
		{"expired", PaymentExpired, now.Add(-time.Minute), true, now.Add(-time.Minute)},
		{"canceled", PaymentCanceled, time.Time{}, true, now},
		{"in the future", PaymentPending, now.Add(time.Hour), true, now},
		{"before the QR", PaymentPending, created.Add(-time.Hour), true, created},
		{"paid already", PaymentPaid, now, false, now},
	}
	for _, c := range cases {
		p := &Payment{Status: c.status, AmountPaid: 100, CreatedAt: Time{Time: created}, FailureReason: &[]string{"x"}[0]}
		at, first := p.Confirm(500, c.paidAt, now)
		if first != c.wantFirst || !at.Equal(c.wantAt) || p.AmountPaid != 600 || p.Status != PaymentPaid {
			t.Errorf("%s: first %v at %v, %+v", c.name, first, at, p)
		}
		if first && (p.PaidAt == nil || !p.PaidAt.Equal(c.wantAt) || p.FailureReason != nil) {
			t.Errorf("%s: paid_at %v reason %v", c.name, p.PaidAt, p.FailureReason)
		}
	}
	conf := Confirmation{TransactionID: "T1", PaymentID: "pay_1", Amount: 500}
	for _, c := range []struct {
		payment string
		amount  int64
		code    string
	}{{"pay_1", 500, ""}, {"pay_2", 500, "transaction_conflict"}, {"pay_1", 400, "transaction_conflict"}} {
		if got := code(conf.Repeats(c.payment, c.amount)); got != c.code {
			t.Errorf("seen %s %d: %q", c.payment, c.amount, got)
		}
	}
}

// The sandbox's provider confirms sandbox payments only, and every other
// provider real payments only: a payment of the other side is not found.
func TestConfirmationCheckMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		provider string
		sandbox  bool
		code     string
	}{
		{SandboxProvider, true, ""},
		{SandboxProvider, false, "resource_not_found"},
		{"kbank", false, ""},
		{"kbank", true, "resource_not_found"},
	} {
		if got := code(Confirmation{Provider: c.provider, PaymentID: "pay_1"}.CheckMode(c.sandbox)); got != c.code {
			t.Errorf("%s for a sandbox %v payment: %q, want %q", c.provider, c.sandbox, got, c.code)
		}
	}
}

// A pending QR that no longer asks for what is owed is canceled: when the
// bill is paid, or its amount changed.
func TestPaymentStale(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status string
		amount int64
		bill   Bill
		want   string
	}{
		{PaymentPending, 600, Bill{Status: BillIssued, Total: 1000, AmountPaid: 400}, ""},
		{PaymentPending, 1000, Bill{Status: BillIssued, Total: 1000, AmountPaid: 400}, FailureBillChanged},
		{PaymentPending, 1000, Bill{Status: BillPaid, Total: 1000, AmountPaid: 1000}, FailureBillPaid},
		{PaymentPaid, 1000, Bill{Status: BillPaid, Total: 1000, AmountPaid: 1000}, ""},
		{PaymentExpired, 900, Bill{Status: BillIssued, Total: 1000}, ""},
	}
	for _, c := range cases {
		p := &Payment{Status: c.status, Amount: c.amount}
		if got := p.Stale(&c.bill); got != c.want {
			t.Errorf("%s of %d, bill %+v: %q, want %q", c.status, c.amount, c.bill, got, c.want)
		}
	}
}

// Whether a bill's page can show a QR, and whether a link can be made,
// follow the bill's state, the link and the landlord's plan and receiver;
// a new payment asks for what is owed and is valid 15 minutes.
func TestPayee(t *testing.T) {
	t.Parallel()
	receiver := &promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}
	issued := &Bill{ID: "bill_1", Status: BillIssued, Total: 1000, AmountPaid: 300}
	cases := []struct {
		payee  Payee
		bill   *Bill
		active bool
		noQR   string
		link   string
	}{
		{Payee{QRPayments: true, Receiver: receiver}, issued, true, "", ""},
		{Payee{QRPayments: true, Receiver: receiver}, &Bill{Status: BillPaid, Total: 1000, AmountPaid: 1000}, true, NoQRPaid, "bill_not_payable"},
		{Payee{QRPayments: true, Receiver: receiver}, &Bill{Status: BillDraft, Total: 1000}, true, NoQRNotPayable, "bill_not_payable"},
		{Payee{QRPayments: true, Receiver: receiver}, &Bill{Status: BillIssued, Total: 1000, AmountPaid: 1000}, true, NoQRNotPayable, "bill_not_payable"},
		{Payee{QRPayments: true, Receiver: receiver}, issued, false, NoQRInactive, ""},
		{Payee{QRPayments: false, Receiver: receiver}, issued, true, NoQRUnavailable, "bill_not_payable"},
		{Payee{QRPayments: true, Receiver: nil}, issued, true, NoQRNoReceiver, "bill_not_payable"},
	}
	for i, c := range cases {
		if got := c.payee.NoQR(c.bill, c.active); got != c.noQR {
			t.Errorf("%d: no QR %q, want %q", i, got, c.noQR)
		}
		if got := code(c.payee.CheckLink(c.bill)); got != c.link {
			t.Errorf("%d: link %q, want %q", i, got, c.link)
		}
	}
	p, err := Payee{QRPayments: true, Receiver: receiver}.NewPayment(issued, "plink_1", now)
	if err != nil || p.Amount != 700 || p.Status != PaymentPending || !p.ExpiresAt.Equal(now.Add(QRValidity)) || p.QRPayload == "" || *p.PaymentLinkID != "plink_1" {
		t.Fatalf("%v %+v", err, p)
	}
	if !p.Open(now) || p.Open(now.Add(QRValidity)) {
		t.Error("a QR is open for its 15 minutes only")
	}
}

// A bill notice carries the payment link when a link can be made for the
// bill, except a receipt, which asks for nothing.
func TestNoticeLinks(t *testing.T) {
	t.Parallel()
	qr := Payee{QRPayments: true, Receiver: &promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812345678"}}
	issued := &Bill{Status: BillIssued, Total: 1000, AmountPaid: 300}
	paid := &Bill{Status: BillPaid, Total: 1000, AmountPaid: 1000}
	cases := []struct {
		typ   string
		payee Payee
		bill  *Bill
		want  bool
	}{
		{NotifyNewBill, qr, issued, true},
		{NotifyPaymentReminder, qr, issued, true},
		{NotifyPaymentReceipt, qr, issued, false},
		{NotifyPaymentReceipt, qr, paid, false},
		{NotifyNewBill, qr, &Bill{Status: BillDraft, Total: 1000}, false},
		{NotifyPaymentReminder, qr, paid, false},
		{NotifyNewBill, Payee{QRPayments: false, Receiver: qr.Receiver}, issued, false},
		{NotifyNewBill, Payee{QRPayments: true}, issued, false},
	}
	for i, c := range cases {
		if got := c.payee.NoticeLinks(c.typ, c.bill); got != c.want {
			t.Errorf("%d: %s links %v, want %v", i, c.typ, got, c.want)
		}
	}
}

// A new payment page is an unguessable token under the public URL's
// pages' path, a trailing slash of the base or not.
func TestNewPaymentPage(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"https://rent.example.com", "https://rent.example.com/"} {
		p := NewPaymentPage(base)
		if len(p.Token) != 32 || p.URL != "https://rent.example.com/pay/"+p.Token {
			t.Errorf("%s: %+v", base, p)
		}
	}
	if NewPaymentPage("").Token == NewPaymentPage("").Token {
		t.Error("two pages share a token")
	}
}

// The PromptPay receiver's account holder is a one-line name a person can
// read: Thai or English, never blank, no controls, no invisible characters,
// at most MaxNameLen characters.
func TestCheckReceiverName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"สมชาย ใจดี", true},
		{"Baan Suk Co., Ltd.", true},
		{strings.Repeat("ก", MaxNameLen), true},
		{"", false},
		{"   ", false},
		{"Som\nchai", false},
		{"Som\tchai", false},
		{"Somchai\x00", false},
		{"Som\u202echai", false},
		{strings.Repeat("ก", MaxNameLen+1), false},
	} {
		err := CheckReceiverName(tc.name)
		if e, isErr := AsError(err); tc.ok != (err == nil) || (err != nil && (!isErr || e.Param != "name" || e.Code != "invalid_parameter")) {
			t.Errorf("CheckReceiverName(%q) = %v", tc.name, err)
		}
	}
}
