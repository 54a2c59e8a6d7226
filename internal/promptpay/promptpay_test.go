package promptpay

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"strconv"
	"testing"

	"rentapi/internal/promptpay/promptpaytest"
)

// field is one parsed EMVCo tag-length-value entry.
type field struct {
	Tag   string
	Value string
}

// parseTLV splits an EMVCo string into its top-level fields.
func parseTLV(s string) ([]field, error) {
	var out []field
	for i := 0; i < len(s); {
		if len(s)-i < 4 {
			return nil, fmt.Errorf("truncated field header at offset %d", i)
		}
		tag := s[i : i+2]
		n, err := strconv.Atoi(s[i+2 : i+4])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad length %q at offset %d", s[i+2:i+4], i)
		}
		i += 4
		if len(s)-i < n {
			return nil, fmt.Errorf("tag %s: value of length %d overruns payload", tag, n)
		}
		out = append(out, field{Tag: tag, Value: s[i : i+n]})
		i += n
	}
	return out, nil
}

// parsePayload parses a full payload and checks that it ends in a tag 63
// whose value is the CRC of everything before that value.
func parsePayload(t *testing.T, s string) []field {
	t.Helper()
	fs, err := parseTLV(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	last := fs[len(fs)-1]
	if last.Tag != "63" || len(last.Value) != 4 {
		t.Fatalf("payload %q does not end with a 4-character tag 63", s)
	}
	want := fmt.Sprintf("%04X", crc16(s[:len(s)-4]))
	if last.Value != want {
		t.Fatalf("payload %q: CRC %s, recomputed %s", s, last.Value, want)
	}
	return fs
}

func tags(fs []field) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Tag
	}
	return out
}

func TestCRC16CheckValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want uint16
	}{
		{"123456789", 0x29B1}, // the standard CRC-16/CCITT-FALSE check value
		{"", 0xFFFF},          // nothing processed: the initial value
	}
	for _, tc := range tests {
		if got := crc16(tc.in); got != tc.want {
			t.Errorf("crc16(%q) = %04X, want %04X", tc.in, got, tc.want)
		}
	}
}

