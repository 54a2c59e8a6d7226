package rental

import (
	"bytes"
	"encoding/base64"
	"math"
	"slices"
	"strings"
	"time"

	"rentapi/internal/promptpay"
)

// PrefixSlip marks slip IDs.
const PrefixSlip = "slip"

// Slip states: a slip waits (pending) for its verification job, which
// either verifies it (a payment is recorded) or rejects it with a reason.
const (
	SlipPending  = "pending"
	SlipVerified = "verified"
	SlipRejected = "rejected"
)

// SlipStatuses are the states, for list filters.
var SlipStatuses = []string{SlipPending, SlipVerified, SlipRejected}

// Why a slip was rejected (its rejection_reason).
const (
	// RejectDuplicate: the slip's transaction reference was verified
	// before, anywhere in the service: one transfer pays once.
	RejectDuplicate = "duplicate_slip"
	// RejectReceiver: the money went to someone other than the landlord's
	// PromptPay receiver.
	RejectReceiver = "receiver_mismatch"
	// RejectUnreadable: the provider found no slip in what was sent.
	RejectUnreadable = "unreadable"
	// RejectUnavailable: the provider failed every attempt of the retry
	// schedule; the tenant may send the slip again.
	RejectUnavailable = "provider_unavailable"
)

// SlipRejections are the rejection reasons, in the order the API documents them.
var SlipRejections = []string{RejectDuplicate, RejectReceiver, RejectUnreadable, RejectUnavailable}

// Where a slip came from: the three ways in share one rule and one state
// machine, and the source only tells a landlord how the tenant sent it.
const (
	SlipFromPage = "payment_page"
	SlipFromLINE = "line"
	SlipFromAPI  = "api"
)

// Slip is a tenant's transfer slip filed against a bill, as the API shows
// it. The image or QR text it was read from is never part of it: that is
// personal data, kept apart and deleted after SlipImageRetention.
type Slip struct {
	ID              string  `json:"id"`
	Object          string  `json:"object"`
	BillID          string  `json:"bill_id"`
	PaymentID       *string `json:"payment_id"`
	Status          string  `json:"status"`
	RejectionReason *string `json:"rejection_reason"`
	Amount          *int64  `json:"amount"`
	Currency        string  `json:"currency"`
	TransRef        *string `json:"trans_ref"`
	SendingBank     *string `json:"sending_bank"`
	TransferredAt   *Time   `json:"transferred_at"`
	Source          string  `json:"source"`
	CreatedAt       Time    `json:"created_at"`
	UpdatedAt       Time    `json:"updated_at"`
}

// SlipReading is what a verification provider read from a slip: the
// transfer as the bank recorded it. Receivers are the receiving account
// numbers the provider shows (PromptPay proxy first, then bank account),
// masked as the provider masks them.
type SlipReading struct {
	TransRef      string
	Amount        int64
	SendingBank   string
	TransferredAt time.Time
	Receivers     []string
}

// VerifyRetries are the waits after each failed attempt to reach the
// provider before the next; after the last the slip is rejected with
// provider_unavailable. Five attempts over about 36 minutes: a short
// outage of the provider is outlasted, and a tenant is not kept waiting
// for hours to learn that the slip should be sent again.
var VerifyRetries = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}

// MaxVerifyAttempts is how many times a slip's provider is asked.
var MaxVerifyAttempts = len(VerifyRetries) + 1

// NextVerify is the wait after attempt (1-based) failed, or false when it
// was the last: the slip is then rejected with provider_unavailable.
func NextVerify(attempt int) (time.Duration, bool) {
	if attempt < 1 || attempt > len(VerifyRetries) {
		return 0, false
	}
	return VerifyRetries[attempt-1], true
}

// Size caps of a slip image: the payment page's upload form takes a phone's
// screenshot as it is; the API takes a decoded base64 image inside its 1 MB
// body. A slip QR's text is short.
const (
	MaxPageSlipImage = 2 << 20
	MaxAPISlipImage  = 700 << 10
	MaxSlipQRPayload = 512
)

// SlipImageRetention is how long a slip's image (and QR text) is kept:
// long enough for a landlord to look into a dispute about the month,
// short enough that a tenant's bank details do not pile up.
const SlipImageRetention = 30 * 24 * time.Hour

// Image types a slip may be, sniffed by their first bytes, never by a file
// name or a declared type.
const (
	ImageJPEG = "image/jpeg"
	ImagePNG  = "image/png"
)

