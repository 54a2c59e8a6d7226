package chat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"rentapi/internal/chat"
	"rentapi/internal/rental"
)

// A bill notice's Flex message shows every line of the bill: the
// reading's in Thai and English, a charge or discount by the landlord's
// own description, each with its amount, and the total.
func TestBillMessageShowsEveryLine(t *testing.T) {
	t.Parallel()
	b := &rental.Bill{Month: "2026-11", DueDate: "2026-12-05", Total: 449000, Lines: []rental.Line{
		{Type: rental.LineRent, Description: "Rent", Amount: 350000},
		{Type: rental.LineElectricity, Description: "Electricity", Amount: 80000},
		{Type: rental.LineWater, Description: "Water", Amount: 9000},
		{Type: rental.LineCharge, Description: "Internet", Amount: 30000, ChargeID: "chg_a"},
		{Type: rental.LineDiscount, Description: "ส่วนลดอยู่ครบปี", Amount: -20000, ChargeID: "chg_b", Full: 20000},
	}}
	msgs, err := chat.Messages(rental.BillNotice(rental.NotifyNewBill, b, "Baan Suk", "204", ""))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	for _, want := range []string{`"ค่าเช่า / Rent"`, `"3,500.00 ฿"`, `"ค่าไฟ / Electricity"`, `"800.00 ฿"`, `"ค่าน้ำ / Water"`, `"90.00 ฿"`,
		`"Internet"`, `"300.00 ฿"`, `"ส่วนลดอยู่ครบปี"`, `"-200.00 ฿"`, `"4,490.00 บาท (THB)"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the message does not show %s", want)
		}
	}
	if strings.Contains(text, "Internet / ") || strings.Contains(text, "chg_") {
		t.Errorf("a charge's line is shown with an empty English name or its ID:\n%s", text)
	}
}

// An overdue bill's reminder shows its late fee like any line, in Thai
// and English, and asks for the total with it.
func TestBillMessageShowsLateFee(t *testing.T) {
	t.Parallel()
	b := &rental.Bill{Month: "2026-11", DueDate: "2026-12-05", Status: rental.BillOverdue, Total: 451000, AmountPaid: 100000, Lines: []rental.Line{
		{Type: rental.LineRent, Description: "Rent", Amount: 350000},
		{Type: rental.LineElectricity, Description: "Electricity", Amount: 80000},
		{Type: rental.LineWater, Description: "Water", Amount: 9000},
		{Type: rental.LineLateFee, Description: "Late fee (3 days)", Amount: 12000},
	}}
	msgs, err := chat.Messages(rental.BillNotice(rental.NotifyPaymentReminder, b, "Baan Suk", "204", "https://rentapi.test/pay/x"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"ค่าปรับชำระล่าช้า / Late fee"`, `"120.00 ฿"`, `"4,510.00 บาท (THB)"`, `3,510.00 บาท`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the message does not show %s:\n%s", want, raw)
		}
	}
}
