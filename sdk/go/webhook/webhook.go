// Package webhook checks that a webhook delivery comes from the service
// and reads its event. A delivery is signed with the endpoint's secret:
// X-SERVICE-Signature holds "sha256=<hex>" HMACs of "<timestamp>.<body>",
// one per secret while a rotated secret is still honoured, and
// X-SERVICE-Timestamp the Unix time it was signed at.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	rentapi "rentapi/sdk/go"
)

// Tolerance is how far a delivery's timestamp may be from now: a captured
// delivery replayed later than this is refused.
const Tolerance = 5 * time.Minute

// The headers of a signed delivery.
const (
	SignatureHeader = "X-SERVICE-Signature"
	TimestampHeader = "X-SERVICE-Timestamp"
)

// The reasons a delivery is refused; Verify's errors wrap one of them.
var (
	// ErrNoSignature: the signature or timestamp header is missing or not
	// in the service's format.
	ErrNoSignature = errors.New("webhook: no signature")
	// ErrTooOld: the timestamp is further than Tolerance from now.
	ErrTooOld = errors.New("webhook: timestamp outside the tolerance")
	// ErrSignature: no signature is the secret's over this body and
	// timestamp.
	ErrSignature = errors.New("webhook: signature does not match")
)

// Verify checks a delivery's headers against the raw body (read it whole
// before parsing anything) and the endpoint's secret (whsec_…), at the
// current time.
func Verify(body []byte, h http.Header, secret string) error {
	return VerifyAt(body, h, secret, time.Now())
}

// VerifyAt is Verify at the time now.
func VerifyAt(body []byte, h http.Header, secret string, now time.Time) error {
	ts, err := strconv.ParseInt(strings.TrimSpace(h.Get(TimestampHeader)), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s is %q", ErrNoSignature, TimestampHeader, h.Get(TimestampHeader))
	}
	if d := now.Sub(time.Unix(ts, 0)); d > Tolerance || d < -Tolerance {
		return fmt.Errorf("%w: signed %s ago", ErrTooOld, d.Round(time.Second))
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	want := m.Sum(nil)
	found := false
	for _, part := range strings.Split(h.Get(SignatureHeader), ",") {
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(part), "sha256=")
		if !ok {
			continue
		}
		found = true
		if got, err := hex.DecodeString(hexSig); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	if !found {
		return fmt.Errorf("%w: %s has no sha256= entry", ErrNoSignature, SignatureHeader)
	}
	return ErrSignature
}

// ConstructEvent verifies a delivery (Verify) and returns its event. Decode
// the event's Data.Object into the type its Type names: a Bill for bill.*,
// a Payment for payment.*, and so on.
func ConstructEvent(body []byte, h http.Header, secret string) (*rentapi.Event, error) {
	if err := Verify(body, h, secret); err != nil {
		return nil, err
	}
	var e rentapi.Event
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("webhook: reading the event: %w", err)
	}
	return &e, nil
}