// TestPayloadPublicVectors checks against payloads published in the test
// suites of open-source PromptPay libraries:
//   - dtinth/promptpay-qr, index.test.js
//   - jojoee/promptpay, tests/test_qrcode_generate_payload.py
//   - kittinan/php-promptpay-qr, tests/PromptPayTest.php
//
// Their amounts are in baht; here they are converted to satang.
func TestPayloadPublicVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		r      Receiver
		amount int64
		want   string
	}{
		{
			name: "mobile static (dtinth, jojoee)",
			r:    Receiver{Kind: Mobile, ID: "0801234567"},
			want: "00020101021129370016A000000677010111011300668012345675802TH530376463046197",
		},
		{
			name: "dashed mobile static (dtinth)",
			r:    Receiver{Kind: Mobile, ID: "080-123-4567"},
			want: "00020101021129370016A000000677010111011300668012345675802TH530376463046197",
		},
		{
			name: "international mobile static (dtinth)",
			r:    Receiver{Kind: Mobile, ID: "+66-89-123-4567"},
			want: "00020101021129370016A000000677010111011300668912345675802TH5303764630429C1",
		},
		{
			name:   "mobile 4.22 THB (dtinth)",
			r:      Receiver{Kind: Mobile, ID: "000-000-0000"},
			amount: 422,
			want:   "00020101021229370016A000000677010111011300660000000005802TH530376454044.226304E469",
		},
		{
			name:   "mobile 100 THB (jojoee)",
			r:      Receiver{Kind: Mobile, ID: "0000000000"},
			amount: 10000,
			want:   "00020101021229370016A000000677010111011300660000000005802TH53037645406100.0063043B7D",
		},
		{
			name:   "mobile 456.25 THB (jojoee)",
			r:      Receiver{Kind: Mobile, ID: "0801234567"},
			amount: 45625,
			want:   "00020101021229370016A000000677010111011300668012345675802TH53037645406456.256304483D",
		},
		{
			name:   "dashed mobile 13371337.75 THB (kittinan)",
			r:      Receiver{Kind: Mobile, ID: "089-123-4567"},
			amount: 1337133775,
			want:   "00020101021229370016A000000677010111011300668912345675802TH5303764541113371337.756304B7D7",
		},
		{
			name: "national ID static (jojoee)",
			r:    Receiver{Kind: NationalID, ID: "8512819188690"},
			want: "00020101021129370016A000000677010111021385128191886905802TH5303764630400F4",
		},
		{
			name:   "national ID 541.23 THB (jojoee)",
			r:      Receiver{Kind: NationalID, ID: "8512819188690"},
			amount: 54123,
			want:   "00020101021229370016A000000677010111021385128191886905802TH53037645406541.23630437F5",
		},
		{
			name:   "dashed national ID 4585485.54 THB (jojoee)",
			r:      Receiver{Kind: NationalID, ID: "4-9124-19510-27-0"},
			amount: 458548554,
			want:   "00020101021229370016A000000677010111021349124195102705802TH530376454104585485.546304DF31",
		},
		{
			name: "tax ID with leading zero static (jojoee)",
			r:    Receiver{Kind: TaxID, ID: "0023637209811"},
			want: "00020101021129370016A000000677010111021300236372098115802TH530376463040C4C",
		},
		{
			name:   "tax ID 72.98 THB (jojoee)",
			r:      Receiver{Kind: TaxID, ID: "0-0236-37209-81-1"},
			amount: 7298,
			want:   "00020101021229370016A000000677010111021300236372098115802TH5303764540572.986304E802",
		},
		{
			name: "e-wallet static (jojoee)",
			r:    Receiver{Kind: EWallet, ID: "004999000288505"},
			want: "00020101021129390016A00000067701011103150049990002885055802TH530376463041521",
		},
		{
			name:   "e-wallet 1515.75 THB (jojoee)",
			r:      Receiver{Kind: EWallet, ID: "004999000288505"},
			amount: 151575,
			want:   "00020101021229390016A00000067701011103150049990002885055802TH530376454071515.756304522C",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Payload(tc.r, tc.amount)
			if err != nil {
				t.Fatalf("Payload: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Payload\n got %s\nwant %s", got, tc.want)
			}
			parsePayload(t, got)
		})
	}
}

