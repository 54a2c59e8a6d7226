// Package chat is the service's LINE Official Account: pushing a
// notification to a tenant through the LINE Messaging API (with the
// notification's retry key, so that LINE delivers it once however often it
// is sent), taking the events LINE posts to the service's webhook (a
// tenant's follow, registration code, slip picture, unfollow: Inbox) and
// replying to them, and the content of each kind of notification and reply. It uses
// LINE's own SDK so that the wire format is LINE's, not our reading of it.
package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"

	"rentapi/internal/rental"
)

// DefaultAPIURL is LINE's Messaging API.
const DefaultAPIURL = "https://api.line.me"

// DefaultDataURL is LINE's content API, where the pictures users send are
// fetched from: another host than the Messaging API's.
const DefaultDataURL = "https://api-data.line.me"

// Client talks to LINE for the service's channel.
type Client struct {
	api  *messaging_api.MessagingApiAPI
	blob *messaging_api.MessagingApiBlobAPI
}

// NewClient makes a client with the channel's access token for the API at
// baseURL and the content API at dataURL (DefaultAPIURL and DefaultDataURL
// when empty; tests give a local server).
func NewClient(token, baseURL, dataURL string) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultAPIURL
	}
	if dataURL == "" {
		dataURL = DefaultDataURL
	}
	api, err := messaging_api.NewMessagingApiAPI(token, messaging_api.WithEndpoint(baseURL),
		messaging_api.WithHTTPClient(&http.Client{Timeout: 10 * time.Second}))
	if err != nil {
		return nil, fmt.Errorf("chat: LINE client: %w", err)
	}
	blob, err := messaging_api.NewMessagingApiBlobAPI(token, messaging_api.WithBlobEndpoint(dataURL),
		messaging_api.WithBlobHTTPClient(&http.Client{Timeout: 15 * time.Second}))
	if err != nil {
		return nil, fmt.Errorf("chat: LINE content client: %w", err)
	}
	return &Client{api: api, blob: blob}, nil
}

// errTooLarge is a message's content larger than the caller takes.
var errTooLarge = errors.New("chat: the message's content is too large")

