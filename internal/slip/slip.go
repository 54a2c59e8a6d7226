// Package slip is the client of the slip-verification provider, the outside
// service that reads a Thai bank transfer slip and says what moved. It
// speaks one real provider's documented wire format, EasySlip's verify API
// (v1), so that an operator can point the service at EasySlip with a key
// and nothing in between:
//
//	POST {base}/api/v1/verify
//	Authorization: Bearer <key>
//	Content-Type: application/json
//	{"payload": "<the slip QR's text>"}   or   {"image": "<base64 JPEG/PNG>"}
//
// A slip read answers 200 {"status": 200, "data": {...}}, of which the
// service uses transRef (the bank's transaction reference), date (ISO
// 8601), amount.amount (baht, a number), sender.bank.short (the sending
// bank's short name, e.g. "KBANK") and the receiver's account numbers as
// EasySlip masks them: receiver.account.proxy.account (the PromptPay proxy,
// e.g. "xxx-xxx-1234") and receiver.account.bank.account (e.g.
// "xxx-x-x1234-x"). A refusal answers its status with {"status": <same>,
// "message": "<code>"}: 400 invalid_payload, invalid_image,
// image_size_too_large, duplicate_slip; 401 unauthorized; 403
// access_denied, account_not_verified, application_expired,
// application_deactivated, quota_exceeded; 404 slip_not_found,
// qrcode_not_found; 500 server_error, api_server_error.
//
// The client only classifies the answer (Result.Outcome); what a slip means
// for a bill is decided in internal/rental. The image and the QR text are
// personal data: the client never logs them and no error carries them.
package slip

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"rentapi/internal/rental"
)

// DefaultBaseURL is EasySlip's API.
const DefaultBaseURL = "https://developer.easyslip.com"

// VerifyPath is the verify endpoint under the base URL.
const VerifyPath = "/api/v1/verify"

// Timeout bounds one verification: EasySlip reads an image in a few
// seconds; a provider slower than this counts as failing, and the job
// tries again on its schedule.
const Timeout = 20 * time.Second

// Outcomes of one verification.
type Outcome int

const (
	// Failed: the provider could not answer (down, slow, refusing our key
	// or out of quota); ask again later.
	Failed Outcome = iota
	// Read: the provider read the slip; Result.Reading says what moved.
	Read
	// Unreadable: there is no slip in what was sent (no QR, not a slip,
	// a bad image); asking again gets the same answer.
	Unreadable
	// Duplicate: the provider itself has seen this slip before.
	Duplicate
)

// Result is the provider's answer to one verification.
type Result struct {
	Outcome Outcome
	Reading rental.SlipReading
	// Reason is the provider's code or what went wrong, for the log: it
	// never holds the image or the QR text.
	Reason string
}

// Client asks the provider. Its zero value is not usable: make it with New.
type Client struct {
	base string
	key  string
	http *http.Client
}

// New returns a client of the provider at base (DefaultBaseURL when empty)
// with the API key.
func New(base, key string) (*Client, error) {
	if base == "" {
		base = DefaultBaseURL
	}
	if !strings.HasPrefix(base, "https://") && !strings.HasPrefix(base, "http://") {
		return nil, fmt.Errorf("slip: provider URL %q is not http(s)", base)
	}
	if key == "" {
		return nil, errors.New("slip: the provider's API key is empty")
	}
	return &Client{base: strings.TrimRight(base, "/"), key: key, http: &http.Client{Timeout: Timeout}}, nil
}

// Request is what is verified: exactly one of a slip QR's text or an image.
type Request struct {
	QRPayload string
	Image     []byte
}

// Verify asks the provider about one slip. A transport failure is a Failed
// result, not an error: an error is only a request the client could not
// build.
func (c *Client) Verify(ctx context.Context, rq Request) (Result, error) {
	body := map[string]string{}
	switch {
	case rq.QRPayload != "" && rq.Image == nil:
		body["payload"] = rq.QRPayload
	case rq.QRPayload == "" && rq.Image != nil:
		body["image"] = base64.StdEncoding.EncodeToString(rq.Image)
	default:
		return Result{}, errors.New("slip: a request needs exactly one of a QR payload or an image")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return Result{}, fmt.Errorf("slip: %w", err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+VerifyPath, bytes.NewReader(b))
	if err != nil {
		return Result{}, fmt.Errorf("slip: %w", err)
	}
	r.Header.Set("Authorization", "Bearer "+c.key)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(r)
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return Result{Outcome: Failed, Reason: "no answer: " + transportError(err)}, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Result{Outcome: Failed, Reason: "answer cut short: " + transportError(err)}, nil
	}
	return classify(resp.StatusCode, raw), nil
}

// transportError describes a failure without the URL Go's errors repeat
// (which is only the provider's, but keeps the log line short).
func transportError(err error) string {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap().Error()
	}
	return err.Error()
}

// answer is EasySlip's envelope: data on 200, message otherwise.
type answer struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
	Data    *struct {
		TransRef string `json:"transRef"`
		Date     string `json:"date"`
		Amount   struct {
			Amount float64 `json:"amount"`
		} `json:"amount"`
		Sender struct {
			Bank struct {
				Short string `json:"short"`
			} `json:"bank"`
		} `json:"sender"`
		Receiver struct {
			Account struct {
				Bank *struct {
					Account string `json:"account"`
				} `json:"bank"`
				Proxy *struct {
					Account string `json:"account"`
				} `json:"proxy"`
			} `json:"account"`
		} `json:"receiver"`
	} `json:"data"`
}

// printable reports whether a value the provider reports can be shown as
// it is: 1-100 printable ASCII characters, as bank references and short
// bank names are.
func printable(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// classify turns the provider's status and body into a Result.
func classify(status int, raw []byte) Result {
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return Result{Outcome: Failed, Reason: fmt.Sprintf("provider answered %d with a body that is not its JSON", status)}
	}
	if status == http.StatusOK && a.Data != nil {
		d := a.Data
		r := rental.SlipReading{TransRef: d.TransRef}
		if printable(d.Sender.Bank.Short) {
			r.SendingBank = d.Sender.Bank.Short
		}
		amount, ok := rental.SatangOf(d.Amount.Amount)
		if !ok || !printable(d.TransRef) {
			return Result{Outcome: Unreadable, Reason: "the provider read no transfer (no reference or amount)"}
		}
		r.Amount = amount
		if t, err := time.Parse(time.RFC3339, d.Date); err == nil {
			r.TransferredAt = t
		}
		if p := d.Receiver.Account.Proxy; p != nil && p.Account != "" {
			r.Receivers = append(r.Receivers, p.Account)
		}
		if b := d.Receiver.Account.Bank; b != nil && b.Account != "" {
			r.Receivers = append(r.Receivers, b.Account)
		}
		return Result{Outcome: Read, Reading: r, Reason: "read"}
	}
	reason := fmt.Sprintf("provider answered %d %s", status, a.Message)
	switch a.Message {
	case "duplicate_slip":
		return Result{Outcome: Duplicate, Reason: reason}
	case "invalid_payload", "invalid_image", "image_size_too_large", "slip_not_found", "qrcode_not_found":
		return Result{Outcome: Unreadable, Reason: reason}
	}
	// unauthorized, access_denied, quota_exceeded, server errors and
	// anything unknown: the provider failed us, not the tenant.
	return Result{Outcome: Failed, Reason: reason}
}