// TestPayloadStructure parses generated payloads and checks every field,
// including biller payloads for which no public vector in this tag order
// was found.
func TestPayloadStructure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		r          Receiver
		amount     int64
		poi        string
		account    string // "29" or "30"
		sub        []field
		wantAmount string // "" means tag 54 must be absent
	}{
		{
			name: "mobile static", r: Receiver{Kind: Mobile, ID: "66 81 234 5678"},
			poi: "11", account: "29",
			sub: []field{{"00", aidCreditTransfer}, {"01", "0066812345678"}},
		},
		{
			name: "mobile rent", r: Receiver{Kind: Mobile, ID: "0812345678"}, amount: 617000,
			poi: "12", account: "29", wantAmount: "6170.00",
			sub: []field{{"00", aidCreditTransfer}, {"01", "0066812345678"}},
		},
		{
			name: "one satang", r: Receiver{Kind: Mobile, ID: "0812345678"}, amount: 1,
			poi: "12", account: "29", wantAmount: "0.01",
			sub: []field{{"00", aidCreditTransfer}, {"01", "0066812345678"}},
		},
		{
			name: "largest amount", r: Receiver{Kind: Mobile, ID: "0812345678"}, amount: maxSatang,
			poi: "12", account: "29", wantAmount: "9999999999.99",
			sub: []field{{"00", aidCreditTransfer}, {"01", "0066812345678"}},
		},
		{
			name: "national ID", r: Receiver{Kind: NationalID, ID: "1-1012-00000-00-2"}, amount: 50,
			poi: "12", account: "29", wantAmount: "0.50",
			sub: []field{{"00", aidCreditTransfer}, {"02", "1101200000002"}},
		},
		{
			name: "e-wallet", r: Receiver{Kind: EWallet, ID: "012345678901234"},
			poi: "11", account: "29",
			sub: []field{{"00", aidCreditTransfer}, {"03", "012345678901234"}},
		},
		{
			name: "biller ref1 only", r: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "inv2024001"},
			amount: 1250000, poi: "12", account: "30", wantAmount: "12500.00",
			sub: []field{{"00", aidBillPayment}, {"01", "010554008706101"}, {"02", "INV2024001"}},
		},
		{
			name: "biller both refs static",
			r:    Receiver{Kind: Biller, ID: "010554008706101", Ref1: "ROOM12A", Ref2: "202601"},
			poi:  "11", account: "30",
			sub: []field{{"00", aidBillPayment}, {"01", "010554008706101"}, {"02", "ROOM12A"}, {"03", "202601"}},
		},
		{
			name: "biller longest refs",
			r: Receiver{Kind: Biller, ID: "010554008706101",
				Ref1: "ABCDEFGHIJ0123456789", Ref2: "ZYXWVUTSRQ9876543210"},
			amount: 99, poi: "12", account: "30", wantAmount: "0.99",
			sub: []field{{"00", aidBillPayment}, {"01", "010554008706101"},
				{"02", "ABCDEFGHIJ0123456789"}, {"03", "ZYXWVUTSRQ9876543210"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Payload(tc.r, tc.amount)
			if err != nil {
				t.Fatalf("Payload: %v", err)
			}
			fs := parsePayload(t, p)

			wantTags := []string{"00", "01", tc.account, "58", "53"}
			if tc.wantAmount != "" {
				wantTags = append(wantTags, "54")
			}
			wantTags = append(wantTags, "63")
			if got := fmt.Sprint(tags(fs)); got != fmt.Sprint(wantTags) {
				t.Fatalf("tags %v, want %v (payload %s)", got, wantTags, p)
			}

			values := map[string]string{}
			for _, f := range fs {
				values[f.Tag] = f.Value
			}
			checks := []field{{"00", "01"}, {"01", tc.poi}, {"58", "TH"}, {"53", "764"}}
			if tc.wantAmount != "" {
				checks = append(checks, field{"54", tc.wantAmount})
			}
			for _, c := range checks {
				if values[c.Tag] != c.Value {
					t.Errorf("tag %s = %q, want %q", c.Tag, values[c.Tag], c.Value)
				}
			}

			sub, err := parseTLV(values[tc.account])
			if err != nil {
				t.Fatalf("parse tag %s: %v", tc.account, err)
			}
			if fmt.Sprint(sub) != fmt.Sprint(tc.sub) {
				t.Errorf("tag %s sub-fields %v, want %v", tc.account, sub, tc.sub)
			}
		})
	}
}