// Content fetches what a user sent in a message (a picture) from LINE's
// content API, at most max bytes: a larger one is errTooLarge, read no
// further. The content is personal data: it is returned, never logged.
func (c *Client) Content(messageID string, max int) ([]byte, error) {
	res, err := c.blob.GetMessageContent(messageID)
	if err != nil {
		return nil, fmt.Errorf("chat: message content: %w", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("chat: message content: %w", err)
	}
	if len(b) > max {
		return nil, errTooLarge
	}
	return b, nil
}

// Result is LINE's answer to a push: its status (0 when none came) and,
// when it failed, why.
type Result struct {
	Status int
	Err    string
}

// Push sends the notice to a LINE user with the notification's retry key.
func (c *Client) Push(to, retryKey string, n rental.Notice) Result {
	msgs, err := Messages(n)
	if err != nil {
		return Result{Err: err.Error()}
	}
	res, _, err := c.api.PushMessageWithHttpInfo(&messaging_api.PushMessageRequest{To: to, Messages: msgs}, retryKey)
	out := Result{}
	if res != nil {
		out.Status = res.StatusCode
		res.Body.Close()
	}
	if err != nil {
		out.Err = err.Error()
		if len(out.Err) > 500 {
			out.Err = out.Err[:500]
		}
	}
	return out
}

// Reply answers a tenant's message or follow with a text.
func (c *Client) Reply(replyToken, text string) error {
	msg, err := messaging_api.UnmarshalMessage(mustJSON(map[string]any{"type": "text", "text": text}))
	if err != nil {
		return err
	}
	_, err = c.api.ReplyMessage(&messaging_api.ReplyMessageRequest{ReplyToken: replyToken, Messages: []messaging_api.MessageInterface{msg}})
	return err
}

// Messages is what a notice sends: a bill notice or reminder as a Flex
// message, Thai first and English below; a receipt and a message as text.
func Messages(n rental.Notice) ([]messaging_api.MessageInterface, error) {
	var v map[string]any
	switch n.Type {
	case rental.NotifyNewBill, rental.NotifyPaymentReminder:
		v = map[string]any{"type": "flex", "altText": AltText(n), "contents": billBubble(n)}
	default:
		v = map[string]any{"type": "text", "text": Text(n)}
	}
	m, err := messaging_api.UnmarshalMessage(mustJSON(v))
	if err != nil {
		return nil, fmt.Errorf("chat: message: %w", err)
	}
	return []messaging_api.MessageInterface{m}, nil
}

// Text is the text of a notice the chat sends as a text message (a
// payment receipt, a landlord's message); "" for a bill notice or a
// reminder, which go as a Flex message (AltText and the bill's lines).
func Text(n rental.Notice) string {
	switch n.Type {
	case rental.NotifyNewBill, rental.NotifyPaymentReminder:
		return ""
	case rental.NotifyPaymentReceipt:
		return receiptText(n)
	}
	return n.Text
}

// receiptText is a payment receipt's text, Thai first and English below,
// with the receipt's number and the link to its printable page when the
// bill has one.
func receiptText(n rental.Notice) string {
	th := fmt.Sprintf("ได้รับชำระเงินแล้ว %s บาท\n%s ห้อง %s เดือน %s", rental.Baht(n.Paid), n.Property, n.Room, n.Month)
	en := fmt.Sprintf("Payment received: %s baht\n%s room %s, %s", rental.Baht(n.Paid), n.Property, n.Room, n.Month)
	if n.ReceiptURL == "" {
		return th + "\n\n" + en
	}
	th += "\nใบเสร็จเลขที่ " + n.ReceiptNumber
	en += "\nReceipt " + n.ReceiptNumber
	return th + "\n\n" + en + "\n\n" + n.ReceiptURL
}

// AltText is the line a phone shows in its notification: what, where, how
// much, by when.
func AltText(n rental.Notice) string {
	what := "บิลค่าเช่า"
	if n.Type == rental.NotifyPaymentReminder {
		what = "เตือนชำระค่าเช่า"
	}
	return fmt.Sprintf("%s %s ห้อง %s: %s บาท ชำระภายใน %s", what, n.Month, n.Room, rental.Baht(n.Total-n.Paid), n.DueDate)
}

// billBubble is the Flex bubble of a bill notice.
func billBubble(n rental.Notice) map[string]any {
	title := "ใบแจ้งค่าเช่า / Bill"
	if n.Type == rental.NotifyPaymentReminder {
		title = "เตือนชำระค่าเช่า / Payment reminder"
	}
	text := func(s string, extra ...any) map[string]any {
		m := map[string]any{"type": "text", "text": s, "wrap": true}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	row := func(label, amount string, bold bool) map[string]any {
		weight := "regular"
		if bold {
			weight = "bold"
		}
		return map[string]any{"type": "box", "layout": "horizontal", "contents": []any{
			text(label, "size", "sm", "flex", 3, "weight", weight),
			text(amount, "size", "sm", "align", "end", "flex", 2, "weight", weight),
		}}
	}
	body := []any{
		text(title, "weight", "bold", "size", "lg"),
		text(fmt.Sprintf("%s ห้อง %s", n.Property, n.Room), "size", "sm"),
		text(fmt.Sprintf("เดือน %s / Month %s", n.Month, n.Month), "size", "sm", "color", "#666666"),
		map[string]any{"type": "separator", "margin": "md"},
	}
	for _, l := range n.Lines {
		label := l.TH
		if l.EN != "" {
			label += " / " + l.EN
		}
		body = append(body, row(label, rental.Baht(l.Amount)+" ฿", false))
	}
	body = append(body, map[string]any{"type": "separator", "margin": "md"},
		row("รวม / Total", rental.Baht(n.Total)+" บาท (THB)", true))
	if n.Paid > 0 {
		body = append(body, row("ชำระแล้ว / Paid", rental.Baht(n.Paid)+" ฿", false))
	}
	body = append(body, text(fmt.Sprintf("กำหนดชำระ %s\nDue date %s", n.DueDate, n.DueDate), "size", "sm", "color", "#aa0000", "margin", "md"))
	bubble := map[string]any{"type": "bubble", "body": map[string]any{"type": "box", "layout": "vertical", "spacing": "sm", "contents": body}}
	if n.PayURL != "" {
		bubble["footer"] = map[string]any{"type": "box", "layout": "vertical", "contents": []any{map[string]any{
			"type": "button", "style": "primary",
			"action": map[string]any{"type": "uri", "label": "จ่ายด้วยพร้อมเพย์ / PromptPay", "uri": n.PayURL},
		}}}
	}
	return bubble
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return b
}
