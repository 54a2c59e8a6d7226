package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// handleConfirmation takes a payment provider's confirmation: it checks the
// provider's signature over the timestamp and the raw body, then records
// the confirmation, exactly once per transaction ID.
func (s *Server) handleConfirmation() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider := r.PathValue("provider")
		body, err := s.readBody(w, r)
		if err == nil {
			err = s.verifyProvider(r, provider, body)
		}
		var conf rental.Confirmation
		if err == nil {
			conf, err = parseConfirmation(body)
			conf.Provider = provider
		}
		var p *rental.Payment
		var duplicate bool
		if err == nil {
			err = s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
				p, duplicate, err = tx.ConfirmPayment(r.Context(), conf)
				return err
			})
		}
		if err != nil {
			s.log.WarnContext(r.Context(), "payment confirmation refused", "request_id", requestID(r.Context()),
				"provider", provider, "error", err.Error())
			s.writeError(w, r, err)
			return
		}
		s.log.InfoContext(r.Context(), "payment confirmation", "request_id", requestID(r.Context()), "provider", provider,
			"transaction_id", conf.TransactionID, "payment_id", p.ID, "duplicate", duplicate)
		renderJSON(http.StatusOK, map[string]any{"data": map[string]any{
			"object": "payment_confirmation", "transaction_id": conf.TransactionID, "payment_id": p.ID,
			"duplicate": duplicate, "payment_status": p.Status,
		}}).write(r.Context(), w)
	})
}

// verifyProvider checks the X-Provider-Signature header (one or more
// comma-separated sha256=<hex> entries, so a provider can rotate its
// secret) against the provider's secret, and only then the
// X-Provider-Timestamp against the tolerance: an unknown provider, a
// missing timestamp and a bad signature all get the one answer, so the
// endpoint tells nobody without a secret which providers exist.
func (s *Server) verifyProvider(r *http.Request, provider string, body []byte) error {
	secret, ok := s.providers[provider]
	ts, err := strconv.ParseInt(r.Header.Get("X-Provider-Timestamp"), 10, 64)
	if !ok || secret == "" || err != nil || !providerSigned(r.Header.Get("X-Provider-Signature"), secret, ts, body) {
		return rental.BadProviderSignature()
	}
	return rental.CheckSignedAt(time.Unix(ts, 0), s.now())
}

// providerSigned reports whether any sha256= entry of a signature header
// is the provider's signature of the timestamp and body: the lowercase hex
// HMAC-SHA256, keyed with the provider's secret, of "<timestamp>.<raw
// body>", compared in constant time. It is the provider's format as the
// README documents it, written here rather than borrowed from the
// service's own outbound webhook signatures, so that either can change
// without the other.
func providerSigned(header, secret string, timestamp int64, body []byte) bool {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(strconv.AppendInt(nil, timestamp, 10))
	m.Write([]byte{'.'})
	m.Write(body)
	want := []byte(hex.EncodeToString(m.Sum(nil)))
	for entry := range strings.SplitSeq(header, ",") {
		if got, ok := strings.CutPrefix(strings.TrimSpace(entry), "sha256="); ok && hmac.Equal([]byte(got), want) {
			return true
		}
	}
	return false
}

// parseConfirmation validates a confirmation's body, naming the field at
// fault.
func parseConfirmation(body []byte) (rental.Confirmation, error) {
	f, err := parseObject(body, "transaction_id", "payment_id", "amount", "currency", "paid_at")
	if err != nil {
		return rental.Confirmation{}, err
	}
	var c rental.Confirmation
	if c.TransactionID, err = required(f, "transaction_id"); err != nil {
		return c, err
	}
	if err := rental.CheckTransactionID(c.TransactionID); err != nil {
		return c, err
	}
	if c.PaymentID, err = requiredID(f, "payment_id", "payment"); err != nil {
		return c, err
	}
	amount, err := f.int("amount")
	if err != nil {
		return c, err
	}
	if !amount.Set || amount.Null {
		return c, rental.Missing("amount")
	}
	if err := rental.CheckAmount("amount", amount.Value); err != nil {
		return c, err
	}
	c.Amount = amount.Value
	currency, err := required(f, "currency")
	if err != nil {
		return c, err
	}
	if err := rental.CheckCurrency(currency); err != nil {
		return c, err
	}
	paid, err := f.time("paid_at")
	if err != nil {
		return c, err
	}
	if paid.Set && !paid.Null {
		c.PaidAt = paid.Value.Time
	}
	return c, nil
}
