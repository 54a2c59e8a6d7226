package rental

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"rentapi/internal/promptpay"
)

func TestReceiverMatches(t *testing.T) {
	mobile := promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812341234"}
	nid := promptpay.Receiver{Kind: promptpay.NationalID, ID: "1101700230708"}
	wallet := promptpay.Receiver{Kind: promptpay.EWallet, ID: "140000812345678"}
	tests := []struct {
		name  string
		shown []string
		r     promptpay.Receiver
		want  bool
	}{
		{"mobile masked like a bank account", []string{"xxx-x-x1234-x"}, mobile, true},
		{"mobile masked as a phone", []string{"xxx-xxx-1234"}, mobile, true},
		{"mobile, international form", []string{"66xxxxx1234"}, mobile, true},
		{"mobile, receiver stored as 66", []string{"xxx-xxx-1234"}, promptpay.Receiver{Kind: promptpay.Mobile, ID: "66812341234"}, true},
		{"mobile, other digits", []string{"xxx-xxx-9999"}, mobile, false},
		{"mobile, a digit off at its place", []string{"xxx-x-x1235-x"}, mobile, false},
		{"too few digits shown", []string{"xxx-xxx-xx34"}, mobile, false},
		{"fully masked", []string{"xxx-x-xxxxx-x"}, mobile, false},
		{"nothing shown", nil, mobile, false},
		{"second receiver matches", []string{"xxx-x-x9999-x", "xxx-xxx-1234"}, mobile, true},
		{"national id by place", []string{"x-xxxx-xxxx0-70-8"}, nid, true},
		{"national id, short mask run", []string{"xxx0708"}, nid, true},
		{"national id, wrong", []string{"x-xxxx-xxxx1-70-8"}, nid, false},
		{"e-wallet", []string{"xxxxxxxxxx45678"}, wallet, true},
		{"e-wallet with stars", []string{"**********45678"}, wallet, true},
		{"e-wallet, two runs that do not fit by place", []string{"12xxx45678"}, wallet, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ReceiverMatches(tt.shown, tt.r); got != tt.want {
				t.Fatalf("ReceiverMatches(%q, %v) = %v, want %v", tt.shown, tt.r, got, tt.want)
			}
		})
	}
}

func TestJudgeSlip(t *testing.T) {
	r := &promptpay.Receiver{Kind: promptpay.Mobile, ID: "0812341234"}
	ok := SlipReading{TransRef: "0150731440", Amount: 500000, Receivers: []string{"xxx-xxx-1234"}}
	tests := []struct {
		name      string
		reading   SlipReading
		receiver  *promptpay.Receiver
		duplicate bool
		want      string
	}{
		{"verified", ok, r, false, ""},
		{"duplicate first", ok, r, true, RejectDuplicate},
		{"no reference", SlipReading{Amount: 1, Receivers: ok.Receivers}, r, false, RejectUnreadable},
		{"no amount", SlipReading{TransRef: "x", Receivers: ok.Receivers}, r, false, RejectUnreadable},
		{"wrong receiver", SlipReading{TransRef: "x", Amount: 1, Receivers: []string{"xxx-xxx-9999"}}, r, false, RejectReceiver},
		{"landlord without receiver", ok, nil, false, RejectReceiver},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JudgeSlip(tt.reading, tt.receiver, tt.duplicate); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNextVerify(t *testing.T) {
	want := []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}
	for i, w := range want {
		if got, ok := NextVerify(i + 1); !ok || got != w {
			t.Fatalf("attempt %d: %v %v, want %v", i+1, got, ok, w)
		}
	}
	for _, a := range []int{0, 5, 6} {
		if _, ok := NextVerify(a); ok {
			t.Fatalf("attempt %d has a retry", a)
		}
	}
	if MaxVerifyAttempts != 5 {
		t.Fatalf("MaxVerifyAttempts %d", MaxVerifyAttempts)
	}
}

var (
	jpeg = append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, bytes.Repeat([]byte{1}, 100)...)
	png  = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{2}, 100)...)
)

