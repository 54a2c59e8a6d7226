// Package promptpay builds Thai PromptPay payment QR codes.
//
// A PromptPay QR code carries an EMVCo merchant-presented payload: a string
// of tag-length-value fields ending in a CRC. Every Thai banking app can scan
// it, so the API can show a tenant one code that pays the landlord directly,
// without a payment gateway. The package validates who is being paid
// (Receiver), writes the payload (Payload) and renders it as a PNG (PNG).
//
// Amounts are integers in satang (1 THB = 100 satang) so that no floating
// point rounding can ever change what a tenant is asked to pay.
package promptpay

import (
	"fmt"
	"strings"
)

// Kinds of PromptPay receiver. The kind decides how Receiver.ID is checked
// and where it is placed in the payload, so it must be set explicitly rather
// than guessed from the length of the ID.
const (
	// Mobile is a Thai mobile number registered with PromptPay: 10 digits
	// starting with 0. The +66 and 66 international forms, dashes and
	// spaces are accepted and normalised away.
	Mobile = "mobile"
	// NationalID is a 13-digit Thai national ID; its check digit is
	// verified so that a typo is caught before money is sent astray.
	NationalID = "national_id"
	// TaxID is a 13-digit Thai tax ID, used by companies; it shares the
	// national ID check digit scheme.
	TaxID = "tax_id"
	// EWallet is a 15-digit PromptPay e-wallet ID.
	EWallet = "ewallet"
	// Biller is a bill-payment receiver: a 15-digit biller ID plus Ref1
	// (required) and Ref2 (optional), which let the receiving bank match
	// the payment to an invoice.
	Biller = "biller"
)

// Application identifiers that open the PromptPay merchant account fields.
// Tag 29 is a credit transfer to a person or e-wallet, tag 30 a bill payment.
const (
	aidCreditTransfer = "A000000677010111"
	aidBillPayment    = "A000000677010112"
)

// maxSatang is the largest amount that fits the 13 characters EMVCo allows
// for tag 54: ten integer digits, a point and two decimals.
const maxSatang = 999_999_999_999

// maxRefLen is the longest Ref1 or Ref2 a biller payload may carry.
const maxRefLen = 20

