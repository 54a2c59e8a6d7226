// Package sliptest is a local stand-in for the slip-verification provider
// (EasySlip's verify API, as package slip documents it) for tests and
// benchmarks: a real HTTP server speaking the real wire format, whose
// answers a test chooses with a Mode. The same slip (the same QR text or
// image bytes) always has the same transaction reference, as a bank's slip
// does, so a slip sent twice is recognisably the same transfer.
package sliptest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Key is the API key the fake takes; any other is 401 unauthorized.
const Key = "easyslip-test-key-0123456789"

// Modes of the fake provider.
type Mode int

const (
	// Verified reads every slip as a transfer of Amount to Receiver.
	Verified Mode = iota
	// WrongReceiver reads every slip as paying someone else.
	WrongReceiver
	// Duplicate answers 400 duplicate_slip, as EasySlip does for a slip it
	// has seen when asked to check.
	Duplicate
	// Unreadable answers 404 qrcode_not_found: no slip in the picture.
	Unreadable
	// Down answers 500 server_error.
	Down
	// Slow answers as Verified, after Delay.
	Slow
)

// Provider is the fake. Its fields may be changed while it runs through
// Set.
type Provider struct {
	URL string

	mu sync.Mutex
	// mode is how it answers; amount is the baht it reads (default 5000);
	// receiver is the masked receiver it shows (default "xxx-xxx-1234").
	mode     Mode
	amount   float64
	receiver string
	delay    time.Duration
	// failures is how many requests, in any mode, answer 500 first.
	failures int
	calls    int
}

// New starts the fake until the test ends.
func New(t testing.TB) *Provider {
	p := &Provider{amount: 5000, receiver: "xxx-xxx-1234", delay: 2 * time.Second}
	s := httptest.NewServer(p)
	t.Cleanup(s.Close)
	p.URL = s.URL
	return p
}

// Settings are what Set changes; zero fields leave the setting as it is,
// except Mode, which is always set.
type Settings struct {
	Mode     Mode
	Amount   float64
	Receiver string
	Delay    time.Duration
	// Failures is how many of the next requests answer 500 before the
	// mode applies (provider down, then up again).
	Failures int
}

// Set changes how the fake answers from the next request on.
func (p *Provider) Set(s Settings) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mode, p.failures = s.Mode, s.Failures
	if s.Amount != 0 {
		p.amount = s.Amount
	}
	if s.Receiver != "" {
		p.receiver = s.Receiver
	}
	if s.Delay != 0 {
		p.delay = s.Delay
	}
}

// Calls is how many verify requests it has had.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Ref is the transaction reference the fake reads on a slip of this QR
// text or image.
func Ref(qr string, image []byte) string {
	h := sha256.New()
	h.Write([]byte(qr))
	h.Write(image)
	return "0" + strings.ToUpper(hex.EncodeToString(h.Sum(nil))[:19])
}

func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/verify" {
		answer(w, http.StatusNotFound, "not_found", nil)
		return
	}
	p.mu.Lock()
	p.calls++
	mode, amount, receiver, delay := p.mode, p.amount, p.receiver, p.delay
	failing := p.failures > 0
	if failing {
		p.failures--
	}
	p.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+Key {
		answer(w, http.StatusUnauthorized, "unauthorized", nil)
		return
	}
	var body struct {
		Payload string `json:"payload"`
		Image   string `json:"image"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || (body.Payload == "") == (body.Image == "") {
		answer(w, http.StatusBadRequest, "invalid_payload", nil)
		return
	}
	image, err := base64.StdEncoding.DecodeString(body.Image)
	if err != nil {
		answer(w, http.StatusBadRequest, "invalid_image", nil)
		return
	}
	switch {
	case failing || mode == Down:
		answer(w, http.StatusInternalServerError, "server_error", nil)
		return
	case mode == Duplicate:
		answer(w, http.StatusBadRequest, "duplicate_slip", nil)
		return
	case mode == Unreadable:
		answer(w, http.StatusNotFound, "qrcode_not_found", nil)
		return
	case mode == Slow:
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	case mode == WrongReceiver:
		receiver = "xxx-x-x9876-x"
	}
	ref := Ref(body.Payload, image)
	answer(w, http.StatusOK, "", map[string]any{
		"payload":     body.Payload,
		"transRef":    ref,
		"date":        time.Now().UTC().Add(-3 * time.Minute).Format("2006-01-02T15:04:05+00:00"),
		"countryCode": "TH",
		"amount":      map[string]any{"amount": amount, "local": map[string]any{"amount": 0, "currency": ""}},
		"fee":         0,
		"ref1":        "", "ref2": "", "ref3": "",
		"sender": map[string]any{
			"bank":    map[string]any{"id": "004", "name": "ธนาคารกสิกรไทย", "short": "KBANK"},
			"account": map[string]any{"name": map[string]any{"th": "นาย ผู้เช่า ท", "en": "MR. TENANT T"}, "bank": map[string]any{"type": "BANKAC", "account": "xxx-x-x5678-x"}},
		},
		"receiver": map[string]any{
			"bank":    map[string]any{"id": "014", "name": "ธนาคารไทยพาณิชย์", "short": "SCB"},
			"account": map[string]any{"name": map[string]any{"th": "นาย เจ้าของ ห"}, "proxy": map[string]any{"type": "MSISDN", "account": receiver}},
		},
	})
}

// answer writes EasySlip's envelope.
func answer(w http.ResponseWriter, status int, message string, data any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"status": status}
	if data != nil {
		body["data"] = data
	} else {
		body["message"] = message
	}
	json.NewEncoder(w).Encode(body) // a client gone away is the test's own business
}