// SniffSlipImage returns the type of a slip image (JPEG or PNG by its magic
// bytes) when it is at most max bytes; anything else (a PDF renamed .png, an
// empty file, a picture too large) is 400 invalid_parameter on param with a
// message a tenant can act on.
func SniffSlipImage(param string, b []byte, max int) (string, error) {
	switch {
	case len(b) == 0:
		return "", Invalid(param, "The slip image is empty: send the JPEG or PNG picture of the slip.")
	case len(b) > max:
		return "", Invalid(param, "The slip image is %d KB; at most %d KB is taken. Send a screenshot of the slip rather than a photo.", len(b)>>10, max>>10)
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return ImageJPEG, nil
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return ImagePNG, nil
	}
	return "", Invalid(param, "The slip image is not a JPEG or PNG picture (a PDF or another file type is not taken).")
}

// DecodeSlipImage reads the API's base64 image (standard alphabet, padded
// or not, no data: prefix) and checks it as SniffSlipImage does against
// MaxAPISlipImage. Too long a text is refused before it is decoded.
func DecodeSlipImage(s string) ([]byte, string, error) {
	if len(s) > base64.StdEncoding.EncodedLen(MaxAPISlipImage)+3 {
		return nil, "", Invalid("image", "image decodes to more than %d KB; send a smaller JPEG or PNG.", MaxAPISlipImage>>10)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	if err != nil {
		return nil, "", Invalid("image", "image must be the slip picture in base64 (standard alphabet, no data: prefix).")
	}
	typ, err := SniffSlipImage("image", b, MaxAPISlipImage)
	return b, typ, err
}

// CheckSlipInput is the API's body rule: exactly one of a slip QR's text
// (1-512 printable ASCII characters, as a tenant app scans it) or a base64
// image.
func CheckSlipInput(qr, image Optional[string]) error {
	hasQR, hasImage := qr.Set && !qr.Null, image.Set && !image.Null
	switch {
	case hasQR && hasImage:
		return Invalid("image", "Send either qr_payload or image, not both.")
	case !hasQR && !hasImage:
		return Missing("qr_payload")
	case hasImage:
		return nil
	}
	if qr.Value == "" || len(qr.Value) > MaxSlipQRPayload {
		return Invalid("qr_payload", "qr_payload must be the slip QR's text, 1-%d characters.", MaxSlipQRPayload)
	}
	for i := 0; i < len(qr.Value); i++ {
		if c := qr.Value[i]; c < 0x20 || c > 0x7e {
			return Invalid("qr_payload", "qr_payload must be printable ASCII, as a slip QR holds.")
		}
	}
	return nil
}

// CheckSlipBill is nil when a slip can be filed against a bill in status: an
// issued or overdue bill, or a paid one (a transfer to a paid bill is still
// recorded); a draft was never sent to a tenant, so nobody could have paid
// it.
func CheckSlipBill(status string) error {
	if status == BillDraft {
		return Conflict("bill_not_payable", "The bill is a draft: issue it before a tenant can pay it.")
	}
	return nil
}

// SatangOf turns a provider's amount in baht (a JSON number with two
// decimals) into satang; a negative, zero or absurd amount is false.
func SatangOf(baht float64) (int64, bool) {
	s := math.Round(baht * 100)
	if math.IsNaN(s) || s < 1 || s > 100_000_000_000 {
		return 0, false
	}
	return int64(s), true
}

// JudgeSlip is the verdict on a slip the provider read: "" when it pays the
// landlord's receiver, else the rejection reason. duplicate reports that its
// transaction reference was verified before anywhere in the service.
func JudgeSlip(r SlipReading, receiver *promptpay.Receiver, duplicate bool) string {
	switch {
	case duplicate:
		return RejectDuplicate
	case r.TransRef == "" || r.Amount < 1:
		return RejectUnreadable
	case receiver == nil || !ReceiverMatches(r.Receivers, *receiver):
		return RejectReceiver
	}
	return ""
}

// minShownDigits is the least number of digits a masked receiver must show
// to be taken as a match: a mask showing one or two digits matches too many
// strangers.
const minShownDigits = 3

// ReceiverMatches reports whether any receiver the provider shows, masked as
// providers mask them ("xxx-x-x1234-x", "xxx-xxx-1234", "x-xxxx-xxxxx-12-3"),
// can be the landlord's PromptPay receiver: every digit it shows must be the
// receiver's digit at that place. A mask of the same length as one of the
// receiver's forms is compared place by place; a mask of another length
// must show its digits as one run inside the receiver's number.
func ReceiverMatches(shown []string, r promptpay.Receiver) bool {
	forms := receiverForms(r)
	for _, s := range shown {
		mask := maskOf(s)
		if countDigits(mask) < minShownDigits {
			continue
		}
		for _, f := range forms {
			if maskFits(mask, f) {
				return true
			}
		}
	}
	return false
}

// receiverForms are the ways a receiver's number is written on a slip: a
// mobile number in its local form (0812345678) and its international one
// (66812345678, 0066812345678), any other ID as it is.
func receiverForms(r promptpay.Receiver) []string {
	id := onlyDigits(r.ID)
	if r.Kind != promptpay.Mobile {
		return []string{id}
	}
	local := id
	switch {
	case strings.HasPrefix(id, "0066"):
		local = "0" + id[4:]
	case strings.HasPrefix(id, "66"):
		local = "0" + id[2:]
	}
	return []string{local, "66" + local[1:], "0066" + local[1:]}
}

// maskOf keeps a shown receiver's digits and its masked places ('x'),
// dropping the separators.
func maskOf(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= '0' && c <= '9', c == 'x':
			b.WriteRune(c)
		case c == '*' || c == '#':
			b.WriteByte('x')
		}
	}
	return b.String()
}

