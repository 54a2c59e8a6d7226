package rental

import (
	"crypto/rand"
	"fmt"
	"slices"
	"time"
)

// PrefixNotification marks notification IDs.
const PrefixNotification = "ntf"

// Notification types: a bill notice, a reminder of an unpaid bill, a
// receipt of a paid one, and a free text message.
const (
	NotifyNewBill         = "new_bill"
	NotifyPaymentReminder = "payment_reminder"
	NotifyPaymentReceipt  = "payment_receipt"
	NotifyMessage         = "message"
)

// NotificationTypes are the types POST /v1/notifications takes (a message
// is sent through /v1/messages).
var NotificationTypes = []string{NotifyNewBill, NotifyPaymentReminder, NotifyPaymentReceipt}

// CheckNotificationType accepts one of NotificationTypes: a free text
// message goes through /v1/messages, with its text.
func CheckNotificationType(typ string) error {
	if !slices.Contains(NotificationTypes, typ) {
		return Invalid("type", "type must be one of new_bill, payment_reminder, payment_receipt.")
	}
	return nil
}

// Notification states: queued until the chat channel takes the message
// (sent) or the service gives up (failed).
const (
	NotificationQueued = "queued"
	NotificationSent   = "sent"
	NotificationFailed = "failed"
)

// NotificationStatuses are the states, for list filters.
var NotificationStatuses = []string{NotificationQueued, NotificationSent, NotificationFailed}

// What made a notification: a request to the API, the daily reminders of
// a property's schedule, or a bill run with notify.
const (
	TriggerAPI      = "api"
	TriggerSchedule = "schedule"
	TriggerBillRun  = "bill_run"
)

// SendInterval is the least time between two paced notices of a landlord:
// one a second keeps the service's own sends (a bill run's notices, the
// schedule's reminders) within the landlord's 60 sends a minute, however
// many are queued at once, without refusing any.
const SendInterval = time.Second

// PaceSends gives n paced notices their send times: SendInterval apart
// from the landlord's next free slot, or from start when that is later
// (start is now, or for reminders a sandbox's clock catches up on, the
// time they fell due). next is the landlord's next free slot after them.
func PaceSends(slot, start time.Time, n int) (at []time.Time, next time.Time) {
	t := slot
	if start.After(t) {
		t = start
	}
	at = make([]time.Time, n)
	for i := range at {
		at[i] = t
		t = t.Add(SendInterval)
	}
	return at, t
}

// ChannelLINE is the one chat channel.
const ChannelLINE = "line"

// MaxMessageLen bounds a message's text, in characters.
const MaxMessageLen = 2000

// Notification is a chat message to a tenant, as the API shows it.
type Notification struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	Type          string  `json:"type"`
	TenantID      string  `json:"tenant_id"`
	BillID        *string `json:"bill_id"`
	Text          *string `json:"text"`
	Channel       string  `json:"channel"`
	Status        string  `json:"status"`
	Attempts      int     `json:"attempts"`
	FailureReason *string `json:"failure_reason"`
	SentAt        *Time   `json:"sent_at"`
	CreatedAt     Time    `json:"created_at"`
	UpdatedAt     Time    `json:"updated_at"`
	// Trigger is what made it: TriggerAPI, TriggerSchedule or
	// TriggerBillRun.
	Trigger string `json:"trigger"`
}

// SendRetries are the waits after each failed send before the next; a send
// that fails after the last is given up. Five attempts in all, over about
// 36 minutes: long enough to outlast a short outage of the chat provider,
// short enough that a bill notice is not days late.
var SendRetries = []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}

// MaxSendAttempts is how many times a notification is tried.
var MaxSendAttempts = len(SendRetries) + 1

// NextSend is the wait after attempt (1-based) failed, or false when it was
// the last.
func NextSend(attempt int) (time.Duration, bool) {
	if attempt < 1 || attempt > len(SendRetries) {
		return 0, false
	}
	return SendRetries[attempt-1], true
}