func TestPayloadErrors(t *testing.T) {
	t.Parallel()
	mobile := Receiver{Kind: Mobile, ID: "0812345678"}
	tests := []struct {
		name      string
		r         Receiver
		amount    int64
		wantField string
	}{
		{"negative amount", mobile, -1, "amount"},
		{"amount too large for tag 54", mobile, maxSatang + 1, "amount"},
		{"invalid receiver", Receiver{Kind: Mobile, ID: "12345"}, 100, "id"},
		{"ref1 on mobile", Receiver{Kind: Mobile, ID: "0812345678", Ref1: "A1"}, 0, "ref1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Payload(tc.r, tc.amount)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Payload = %q, %v; want *FieldError", p, err)
			}
			if fe.Field != tc.wantField {
				t.Errorf("field %q, want %q (%v)", fe.Field, tc.wantField, err)
			}
			if p != "" {
				t.Errorf("payload %q returned with error", p)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        Receiver
		want      Receiver
		wantField string // non-empty means an error on this field is expected
	}{
		// Mobile forms.
		{name: "mobile local", in: Receiver{Kind: Mobile, ID: "0801234567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile dashed", in: Receiver{Kind: Mobile, ID: "080-123-4567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile spaced", in: Receiver{Kind: Mobile, ID: " 080 123 4567 "},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile +66", in: Receiver{Kind: Mobile, ID: "+66801234567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile 66", in: Receiver{Kind: Mobile, ID: "66801234567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile +66 dashed", in: Receiver{Kind: Mobile, ID: "+66-80-123-4567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile +66 keeping trunk 0", in: Receiver{Kind: Mobile, ID: "+66 080 123 4567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "mobile 0066", in: Receiver{Kind: Mobile, ID: "0066801234567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},
		{name: "kind case and spaces", in: Receiver{Kind: " Mobile ", ID: "0801234567"},
			want: Receiver{Kind: Mobile, ID: "0801234567"}},

		// Bad mobiles.
		{name: "mobile too short", in: Receiver{Kind: Mobile, ID: "080123456"}, wantField: "id"},
		{name: "mobile too long", in: Receiver{Kind: Mobile, ID: "08012345678"}, wantField: "id"},
		{name: "mobile without leading 0", in: Receiver{Kind: Mobile, ID: "8012345678"}, wantField: "id"},
		{name: "mobile with letters", in: Receiver{Kind: Mobile, ID: "08O1234567"}, wantField: "id"},
		{name: "mobile foreign country code", in: Receiver{Kind: Mobile, ID: "+6591234567"}, wantField: "id"},
		{name: "mobile +66 too short", in: Receiver{Kind: Mobile, ID: "+668012345"}, wantField: "id"},
		{name: "mobile plus in middle", in: Receiver{Kind: Mobile, ID: "08+01234567"}, wantField: "id"},
		{name: "mobile empty", in: Receiver{Kind: Mobile, ID: "  "}, wantField: "id"},

		// National and tax IDs.
		{name: "national ID good checksum", in: Receiver{Kind: NationalID, ID: "8512819188690"},
			want: Receiver{Kind: NationalID, ID: "8512819188690"}},
		{name: "national ID dashed", in: Receiver{Kind: NationalID, ID: "1-1012-00000-00-2"},
			want: Receiver{Kind: NationalID, ID: "1101200000002"}},
		{name: "national ID bad checksum", in: Receiver{Kind: NationalID, ID: "8512819188691"}, wantField: "id"},
		// All ones appears in public test suites but its check digit should be 9.
		{name: "national ID all ones", in: Receiver{Kind: NationalID, ID: "1111111111111"}, wantField: "id"},
		{name: "national ID 12 digits", in: Receiver{Kind: NationalID, ID: "851281918869"}, wantField: "id"},
		{name: "national ID with plus", in: Receiver{Kind: NationalID, ID: "+8512819188690"}, wantField: "id"},
		{name: "tax ID good checksum", in: Receiver{Kind: TaxID, ID: "0105540087061"},
			want: Receiver{Kind: TaxID, ID: "0105540087061"}},
		{name: "tax ID bad checksum", in: Receiver{Kind: TaxID, ID: "0105540087062"}, wantField: "id"},

		// E-wallets.
		{name: "e-wallet 15 digits", in: Receiver{Kind: EWallet, ID: "004999000288505"},
			want: Receiver{Kind: EWallet, ID: "004999000288505"}},
		{name: "e-wallet 14 digits", in: Receiver{Kind: EWallet, ID: "00499900028850"}, wantField: "id"},
		{name: "e-wallet 16 digits", in: Receiver{Kind: EWallet, ID: "0049990002885051"}, wantField: "id"},
		{name: "e-wallet with ref1", in: Receiver{Kind: EWallet, ID: "004999000288505", Ref1: "X"}, wantField: "ref1"},

		// Billers.
		{name: "biller refs upper-cased",
			in:   Receiver{Kind: Biller, ID: "0105-5400-8706-101", Ref1: " inv001 ", Ref2: "room12b"},
			want: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "INV001", Ref2: "ROOM12B"}},
		{name: "biller without ref2", in: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "A"},
			want: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "A"}},
		{name: "biller missing ref1", in: Receiver{Kind: Biller, ID: "010554008706101"}, wantField: "ref1"},
		{name: "biller only ref2", in: Receiver{Kind: Biller, ID: "010554008706101", Ref2: "X1"}, wantField: "ref1"},
		{name: "biller ref1 punctuation", in: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "INV-001"}, wantField: "ref1"},
		{name: "biller ref1 Thai", in: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "ห้อง1"}, wantField: "ref1"},
		{name: "biller ref1 21 chars", in: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "ABCDEFGHIJ01234567890"}, wantField: "ref1"},
		{name: "biller ref2 invalid", in: Receiver{Kind: Biller, ID: "010554008706101", Ref1: "A", Ref2: "B C"}, wantField: "ref2"},
		{name: "biller ID 13 digits", in: Receiver{Kind: Biller, ID: "0105540087061", Ref1: "A"}, wantField: "id"},

		// Refs on non-billers.
		{name: "ref1 on mobile", in: Receiver{Kind: Mobile, ID: "0801234567", Ref1: "INV1"}, wantField: "ref1"},
		{name: "ref2 on national ID", in: Receiver{Kind: NationalID, ID: "8512819188690", Ref2: "X"}, wantField: "ref2"},

		// Kind.
		{name: "missing kind", in: Receiver{ID: "0801234567"}, wantField: "kind"},
		{name: "unknown kind", in: Receiver{Kind: "bank_account", ID: "0801234567"}, wantField: "kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Normalize()
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("Normalize(%+v): %v", tc.in, err)
				}
				if got != tc.want {
					t.Fatalf("Normalize(%+v) = %+v, want %+v", tc.in, got, tc.want)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Normalize(%+v) = %+v, %v; want *FieldError", tc.in, got, err)
			}
			if fe.Field != tc.wantField {
				t.Errorf("error field %q, want %q (%v)", fe.Field, tc.wantField, err)
			}
			if fe.Message == "" {
				t.Errorf("error for field %q has no message", fe.Field)
			}
		})
	}
}

