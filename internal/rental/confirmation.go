package rental

import (
	"slices"
	"time"
)

// The rules of a payment provider's confirmation (POST
// /provider/v1/confirmations/{provider}): when its signature counts, and
// which transaction IDs, amounts and currencies it may carry. The test
// helper that plays the provider in a sandbox keeps to the same amounts.

// ConfirmationTolerance is how far a confirmation's timestamp may be from
// the service's clock: older ones are refused as possible replays of a
// captured request (the transaction ID de-duplicates the rest).
const ConfirmationTolerance = 5 * time.Minute

// MaxAmount bounds any amount a client or provider sends: a billion baht in
// satang.
const MaxAmount = 100_000_000_000

// MaxTransactionIDLen is the longest provider's transaction ID.
const MaxTransactionIDLen = 100

// BadProviderSignature is 401 invalid_signature on the confirmation
// endpoint. An unknown provider, a missing timestamp and a bad signature
// all get this one answer, so that nobody without a secret learns which
// providers exist.
func BadProviderSignature() *Error {
	return &Error{Kind: KindUnauthenticated, Code: "invalid_signature",
		Message: "X-Provider-Signature does not match the X-Provider-Timestamp (Unix seconds) and the raw body for this provider."}
}

// CheckSignedAt accepts a confirmation signed within ConfirmationTolerance
// of now, either way; otherwise it is 401 timestamp_out_of_tolerance.
func CheckSignedAt(signed, now time.Time) error {
	if d := now.Sub(signed); d > ConfirmationTolerance || d < -ConfirmationTolerance {
		return &Error{Kind: KindUnauthenticated, Code: "timestamp_out_of_tolerance",
			Message: "X-Provider-Timestamp is more than 5 minutes from the service's clock; sign each request when it is sent."}
	}
	return nil
}

// CheckTransactionID accepts a provider's transaction ID of 1 to 100
// printable ASCII characters: it is stored, logged and compared as is.
func CheckTransactionID(id string) error {
	if id == "" || len(id) > MaxTransactionIDLen || !printableASCII(id) {
		return Invalid("transaction_id", "transaction_id must be 1-100 printable ASCII characters.")
	}
	return nil
}

// CheckAmount accepts an amount sent as the field param: a positive number
// of satang up to MaxAmount.
func CheckAmount(param string, satang int64) error {
	if satang < 1 || satang > MaxAmount {
		return amountOutOfRange(param)
	}
	return nil
}

func amountOutOfRange(param string) *Error {
	return Invalid(param, "%s must be a positive number of satang, at most %d.", param, int64(MaxAmount))
}

// CheckCurrency accepts the one currency of the service, THB.
func CheckCurrency(currency string) error {
	if currency != Currency {
		return Invalid("currency", "currency must be THB.")
	}
	return nil
}

// SimulatedOutcomes are the ends the sandbox's payment test helper can
// give a payment: the provider's confirmation, the QR's expiry, or a
// cancellation.
var SimulatedOutcomes = []string{PaymentPaid, PaymentExpired, PaymentCanceled}

// CheckOutcome accepts one of SimulatedOutcomes.
func CheckOutcome(outcome string) error {
	if slices.Contains(SimulatedOutcomes, outcome) {
		return nil
	}
	return NotOneOf("outcome", SimulatedOutcomes)
}

// CheckAmountPaid accepts the test helper's amount_paid: absent (the
// amount owed is paid), or, with outcome paid only, an amount CheckAmount
// accepts (a partial or an over-payment).
func CheckAmountPaid(outcome string, amount Optional[int64]) error {
	switch {
	case !amount.Set:
		return nil
	case amount.Null:
		return amountOutOfRange("amount_paid")
	}
	if err := CheckAmount("amount_paid", amount.Value); err != nil {
		return err
	}
	if outcome != PaymentPaid {
		return Invalid("amount_paid", "amount_paid goes only with outcome paid.")
	}
	return nil
}

// NoQRToSimulate is 409 bill_not_payable from the payment test helper:
// the payment page, opened as a tenant would, shows no QR, for the reason
// noQR (one of the NoQR values).
func NoQRToSimulate(noQR string) *Error {
	return Conflict("bill_not_payable", "The payment page shows no QR for this bill (%s).", noQR)
}
