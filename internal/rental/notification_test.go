package rental

import (
	"strings"
	"testing"
	"time"
)

func TestCheckNotification(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ, status string
		issue       bool
		code        string
	}{
		{NotifyNewBill, BillDraft, true, ""},
		{NotifyNewBill, BillIssued, false, ""},
		{NotifyNewBill, BillOverdue, false, ""},
		{NotifyNewBill, BillPaid, false, "invalid_state"},
		{NotifyPaymentReminder, BillIssued, false, ""},
		{NotifyPaymentReminder, BillOverdue, false, ""},
		{NotifyPaymentReminder, BillDraft, false, "invalid_state"},
		{NotifyPaymentReminder, BillPaid, false, "invalid_state"},
		{NotifyPaymentReceipt, BillPaid, false, ""},
		{NotifyPaymentReceipt, BillIssued, false, "invalid_state"},
		{"birthday", BillIssued, false, "invalid_parameter"},
	} {
		issue, err := CheckNotification(tc.typ, tc.status)
		code := ""
		if e, ok := AsError(err); ok {
			code = e.Code
		}
		if issue != tc.issue || code != tc.code {
			t.Errorf("%s of a %s bill: issue %v, %q; want %v, %q", tc.typ, tc.status, issue, code, tc.issue, tc.code)
		}
	}
}

func TestClassifySend(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]SendOutcome{200: SendDone, 409: SendDone, 400: SendRefused, 403: SendRefused,
		429: SendRetry, 500: SendRetry, 503: SendRetry, 0: SendRetry} {
		if got := ClassifySend(status); got != want {
			t.Errorf("ClassifySend(%d) = %v, want %v", status, got, want)
		}
	}
}

func TestNextSend(t *testing.T) {
	t.Parallel()
	want := []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, 30 * time.Minute}
	for i, w := range want {
		if d, ok := NextSend(i + 1); !ok || d != w {
			t.Errorf("after attempt %d: %v %v, want %v", i+1, d, ok, w)
		}
	}
	if _, ok := NextSend(MaxSendAttempts); ok {
		t.Error("a retry after the last attempt")
	}
}

// A bill notice goes to the bill's tenant; a bill without one reaches no
// one.
func TestNoticeTenant(t *testing.T) {
	t.Parallel()
	tenant := "ten_1"
	if id, err := NoticeTenant(&Bill{ID: "bill_1", TenantID: &tenant}); id != tenant || err != nil {
		t.Errorf("a bill with a tenant: %q, %v", id, err)
	}
	id, err := NoticeTenant(&Bill{ID: "bill_2"})
	if e, ok := AsError(err); id != "" || !ok || e.Kind != KindConflict || e.Code != "tenant_not_reachable" || !strings.Contains(e.Message, "bill_2") {
		t.Errorf("a bill without a tenant: %q, %v", id, err)
	}
}

func TestCheckReachable(t *testing.T) {
	t.Parallel()
	out := Time{}
	for _, tc := range []struct {
		name string
		t    Tenant
		ok   bool
	}{
		{"registered", Tenant{ChatEnabled: true, ChatRegistered: true}, true},
		{"not registered", Tenant{ChatEnabled: true}, false},
		{"chat off", Tenant{ChatRegistered: true}, false},
		{"moved out", Tenant{ChatEnabled: true, ChatRegistered: true, MovedOutAt: &out}, false},
	} {
		if err := CheckReachable(&tc.t); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestMessageText(t *testing.T) {
	t.Parallel()
	for text, ok := range map[string]bool{"": false, "a": true, strings.Repeat("ก", 2000): true, strings.Repeat("a", 2001): false, "\xff": false} {
		if err := CheckMessageText(text); (err == nil) != ok {
			t.Errorf("%.20q: %v", text, err)
		}
	}
}

func TestRegistrationCode(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		c := NewRegistrationCode()
		if n, ok := NormalizeCode(strings.ToLower(c[:4]) + "-" + c[4:]); !ok || n != c || seen[c] {
			t.Fatalf("code %q read back as %q %v", c, n, ok)
		}
		seen[c] = true
	}
	for _, bad := range []string{"", "ABCD", "ACDEFGH0", "ACDEFGHJK", "ACDEFGHI"} {
		if _, ok := NormalizeCode(bad); ok {
			t.Errorf("%q read as a code", bad)
		}
	}
}

func TestBaht(t *testing.T) {
	t.Parallel()
	for satang, want := range map[int64]string{0: "0.00", 5: "0.05", 123456: "1,234.56", 100000000: "1,000,000.00", -250: "-2.50"} {
		if got := Baht(satang); got != want {
			t.Errorf("Baht(%d) = %s, want %s", satang, got, want)
		}
	}
}

func TestCheckLineRegistration(t *testing.T) {
	t.Parallel()
	out := Time{Time: time.Unix(1, 0)}
	for _, tc := range []struct {
		name string
		t    Tenant
		done bool
		code string
	}{
		{"new", Tenant{ID: "ten_1"}, false, ""},
		{"registered", Tenant{ID: "ten_1", ChatRegistered: true}, true, ""},
		{"moved out", Tenant{ID: "ten_1", MovedOutAt: &out}, false, "invalid_state"},
		{"registered, moved out", Tenant{ID: "ten_1", ChatRegistered: true, MovedOutAt: &out}, false, "invalid_state"},
	} {
		done, err := CheckLineRegistration(&tc.t)
		code := ""
		if e, ok := AsError(err); ok {
			code = e.Code
		}
		if done != tc.done || code != tc.code {
			t.Errorf("%s: done %v, %q; want %v, %q", tc.name, done, code, tc.done, tc.code)
		}
	}
}
