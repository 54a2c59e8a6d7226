package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"rentapi/sdk/go/webhook"
)

// sign is the spec's signature, written here from its words: the hex
// HMAC-SHA256 of "<timestamp>.<body>" under the secret.
func sign(secret string, ts int64, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(m, "%d.%s", ts, body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestVerify(t *testing.T) {
	const secret, old = "whsec_new", "whsec_old"
	body := `{"id":"evt_1","object":"event","type":"bill.created","api_version":"v1","mode":"test","account_id":"acct_1","created_at":"2026-11-28T09:00:00Z","data":{"object":{"id":"bill_1","object":"bill"}}}`
	now := time.Unix(1_790_000_000, 0)
	ts := now.Unix()
	header := func(ts int64, sig string) http.Header {
		h := http.Header{}
		h.Set(webhook.TimestampHeader, fmt.Sprint(ts))
		if sig != "" {
			h.Set(webhook.SignatureHeader, sig)
		}
		return h
	}
	tests := []struct {
		name string
		h    http.Header
		body string
		want error
	}{
		{"signed", header(ts, sign(secret, ts, body)), body, nil},
		{"rotation: the old secret's first", header(ts, sign(old, ts, body)+","+sign(secret, ts, body)), body, nil},
		{"rotation: spaces after the comma", header(ts, sign(secret, ts, body)+", "+sign(old, ts, body)), body, nil},
		{"4 minutes old", header(ts-240, sign(secret, ts-240, body)), body, nil},
		{"6 minutes old", header(ts-360, sign(secret, ts-360, body)), body, webhook.ErrTooOld},
		{"6 minutes ahead", header(ts+360, sign(secret, ts+360, body)), body, webhook.ErrTooOld},
		{"body changed", header(ts, sign(secret, ts, body)), body + " ", webhook.ErrSignature},
		{"timestamp changed", header(ts+1, sign(secret, ts, body)), body, webhook.ErrSignature},
		{"another secret", header(ts, sign(old, ts, body)), body, webhook.ErrSignature},
		{"not hex", header(ts, "sha256=zz"), body, webhook.ErrSignature},
		{"no signature", header(ts, ""), body, webhook.ErrNoSignature},
		{"another scheme", header(ts, "v1=abc"), body, webhook.ErrNoSignature},
		{"no timestamp", http.Header{webhook.SignatureHeader: {sign(secret, ts, body)}}, body, webhook.ErrNoSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.VerifyAt([]byte(tc.body), tc.h, secret, now)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("VerifyAt: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestConstructEvent(t *testing.T) {
	body := `{"id":"evt_1","object":"event","type":"bill.created","api_version":"v1","mode":"test","account_id":"acct_1","created_at":"2026-11-28T09:00:00Z","data":{"object":{"id":"bill_1","object":"bill","total":391600}}}`
	ts := time.Now().Unix()
	h := http.Header{}
	h.Set(webhook.TimestampHeader, fmt.Sprint(ts))
	h.Set(webhook.SignatureHeader, sign("whsec_x", ts, body))
	e, err := webhook.ConstructEvent([]byte(body), h, "whsec_x")
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != "evt_1" || e.Type != "bill.created" || string(e.Data.Object) != `{"id":"bill_1","object":"bill","total":391600}` {
		t.Fatalf("%+v", e)
	}
	if _, err := webhook.ConstructEvent([]byte(body), h, "whsec_y"); !errors.Is(err, webhook.ErrSignature) {
		t.Fatalf("another secret: %v", err)
	}
}
