package rental

import (
	"testing"
	"time"
)

// A receipt is due once: when the bill is paid and has none yet.
func TestReceiptDue(t *testing.T) {
	t.Parallel()
	issued := &Receipt{Number: "R2026-000001"}
	for _, c := range []struct {
		status  string
		receipt *Receipt
		want    bool
	}{
		{BillDraft, nil, false},
		{BillIssued, nil, false}, // a partial payment leaves it issued
		{BillOverdue, nil, false},
		{BillPaid, nil, true},
		{BillPaid, issued, false}, // paid again: it keeps the first
	} {
		if got := ReceiptDue(&Bill{Status: c.status, Receipt: c.receipt}); got != c.want {
			t.Errorf("%s with receipt %v: due %v, want %v", c.status, c.receipt, got, c.want)
		}
	}
}

// The year of a receipt is Bangkok's, whatever UTC says.
func TestReceiptYear(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		at   time.Time
		want int
	}{
		{time.Date(2026, 12, 31, 16, 59, 59, 0, time.UTC), 2026}, // 23:59:59 in Bangkok
		{time.Date(2026, 12, 31, 17, 0, 0, 0, time.UTC), 2027},   // 00:00 on 1 January in Bangkok
		{time.Date(2027, 1, 1, 0, 30, 0, 0, Bangkok), 2027},
		{time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC), 2026},
	} {
		if got := ReceiptYear(c.at); got != c.want {
			t.Errorf("%v: year %d, want %d", c.at, got, c.want)
		}
	}
}

// Numbers are R, the year, and six digits of the year's count.
func TestReceiptNumber(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		year int
		seq  int64
		want string
	}{
		{2026, 1, "R2026-000001"},
		{2026, 42, "R2026-000042"},
		{2027, 999_999, "R2027-999999"},
		{2027, 1_000_000, "R2027-1000000"},
	} {
		if got := ReceiptNumber(c.year, c.seq); got != c.want {
			t.Errorf("%d, %d: %q, want %q", c.year, c.seq, got, c.want)
		}
	}
}

// A payment with a slip was paid by slip; any other by the page's QR.
func TestPaidBy(t *testing.T) {
	t.Parallel()
	slip, empty := "slip_123", ""
	for _, c := range []struct {
		slip *string
		want string
	}{
		{nil, PaidByQR},
		{&empty, PaidByQR},
		{&slip, PaidBySlip},
	} {
		if got := PaidBy(c.slip); got != c.want {
			t.Errorf("slip %v: %q, want %q", c.slip, got, c.want)
		}
	}
}