// SendOutcome classifies the chat provider's answer to a push: sent, to be
// retried, or failed for good.
type SendOutcome int

// Outcomes of one push.
const (
	SendRetry SendOutcome = iota
	SendDone
	SendRefused
)

// ClassifySend turns LINE's status into the outcome: 2xx is sent, and so is
// 409 (the retry key was already accepted: an earlier attempt got through);
// 400 and 403 (a bad request, a user who blocked the account) never get
// better, so they fail at once; anything else (429, 5xx, no answer: 0) is
// retried.
func ClassifySend(status int) SendOutcome {
	switch {
	case status >= 200 && status < 300, status == 409:
		return SendDone
	case status == 400, status == 403:
		return SendRefused
	}
	return SendRetry
}

// CheckNotification is the rule for sending a notification of type typ
// about a bill in billStatus: a new bill notice of a draft bill issues it
// first (issue is true), a reminder needs an unpaid issued or overdue bill,
// a receipt a paid one.
func CheckNotification(typ, billStatus string) (issue bool, err error) {
	switch typ {
	case NotifyNewBill:
		if billStatus == BillPaid {
			return false, Errorf(KindConflict, "invalid_state", "The bill is already paid: send a payment_receipt instead.")
		}
		return billStatus == BillDraft, nil
	case NotifyPaymentReminder:
		if billStatus != BillIssued && billStatus != BillOverdue {
			return false, Errorf(KindConflict, "invalid_state", "A payment_reminder needs an issued or overdue bill; this one is %s.", billStatus)
		}
	case NotifyPaymentReceipt:
		if billStatus != BillPaid {
			return false, Errorf(KindConflict, "invalid_state", "A payment_receipt needs a paid bill; this one is %s.", billStatus)
		}
	default:
		return false, Invalid("type", "type must be one of new_bill, payment_reminder, payment_receipt.")
	}
	return false, nil
}

// NoticeTenant is the tenant a bill notice goes to: the bill's. A bill
// without one (made for a room with no tenant) has no one to notify: 409
// tenant_not_reachable.
func NoticeTenant(b *Bill) (string, error) {
	if b.TenantID == nil {
		return "", Errorf(KindConflict, "tenant_not_reachable", "Bill %s has no tenant.", b.ID)
	}
	return *b.TenantID, nil
}

// CheckReachable refuses a tenant the chat cannot reach: one who moved out,
// turned chat off, or never registered with the chat channel.
func CheckReachable(t *Tenant) error {
	switch {
	case t.MovedOutAt != nil:
		return Errorf(KindConflict, "tenant_not_reachable", "Tenant %s has moved out.", t.ID)
	case !t.ChatEnabled:
		return Errorf(KindConflict, "tenant_not_reachable", "Tenant %s has chat turned off (chat_enabled is false).", t.ID)
	case !t.ChatRegistered:
		return Errorf(KindConflict, "tenant_not_reachable", "Tenant %s has not registered with the chat channel yet: give them chat_registration_code and chat_registration_url.", t.ID)
	}
	return nil
}

// CheckMessageText checks a message's text: 1 to 2000 characters that
// CheckLines accepts (the text rule, line breaks allowed).
func CheckMessageText(text string) error {
	return CheckLines("text", text, 1, MaxMessageLen)
}

// Notice is what a bill notice shows, in plain values, kept with the
// notification when it is queued so that every attempt sends the same
// message.
type Notice struct {
	Type     string       `json:"type"`
	Text     string       `json:"text,omitempty"`
	Property string       `json:"property,omitempty"`
	Room     string       `json:"room,omitempty"`
	Month    string       `json:"month,omitempty"`
	Lines    []NoticeLine `json:"lines,omitempty"`
	Total    int64        `json:"total,omitempty"`
	Paid     int64        `json:"paid,omitempty"`
	DueDate  string       `json:"due_date,omitempty"`
	PayURL   string       `json:"pay_url,omitempty"`
	// ReceiptNumber and ReceiptURL are a payment receipt's bill's receipt.
	ReceiptNumber string `json:"receipt_number,omitempty"`
	ReceiptURL    string `json:"receipt_url,omitempty"`
}