func TestFieldErrorText(t *testing.T) {
	t.Parallel()
	err := error(&FieldError{Field: "ref1", Message: "ref1 is required for biller receivers"})
	want := "promptpay: ref1: ref1 is required for biller receivers"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// TestPNGRoundTrip renders payloads and reads them back with an independent
// QR decoder, which proves the image is scannable and carries the payload
// byte for byte.
func TestPNGRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		r      Receiver
		amount int64
		size   int
	}{
		{"static mobile", Receiver{Kind: Mobile, ID: "0801234567"}, 0, 256},
		{"dynamic mobile", Receiver{Kind: Mobile, ID: "0812345678"}, 617000, 300},
		{"dynamic national ID", Receiver{Kind: NationalID, ID: "8512819188690"}, 54123, 512},
		{"biller", Receiver{Kind: Biller, ID: "010554008706101", Ref1: "INV2026010001", Ref2: "ROOM12A"}, 1250050, 320},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			payload, err := Payload(tc.r, tc.amount)
			if err != nil {
				t.Fatalf("Payload: %v", err)
			}
			parsePayload(t, payload)

			data, err := PNG(payload, tc.size)
			if err != nil {
				t.Fatalf("PNG: %v", err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("decode PNG: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tc.size || b.Dy() != tc.size {
				t.Errorf("image is %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.size, tc.size)
			}
			if got := promptpaytest.Scan(t, data); got != payload {
				t.Fatalf("decoded %q, want %q", got, payload)
			}
		})
	}
}

func TestPNGErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		payload string
		size    int
	}{
		{"empty payload", "", 256},
		{"zero size", "x", 0},
		{"negative size", "x", -5},
		{"oversized", "x", maxPNGSize + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if b, err := PNG(tc.payload, tc.size); err == nil {
				t.Fatalf("PNG(%q, %d) = %d bytes, want error", tc.payload, tc.size, len(b))
			}
		})
	}
}