func TestSniffSlipImage(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		max  int
		want string
		msg  string
	}{
		{"jpeg", jpeg, MaxPageSlipImage, ImageJPEG, ""},
		{"png", png, MaxPageSlipImage, ImagePNG, ""},
		{"pdf renamed", []byte("%PDF-1.7\n..."), MaxPageSlipImage, "", "not a JPEG or PNG"},
		{"gif", []byte("GIF89a......"), MaxPageSlipImage, "", "not a JPEG or PNG"},
		{"empty", nil, MaxPageSlipImage, "", "empty"},
		{"too big for the page", append(bytes.Clone(png), make([]byte, MaxPageSlipImage)...), MaxPageSlipImage, "", "at most 2048 KB"},
		{"too big for the API", append(bytes.Clone(jpeg), make([]byte, MaxAPISlipImage)...), MaxAPISlipImage, "", "at most 700 KB"},
		{"at the cap", append(bytes.Clone(jpeg), make([]byte, MaxAPISlipImage-len(jpeg))...), MaxAPISlipImage, ImageJPEG, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SniffSlipImage("file", tt.b, tt.max)
			if tt.msg == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %q %v, want %q", got, err, tt.want)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Kind != KindInvalid || e.Param != "file" || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %q %v, want an invalid file saying %q", got, err, tt.msg)
			}
		})
	}
}