// NoticeLine is one amount of a bill notice, named in Thai and English
// (EN empty when the name is the landlord's own words, in TH).
type NoticeLine struct {
	TH     string `json:"th"`
	EN     string `json:"en,omitempty"`
	Amount int64  `json:"amount"`
}

// BillNotice is the notice of typ about a bill; payURL is the payment
// link's address, empty when the landlord takes no QR payments. A payment
// receipt names the bill's receipt and links its page.
func BillNotice(typ string, b *Bill, property, room, payURL string) Notice {
	n := Notice{Type: typ, Property: property, Room: room, Month: b.Month, Total: b.Total, Paid: b.AmountPaid, DueDate: b.DueDate, PayURL: payURL}
	if typ == NotifyPaymentReceipt && b.Receipt != nil {
		n.ReceiptNumber, n.ReceiptURL = b.Receipt.Number, b.Receipt.URL
	}
	for _, l := range b.Lines {
		n.Lines = append(n.Lines, noticeLine(l))
	}
	return n
}

// noticeLine names a bill's line in Thai and English: the reading's lines
// and a late fee by their type, a charge or discount by the landlord's own
// description (EN empty: it is in whatever language the landlord wrote).
func noticeLine(l Line) NoticeLine {
	names := map[string][2]string{LineRent: {"ค่าเช่า", "Rent"}, LineElectricity: {"ค่าไฟ", "Electricity"},
		LineWater: {"ค่าน้ำ", "Water"}, LineLateFee: {"ค่าปรับชำระล่าช้า", "Late fee"}}
	if name, ok := names[l.Type]; ok {
		return NoticeLine{TH: name[0], EN: name[1], Amount: l.Amount}
	}
	return NoticeLine{TH: l.Description, Amount: l.Amount}
}

// Baht formats satang as baht with two decimals and thousands separators.
func Baht(satang int64) string {
	sign := ""
	if satang < 0 {
		sign, satang = "-", -satang
	}
	whole := fmt.Sprint(satang / 100)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return fmt.Sprintf("%s%s.%02d", sign, whole, satang%100)
}

// registrationAlphabet has no characters that read alike (0/O, 1/I/L, 5/S,
// 2/Z, 8/B): a tenant types the code from a printout or a screen.
const registrationAlphabet = "ACDEFGHJKMNPQRTUVWXY34679"

// RegistrationCodeLen is the length of a chat registration code: 25^8
// (about 1.5e11) codes, far beyond guessing through a signed webhook.
const RegistrationCodeLen = 8

// NewRegistrationCode makes a tenant's chat registration code from the
// system's random source.
func NewRegistrationCode() string {
	b := make([]byte, RegistrationCodeLen)
	rand.Read(b)
	for i := range b {
		// 250 is a multiple of 25: bytes above 249 are drawn again, so
		// every character is equally likely.
		for b[i] >= 250 {
			var one [1]byte
			rand.Read(one[:])
			b[i] = one[0]
		}
		b[i] = registrationAlphabet[int(b[i])%len(registrationAlphabet)]
	}
	return string(b)
}

// NormalizeCode reads a code as a tenant typed it: spaces and dashes
// dropped, lower case raised; ok is false for anything that cannot be a code.
func NormalizeCode(s string) (string, bool) {
	out := make([]byte, 0, RegistrationCodeLen)
	for _, r := range s {
		switch {
		case r == ' ' || r == '-':
			continue
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		}
		if r > 127 || !containsByte(registrationAlphabet, byte(r)) || len(out) == RegistrationCodeLen {
			return "", false
		}
		out = append(out, byte(r))
	}
	return string(out), len(out) == RegistrationCodeLen
}

func containsByte(s string, c byte) bool {
	for i := range len(s) {
		if s[i] == c {
			return true
		}
	}
	return false
}
