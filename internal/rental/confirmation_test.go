package rental

import (
	"strings"
	"testing"
	"time"
)

// A provider's confirmation is refused when signed more than five minutes
// from the service's clock, either way.
func TestCheckSignedAt(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)
	for off, ok := range map[time.Duration]bool{0: true, 5 * time.Minute: true, -5 * time.Minute: true,
		5*time.Minute + time.Second: false, -5*time.Minute - time.Second: false, time.Hour: false} {
		err := CheckSignedAt(now.Add(-off), now)
		if ok != (err == nil) {
			t.Errorf("signed %s ago: %v", off, err)
		}
		if e, bad := AsError(err); bad && (e.Kind != KindUnauthenticated || e.Code != "timestamp_out_of_tolerance" ||
			e.Message != "X-Provider-Timestamp is more than 5 minutes from the service's clock; sign each request when it is sent.") {
			t.Errorf("signed %s ago: %+v", off, e)
		}
	}
}

// The fields of a confirmation: a transaction ID of 1-100 printable ASCII
// characters, a positive amount up to a billion baht, THB.
func TestConfirmationFields(t *testing.T) {
	t.Parallel()
	ids := map[string]bool{"txn_1": true, strings.Repeat("t", 100): true, "a b/c:d": true,
		"": false, strings.Repeat("t", 101): false, "txn\n1": false, "ธุรกรรม": false}
	for id, ok := range ids {
		err := CheckTransactionID(id)
		if ok != (err == nil) {
			t.Errorf("transaction ID %q: %v", id, err)
		}
		if e, bad := AsError(err); bad && (e.Param != "transaction_id" || e.Message != "transaction_id must be 1-100 printable ASCII characters.") {
			t.Errorf("transaction ID %q: %+v", id, e)
		}
	}
	amounts := map[int64]bool{1: true, 350_000: true, MaxAmount: true, 0: false, -1: false, MaxAmount + 1: false}
	for n, ok := range amounts {
		err := CheckAmount("amount", n)
		if ok != (err == nil) {
			t.Errorf("amount %d: %v", n, err)
		}
		if e, bad := AsError(err); bad && (e.Param != "amount" || e.Message != "amount must be a positive number of satang, at most 100000000000.") {
			t.Errorf("amount %d: %+v", n, e)
		}
	}
	for c, ok := range map[string]bool{"THB": true, "thb": false, "USD": false, "": false} {
		err := CheckCurrency(c)
		if ok != (err == nil) {
			t.Errorf("currency %q: %v", c, err)
		}
		if e, bad := AsError(err); bad && (e.Param != "currency" || e.Message != "currency must be THB.") {
			t.Errorf("currency %q: %+v", c, e)
		}
	}
}

// The payment test helper ends a payment paid, expired or canceled; an
// amount_paid goes only with paid, and is an amount as any other.
func TestSimulatedPayment(t *testing.T) {
	t.Parallel()
	for o, ok := range map[string]bool{PaymentPaid: true, PaymentExpired: true, PaymentCanceled: true, PaymentPending: false, "": false} {
		err := CheckOutcome(o)
		if ok != (err == nil) {
			t.Errorf("outcome %q: %v", o, err)
		}
		if e, bad := AsError(err); bad && (e.Param != "outcome" || e.Message != "outcome must be one of [paid expired canceled].") {
			t.Errorf("outcome %q: %+v", o, e)
		}
	}
	const outOfRange = "amount_paid must be a positive number of satang, at most 100000000000."
	const notPaid = "amount_paid goes only with outcome paid."
	cases := []struct {
		outcome string
		amount  Optional[int64]
		message string
	}{
		{PaymentPaid, Optional[int64]{}, ""},
		{PaymentExpired, Optional[int64]{}, ""},
		{PaymentPaid, Optional[int64]{Set: true, Value: 100}, ""},
		{PaymentPaid, Optional[int64]{Set: true, Value: MaxAmount}, ""},
		{PaymentPaid, Optional[int64]{Set: true, Null: true}, outOfRange},
		{PaymentPaid, Optional[int64]{Set: true, Value: 0}, outOfRange},
		{PaymentPaid, Optional[int64]{Set: true, Value: MaxAmount + 1}, outOfRange},
		{PaymentExpired, Optional[int64]{Set: true, Value: 0}, outOfRange}, // the amount is judged first
		{PaymentExpired, Optional[int64]{Set: true, Value: 100}, notPaid},
		{PaymentCanceled, Optional[int64]{Set: true, Value: 100}, notPaid},
	}
	for _, c := range cases {
		err := CheckAmountPaid(c.outcome, c.amount)
		e, _ := AsError(err)
		switch {
		case c.message == "" && err != nil:
			t.Errorf("%s %+v: %v", c.outcome, c.amount, err)
		case c.message != "" && (e == nil || e.Param != "amount_paid" || e.Message != c.message):
			t.Errorf("%s %+v: %v, want %q", c.outcome, c.amount, err, c.message)
		}
	}
}