func TestDecodeSlipImage(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	tests := []struct {
		name string
		in   string
		want string
		msg  string
	}{
		{"padded png", b64(png), ImagePNG, ""},
		{"unpadded jpeg", base64.RawStdEncoding.EncodeToString(jpeg), ImageJPEG, ""},
		{"not base64", "this is not base64!", "", "base64"},
		{"data URL", "data:image/png;base64," + b64(png), "", "base64"},
		{"pdf", b64([]byte("%PDF-1.4 hello")), "", "not a JPEG or PNG"},
		{"too long to decode", strings.Repeat("A", base64.StdEncoding.EncodedLen(MaxAPISlipImage)+8), "", "more than 700 KB"},
		{"too big decoded", b64(append(bytes.Clone(png), make([]byte, MaxAPISlipImage)...)), "", "more than 700 KB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, err := DecodeSlipImage(tt.in)
			if tt.msg == "" {
				if err != nil || got != tt.want {
					t.Fatalf("got %q %v", got, err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Param != "image" || !strings.Contains(e.Message, tt.msg) {
				t.Fatalf("got %v, want an invalid image saying %q", err, tt.msg)
			}
		})
	}
}

func TestCheckSlipInput(t *testing.T) {
	none := Optional[string]{}
	tests := []struct {
		name      string
		qr, image Optional[string]
		code      string
		param     string
	}{
		{"qr", Of("0041000600000101030040220014242082547BPM049885102TH9104F2B7"), none, "", ""},
		{"image", none, Of("iVBORw0KGgo="), "", ""},
		{"both", Of("abc"), Of("iVBORw0KGgo="), "invalid_parameter", "image"},
		{"neither", none, none, "parameter_missing", "qr_payload"},
		{"both null", Optional[string]{Set: true, Null: true}, Optional[string]{Set: true, Null: true}, "parameter_missing", "qr_payload"},
		{"empty qr", Of(""), none, "invalid_parameter", "qr_payload"},
		{"long qr", Of(strings.Repeat("1", 513)), none, "invalid_parameter", "qr_payload"},
		{"qr at the cap", Of(strings.Repeat("1", 512)), none, "", ""},
		{"qr with a line break", Of("abc\ndef"), none, "invalid_parameter", "qr_payload"},
		{"qr in Thai", Of("สลิป"), none, "invalid_parameter", "qr_payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSlipInput(tt.qr, tt.image)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e, ok := AsError(err)
			if !ok || e.Code != tt.code || e.Param != tt.param {
				t.Fatalf("got %v, want %s on %s", err, tt.code, tt.param)
			}
		})
	}
}

func TestSatangOf(t *testing.T) {
	tests := []struct {
		baht float64
		want int64
		ok   bool
	}{
		{5000, 500000, true}, {0.01, 1, true}, {1234.56, 123456, true}, {19.99, 1999, true},
		{0, 0, false}, {-5, 0, false}, {0.004, 0, false}, {2e9, 0, false},
	}
	for _, tt := range tests {
		if got, ok := SatangOf(tt.baht); got != tt.want || ok != tt.ok {
			t.Errorf("SatangOf(%v) = %d %v, want %d %v", tt.baht, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSandboxSlip(t *testing.T) {
	tests := []struct {
		qr     string
		reason string
		fail   bool
	}{
		{"anything a bank app shows", "", false},
		{"test_duplicate_slip", RejectDuplicate, false},
		{"test_receiver_mismatch", RejectReceiver, false},
		{"test_unreadable", RejectUnreadable, false},
		{"test_provider_unavailable", RejectUnavailable, true},
		{"test_something_else", "", false},
	}
	for _, tt := range tests {
		if reason, fail := SandboxSlip(tt.qr); reason != tt.reason || fail != tt.fail {
			t.Errorf("SandboxSlip(%q) = %q %v, want %q %v", tt.qr, reason, fail, tt.reason, tt.fail)
		}
	}
	if got := SandboxAmount(&Bill{Total: 500000, AmountPaid: 200000}); got != 300000 {
		t.Errorf("owed %d", got)
	}
	if got := SandboxAmount(&Bill{Total: 500000, AmountPaid: 500000}); got != 500000 {
		t.Errorf("paid bill %d", got)
	}
}

func TestSlipStates(t *testing.T) {
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	r := SlipReading{TransRef: "REF1", Amount: 100, SendingBank: "KBANK", TransferredAt: now.Add(-time.Minute)}
	s := Slip{Status: SlipPending}
	if err := s.Verify(r, "pay_1", now); err != nil || s.Status != SlipVerified || *s.PaymentID != "pay_1" || *s.Amount != 100 ||
		*s.TransRef != "REF1" || *s.SendingBank != "KBANK" || !s.TransferredAt.Equal(now.Add(-time.Minute)) {
		t.Fatalf("verified %+v %v", s, err)
	}
	if err := s.Reject(RejectDuplicate, nil, now); err == nil {
		t.Fatal("a verified slip was rejected")
	}
	s = Slip{Status: SlipPending}
	if err := s.Reject(RejectUnreadable, nil, now); err != nil || s.Status != SlipRejected || *s.RejectionReason != RejectUnreadable || s.Amount != nil {
		t.Fatalf("rejected %+v %v", s, err)
	}
	if err := s.Verify(r, "pay_2", now); err == nil {
		t.Fatal("a rejected slip was verified")
	}
	s = Slip{Status: SlipPending}
	if err := s.Reject(RejectReceiver, &r, now); err != nil || *s.Amount != 100 || *s.TransRef != "REF1" || s.PaymentID != nil {
		t.Fatalf("rejected with a reading %+v %v", s, err)
	}
	if err := CheckSlipBill(BillDraft); err == nil {
		t.Fatal("a draft bill takes slips")
	}
	for _, st := range []string{BillIssued, BillOverdue, BillPaid} {
		if err := CheckSlipBill(st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
}

func TestCheckSlipOutcome(t *testing.T) {
	set := func(v int64) Optional[int64] { return Optional[int64]{Set: true, Value: v} }
	for _, c := range []struct {
		outcome string
		amount  Optional[int64]
		param   string // the parameter refused; empty: accepted
	}{
		{SlipVerified, Optional[int64]{}, ""},
		{SlipVerified, set(150_00), ""},
		{RejectDuplicate, Optional[int64]{}, ""},
		{RejectReceiver, Optional[int64]{}, ""},
		{RejectUnreadable, Optional[int64]{}, ""},
		{RejectUnavailable, Optional[int64]{}, "outcome"},
		{"paid", Optional[int64]{}, "outcome"},
		{SlipVerified, set(0), "amount"},
		{SlipVerified, set(MaxAmount + 1), "amount"},
		{SlipVerified, Optional[int64]{Set: true, Null: true}, "amount"},
		{RejectUnreadable, set(100), "amount"},
	} {
		err := CheckSlipOutcome(c.outcome, c.amount)
		if c.param == "" {
			if err != nil {
				t.Errorf("%s %+v: %v, want accepted", c.outcome, c.amount, err)
			}
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Param != c.param || e.Code != "invalid_parameter" {
			t.Errorf("%s %+v: %v, want invalid_parameter on %s", c.outcome, c.amount, err, c.param)
		}
	}
}

func TestCheckSlipsAvailable(t *testing.T) {
	for _, c := range []struct {
		sandbox, provider bool
		code              string
	}{
		{true, false, ""},
		{true, true, ""},
		{false, true, ""},
		{false, false, "slips_not_available"},
	} {
		got := ""
		if e, ok := AsError(CheckSlipsAvailable(c.sandbox, c.provider)); ok {
			got = e.Code
		}
		if got != c.code {
			t.Errorf("sandbox %v, provider %v: %q, want %q", c.sandbox, c.provider, got, c.code)
		}
	}
}

func TestSlipAnswer(t *testing.T) {
	for _, c := range []struct {
		source, status, bill, want string
	}{
		{SlipFromPage, SlipVerified, BillPaid, NotifyPaymentReceipt},
		{SlipFromAPI, SlipVerified, BillPaid, NotifyPaymentReceipt},
		{SlipFromLINE, SlipVerified, BillPaid, NotifyPaymentReceipt},
		{SlipFromLINE, SlipVerified, BillIssued, NotifyMessage}, // a part: what is still owed
		{SlipFromLINE, SlipRejected, BillOverdue, NotifyMessage},
		{SlipFromPage, SlipRejected, BillIssued, ""}, // the page shows it
		{SlipFromPage, SlipVerified, BillIssued, ""},
		{SlipFromAPI, SlipRejected, BillIssued, ""}, // the app hears of it by its events
		{SlipFromLINE, SlipPending, BillIssued, ""},
	} {
		s := &Slip{Source: c.source, Status: c.status}
		if got := SlipAnswer(s, c.bill); got != c.want {
			t.Errorf("%s slip %s, bill %s: %q, want %q", c.source, c.status, c.bill, got, c.want)
		}
	}
}

func TestSlipResultText(t *testing.T) {
	reason, amount := RejectReceiver, int64(200000)
	for _, c := range []struct {
		slip Slip
		owed int64
		want []string
	}{
		{Slip{Status: SlipRejected, RejectionReason: &reason}, 0,
			[]string{"ตรวจสลิปไม่ผ่าน", "Slip not accepted: This transfer did not go to your landlord's PromptPay account."}},
		{Slip{Status: SlipVerified, Amount: &amount}, 150050,
			[]string{"ได้รับเงินโอน 2,000.00 บาท", "1,500.50 baht is still due"}},
	} {
		got := SlipResultText(&c.slip, c.owed)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q does not say %q", got, w)
			}
		}
		if th, en := strings.Index(got, "\n\n"), strings.IndexFunc(got, func(r rune) bool { return r >= 'A' && r <= 'Z' }); th < 0 || en < th {
			t.Errorf("Thai does not come first: %q", got)
		}
	}
	for _, r := range append(SlipRejections, "something new") {
		if th, en := SlipReason(r); th == "" || en == "" {
			t.Errorf("reason %q has no words", r)
		}
	}
}

func TestVerifyGivesUpAt(t *testing.T) {
	filed := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	if got, want := VerifyGivesUpAt(filed), filed.Add(36*time.Minute+10*time.Second); !got.Equal(want) {
		t.Errorf("VerifyGivesUpAt = %v, want %v (10 s + 1 min + 5 min + 30 min)", got, want)
	}
}