// maskFits reports whether a mask can be number, as ReceiverMatches says.
func maskFits(mask, number string) bool {
	if len(mask) == len(number) {
		for i := range len(mask) {
			if mask[i] != 'x' && mask[i] != number[i] {
				return false
			}
		}
		return true
	}
	runs := strings.FieldsFunc(mask, func(r rune) bool { return r == 'x' })
	return len(runs) == 1 && strings.Contains(number, runs[0])
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

func countDigits(s string) int { return len(onlyDigits(s)) }

// SandboxSlip is the sandbox's simulated provider: a slip is read as paying
// SandboxAmount, unless its QR text is test_<reason> with one of
// SlipRejections, which it rejects with that reason (fail is true for
// provider_unavailable: every attempt fails, so the slip ends rejected
// once the retry schedule has passed).
func SandboxSlip(qr string) (reason string, fail bool) {
	if r, ok := strings.CutPrefix(qr, "test_"); ok {
		for _, known := range SlipRejections {
			if r == known {
				return r, r == RejectUnavailable
			}
		}
	}
	return "", false
}

// SandboxAmount is what the sandbox's simulated provider reads on a slip of
// the bill: what is still owed, or the whole total when nothing is (a
// transfer to a paid bill is still recorded).
func SandboxAmount(b *Bill) int64 {
	if owed := b.Total - b.AmountPaid; owed > 0 {
		return owed
	}
	return max(b.Total, 1)
}

// Verify makes a pending slip verified by the reading at now, with the
// payment recorded for it; any other state is 409 invalid_state.
func (s *Slip) Verify(r SlipReading, paymentID string, now time.Time) error {
	if s.Status != SlipPending {
		return Conflict("invalid_state", "Only a pending slip can be verified; this one is %s.", s.Status)
	}
	s.Status, s.PaymentID, s.Amount, s.TransRef = SlipVerified, &paymentID, &r.Amount, &r.TransRef
	s.setReading(r)
	s.UpdatedAt = Time{Time: now}
	return nil
}

// Reject makes a pending slip rejected for reason at now, keeping what the
// provider read of it (nothing when it read nothing); any other state is
// 409 invalid_state.
func (s *Slip) Reject(reason string, r *SlipReading, now time.Time) error {
	if s.Status != SlipPending {
		return Conflict("invalid_state", "Only a pending slip can be rejected; this one is %s.", s.Status)
	}
	s.Status, s.RejectionReason = SlipRejected, &reason
	if r != nil {
		if r.Amount > 0 {
			s.Amount = &r.Amount
		}
		if r.TransRef != "" {
			s.TransRef = &r.TransRef
		}
		s.setReading(*r)
	}
	s.UpdatedAt = Time{Time: now}
	return nil
}

func (s *Slip) setReading(r SlipReading) {
	if r.SendingBank != "" {
		s.SendingBank = &r.SendingBank
	}
	if !r.TransferredAt.IsZero() {
		at := Time{Time: r.TransferredAt.UTC().Truncate(time.Second)}
		s.TransferredAt = &at
	}
}

// ErrSlipsUnavailable is 409 slips_not_available: a live slip when the
// operator configured no verification provider could never be verified, so
// it is not filed.
var ErrSlipsUnavailable = Conflict("slips_not_available",
	"Slips cannot be verified in live mode: this service has no slip-verification provider configured. Test mode works without one.")

// SimulatedSlipOutcomes are what the slip test helper can make of a slip.
var SimulatedSlipOutcomes = []string{SlipVerified, RejectDuplicate, RejectReceiver, RejectUnreadable}

// CheckSlipOutcome accepts the slip test helper's outcome and its optional
// amount: absent (what the bill still owes), or, with outcome verified
// only, an amount CheckAmount accepts.
func CheckSlipOutcome(outcome string, amount Optional[int64]) error {
	if !slices.Contains(SimulatedSlipOutcomes, outcome) {
		return NotOneOf("outcome", SimulatedSlipOutcomes)
	}
	switch {
	case !amount.Set:
		return nil
	case amount.Null:
		return amountOutOfRange("amount")
	}
	if err := CheckAmount("amount", amount.Value); err != nil {
		return err
	}
	if outcome != SlipVerified {
		return Invalid("amount", "amount goes only with outcome verified.")
	}
	return nil
}

// CheckSlipsAvailable is nil when a slip can be filed in the mode: test mode
// always (the sandbox's simulated provider answers), live mode only with a
// provider configured (ErrSlipsUnavailable). The payment page, LINE and the
// API ask it before filing, so none files a slip nothing could verify.
func CheckSlipsAvailable(sandbox, providerConfigured bool) error {
	if !sandbox && !providerConfigured {
		return ErrSlipsUnavailable
	}
	return nil
}

// SlipAnswer is what the tenant is sent over LINE once a slip is settled:
// the receipt (NotifyPaymentReceipt) when it was verified and the bill is
// now paid, whichever way the slip came in; for a slip sent over LINE
// that did not pay the bill off, its result as a message (NotifyMessage,
// SlipResultText); else nothing (""). Only a tenant the chat reaches is
// sent anything (CheckReachable).
func SlipAnswer(s *Slip, billStatus string) string {
	switch {
	case s.Status == SlipVerified && billStatus == BillPaid:
		return NotifyPaymentReceipt
	case s.Source == SlipFromLINE && s.Status != SlipPending:
		return NotifyMessage
	}
	return ""
}

// slipReasons say in Thai and English why a slip was rejected and what
// the tenant can do, for the payment page and the LINE answer alike.
var slipReasons = map[string][2]string{
	RejectDuplicate: {"สลิปนี้เคยถูกใช้ชำระแล้ว",
		"This slip was already used for a payment."},
	RejectReceiver: {"สลิปนี้ไม่ได้โอนเข้าบัญชีพร้อมเพย์ของเจ้าของหอพัก",
		"This transfer did not go to your landlord's PromptPay account."},
	RejectUnreadable: {"อ่านสลิปไม่ได้ กรุณาส่งภาพสลิปที่ชัดเจน (ภาพหน้าจอจากแอปธนาคาร)",
		"The slip could not be read. Send a clear picture of it (a screenshot from your bank app)."},
	RejectUnavailable: {"ระบบตรวจสลิปไม่ว่างในขณะนี้ กรุณาส่งสลิปอีกครั้งในภายหลัง",
		"The slip could not be checked right now. Please send it again later."},
}

// SlipReason is the Thai and English of a rejection reason; an unknown one
// reads as unreadable.
func SlipReason(reason string) (th, en string) {
	w, ok := slipReasons[reason]
	if !ok {
		w = slipReasons[RejectUnreadable]
	}
	return w[0], w[1]
}

// SlipResultText is the LINE message that answers a settled slip which did
// not pay its bill off (SlipAnswer's NotifyMessage): rejected, with why; or
// verified for less than the bill, with what is still owed. Thai first,
// English below, as every chat message of the service.
func SlipResultText(s *Slip, owed int64) string {
	if s.Status == SlipRejected && s.RejectionReason != nil {
		th, en := SlipReason(*s.RejectionReason)
		return "ตรวจสลิปไม่ผ่าน: " + th + "\n\nSlip not accepted: " + en
	}
	var amount int64
	if s.Amount != nil {
		amount = *s.Amount
	}
	return "ได้รับเงินโอน " + Baht(amount) + " บาทแล้ว ยังคงค้างชำระ " + Baht(owed) + " บาท\n\n" +
		"Transfer of " + Baht(amount) + " baht received; " + Baht(owed) + " baht is still due."
}

// VerifyGivesUpAt is when a slip filed at filed has had every attempt its
// retry schedule allows: a slip still pending then is rejected with
// provider_unavailable. An advanced sandbox clock passing it catches up on
// the whole schedule at once.
func VerifyGivesUpAt(filed time.Time) time.Time {
	for _, wait := range VerifyRetries {
		filed = filed.Add(wait)
	}
	return filed
}