// Receiver is who a PromptPay payment goes to. It is what a landlord stores
// once and what every generated QR code for their property is built from.
type Receiver struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`             // as given; normalised by Normalize
	Ref1 string `json:"ref1,omitempty"` // biller only
	Ref2 string `json:"ref2,omitempty"` // biller only
}

// FieldError reports which Receiver field (or "amount") is unacceptable and
// why, in plain English, so the API can point a user at the exact input to
// fix instead of returning a generic failure.
type FieldError struct {
	Field   string // JSON name of the offending field: kind, id, ref1, ref2 or amount
	Message string // plain-English description of the problem
}

// Error makes FieldError usable as an error while keeping the field name in
// the text for logs.
func (e *FieldError) Error() string {
	return "promptpay: " + e.Field + ": " + e.Message
}

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Normalize validates r and returns a copy in canonical form: Kind trimmed
// and lower-cased, ID reduced to digits only (a mobile number becomes the
// 10-digit local form starting with 0), Ref1 and Ref2 trimmed and
// upper-cased. Storing the normalised form means equal receivers compare
// equal and the payload never depends on how a user typed the number.
// Problems are reported as *FieldError.
func (r Receiver) Normalize() (Receiver, error) {
	out := Receiver{
		Kind: strings.ToLower(strings.TrimSpace(r.Kind)),
		Ref1: strings.ToUpper(strings.TrimSpace(r.Ref1)),
		Ref2: strings.ToUpper(strings.TrimSpace(r.Ref2)),
	}

	if out.Kind == "" {
		return Receiver{}, fieldErr("kind", "kind is required")
	}
	if strings.TrimSpace(r.ID) == "" {
		return Receiver{}, fieldErr("id", "id is required")
	}

	var err error
	switch out.Kind {
	case Mobile:
		out.ID, err = normalizeMobile(r.ID)
	case NationalID:
		out.ID, err = normalizeThaiID(r.ID, "national ID")
	case TaxID:
		out.ID, err = normalizeThaiID(r.ID, "tax ID")
	case EWallet:
		out.ID, err = normalizeFixedDigits(r.ID, 15, "e-wallet ID")
	case Biller:
		out.ID, err = normalizeFixedDigits(r.ID, 15, "biller ID")
	default:
		return Receiver{}, fieldErr("kind", "kind must be one of %q, %q, %q, %q or %q",
			Mobile, NationalID, TaxID, EWallet, Biller)
	}
	if err != nil {
		return Receiver{}, err
	}

	if out.Kind != Biller {
		if out.Ref1 != "" {
			return Receiver{}, fieldErr("ref1", "ref1 is only allowed for biller receivers")
		}
		if out.Ref2 != "" {
			return Receiver{}, fieldErr("ref2", "ref2 is only allowed for biller receivers")
		}
		return out, nil
	}

	if out.Ref1 == "" {
		return Receiver{}, fieldErr("ref1", "ref1 is required for biller receivers")
	}
	if !validRef(out.Ref1) {
		return Receiver{}, fieldErr("ref1", "ref1 must be 1 to %d characters, letters A-Z and digits 0-9 only", maxRefLen)
	}
	if out.Ref2 != "" && !validRef(out.Ref2) {
		return Receiver{}, fieldErr("ref2", "ref2 must be 1 to %d characters, letters A-Z and digits 0-9 only", maxRefLen)
	}
	return out, nil
}

// stripSeparators removes the spaces and dashes people use to group digits.
func stripSeparators(s string) string {
	return strings.Map(func(c rune) rune {
		switch c {
		case ' ', '\t', '-':
			return -1
		}
		return c
	}, s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// normalizeMobile turns the usual ways of writing a Thai mobile number into
// its 10-digit local form: 0801234567, 080-123-4567, +66801234567,
// 66801234567, 0066801234567 and +66 0801234567 all give 0801234567.
func normalizeMobile(id string) (string, error) {
	const msg = "mobile number must be 10 digits starting with 0, or +66 followed by 9 digits"

	d := stripSeparators(id)
	plus := strings.HasPrefix(d, "+")
	if plus {
		d = d[1:]
	}
	if d == "" || !allDigits(d) {
		return "", fieldErr("id", "mobile number may contain only digits, spaces, dashes and a leading +")
	}

	switch {
	case plus:
		if !strings.HasPrefix(d, "66") {
			return "", fieldErr("id", "only Thai mobile numbers (+66) can receive PromptPay")
		}
		// Some people keep the trunk 0 after the country code.
		d = "0" + strings.TrimPrefix(d[2:], "0")
	case len(d) == 13 && strings.HasPrefix(d, "0066"):
		d = "0" + d[4:]
	case len(d) == 11 && strings.HasPrefix(d, "66"),
		len(d) == 12 && strings.HasPrefix(d, "660"):
		d = "0" + strings.TrimPrefix(d[2:], "0")
	}

	if len(d) != 10 || d[0] != '0' {
		return "", fieldErr("id", msg)
	}
	return d, nil
}

// normalizeFixedDigits strips separators and requires exactly n digits.
func normalizeFixedDigits(id string, n int, what string) (string, error) {
	d := stripSeparators(id)
	if !allDigits(d) {
		return "", fieldErr("id", "%s may contain only digits, spaces and dashes", what)
	}
	if len(d) != n {
		return "", fieldErr("id", "%s must be exactly %d digits, got %d", what, n, len(d))
	}
	return d, nil
}

// normalizeThaiID checks a 13-digit national or tax ID including its check
// digit.
func normalizeThaiID(id, what string) (string, error) {
	d, err := normalizeFixedDigits(id, 13, what)
	if err != nil {
		return "", err
	}
	if !thaiIDChecksumOK(d) {
		return "", fieldErr("id", "%s check digit does not match; please re-check the number", what)
	}
	return d, nil
}

// thaiIDChecksumOK verifies the last digit of a 13-digit Thai ID: the first
// twelve digits are weighted 13 down to 2, and the check digit is
// (11 - sum mod 11) mod 10.
func thaiIDChecksumOK(d string) bool {
	if len(d) != 13 || !allDigits(d) {
		return false
	}
	sum := 0
	for i := 0; i < 12; i++ {
		sum += int(d[i]-'0') * (13 - i)
	}
	return int(d[12]-'0') == (11-sum%11)%10
}

// validRef reports whether s is an acceptable biller reference: 1 to 20
// characters from A-Z and 0-9, which every Thai bank's bill payment accepts.
func validRef(s string) bool {
	if len(s) == 0 || len(s) > maxRefLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// tlv encodes one EMVCo field: two-digit tag, two-digit length, value.
// Every value this package writes is ASCII and shorter than 100 bytes (the
// longest, a biller account with two 20-character references, is 87).
func tlv(tag, value string) string {
	return fmt.Sprintf("%s%02d%s", tag, len(value), value)
}

// Payload builds the EMVCo merchant-presented payload for paying r the given
// amount in satang, which is the text to put in the QR code.
//
// An amount of 0 gives a static QR code (point of initiation "11") on which
// the payer types the amount; a positive amount gives a dynamic code ("12")
// with the amount fixed in tag 54 as baht with two decimals, which is what
// the API uses for a specific invoice. A negative amount, or one too large
// for tag 54, is a *FieldError for "amount". Payload calls Normalize, so r
// may be given as the user typed it.
func Payload(r Receiver, amount int64) (string, error) {
	if amount < 0 {
		return "", fieldErr("amount", "amount must not be negative")
	}
	if amount > maxSatang {
		return "", fieldErr("amount", "amount must be at most %d satang", int64(maxSatang))
	}
	n, err := r.Normalize()
	if err != nil {
		return "", err
	}

	var account string
	switch n.Kind {
	case Mobile:
		// Mobile numbers go in as 0066 followed by the number without its
		// trunk 0, always 13 characters.
		account = tlv("29", tlv("00", aidCreditTransfer)+tlv("01", "0066"+n.ID[1:]))
	case NationalID, TaxID:
		account = tlv("29", tlv("00", aidCreditTransfer)+tlv("02", n.ID))
	case EWallet:
		account = tlv("29", tlv("00", aidCreditTransfer)+tlv("03", n.ID))
	case Biller:
		v := tlv("00", aidBillPayment) + tlv("01", n.ID) + tlv("02", n.Ref1)
		if n.Ref2 != "" {
			v += tlv("03", n.Ref2)
		}
		account = tlv("30", v)
	}

	var b strings.Builder
	b.WriteString(tlv("00", "01")) // payload format indicator
	if amount == 0 {
		b.WriteString(tlv("01", "11")) // static: reusable, payer enters amount
	} else {
		b.WriteString(tlv("01", "12")) // dynamic: one payment, amount fixed
	}
	b.WriteString(account)
	b.WriteString(tlv("58", "TH"))  // country code
	b.WriteString(tlv("53", "764")) // currency: ISO 4217 THB
	if amount > 0 {
		b.WriteString(tlv("54", fmt.Sprintf("%d.%02d", amount/100, amount%100)))
	}
	// The CRC covers its own tag and length.
	b.WriteString("6304")
	fmt.Fprintf(&b, "%04X", crc16(b.String()))
	return b.String(), nil
}
