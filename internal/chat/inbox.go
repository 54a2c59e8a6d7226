package chat

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"

	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

// Inbox takes the events of the service's LINE Official Account, which
// LINE posts to the service's webhook: tenants following it, sending their
// registration codes and the pictures of their transfer slips, and
// unfollowing. Each event is handled once, however
// often LINE delivers it, and answered with a reply when it asks for one.
// The API serves the webhook and checks its signature; what the events
// mean is here, beside the pushes.
type Inbox struct {
	DB *store.DB
	// Client replies and fetches the pictures tenants send; without one
	// nothing is replied or fetched (the events are still taken).
	Client *Client
	Log    *slog.Logger
	// SlipsLive tells that a slip-verification provider is configured: a
	// live tenant's slip is filed only then (rental.CheckSlipsAvailable).
	SlipsLive bool
}

// Take handles every event of a signed webhook body, in order; a body that
// is not a webhook request is invalid_json.
func (in *Inbox) Take(ctx context.Context, body []byte) error {
	var cb webhook.CallbackRequest
	if json.Unmarshal(body, &cb) != nil {
		return rental.Errorf(rental.KindInvalid, "invalid_json", "The body is not a LINE webhook request.")
	}
	for _, ev := range cb.Events {
		if err := in.event(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

func (in *Inbox) log() *slog.Logger {
	if in.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return in.Log
}

// event handles one LINE event and replies when it asks for an answer.
// Events the service has no use for are acknowledged and dropped.
func (in *Inbox) event(ctx context.Context, ev webhook.EventInterface) error {
	var id, user, replyToken, reply string
	var handle func(tx *store.Tx) error
	switch e := ev.(type) {
	case webhook.FollowEvent:
		id, user, replyToken, reply = e.WebhookEventId, lineUser(e.Source), e.ReplyToken, ReplyHowTo
	case webhook.MessageEvent:
		id, user, replyToken, reply = e.WebhookEventId, lineUser(e.Source), e.ReplyToken, ReplyHowTo
		if img, ok := e.Message.(webhook.ImageMessageContent); ok && user != "" {
			return in.slip(ctx, id, user, replyToken, img)
		}
		text, ok := e.Message.(webhook.TextMessageContent)
		if !ok || user == "" {
			break
		}
		code, ok := rental.NormalizeCode(text.Text)
		if !ok {
			break
		}
		// A user who sent too many wrong codes this hour is answered
		// ReplyTryLater for every code, the right one too, and nothing
		// else happens; the count is in the database, so every process
		// keeps it.
		handle = func(tx *store.Tx) error {
			tries, err := tx.LineCodeTries(ctx, user)
			if err != nil {
				return err
			}
			if tries.Blocked(tx.Now) {
				reply = ReplyTryLater
				return nil
			}
			_, err = tx.RegisterLineCode(ctx, code, user)
			reply = ReplyRegistered
			if rental.IsNotFound(err) {
				reply = ReplyUnknownCode
				return tx.SetLineCodeTries(ctx, user, tries.AfterWrong(tx.Now))
			}
			return err
		}
	case webhook.UnfollowEvent:
		if user = lineUser(e.Source); user != "" {
			return in.unfollow(ctx, e.WebhookEventId, user)
		}
		return nil
	default:
		return nil
	}
	seen := false
	err := in.DB.InTx(ctx, func(tx *store.Tx) (err error) {
		if seen, err = tx.MarkLineEvent(ctx, id); err != nil || seen || handle == nil {
			return err
		}
		return handle(tx)
	})
	if err != nil || seen {
		return err
	}
	in.log().InfoContext(ctx, "LINE event", "request_id", request.ID(ctx), "event_id", id, "reply", reply == ReplyRegistered)
	if in.Client != nil && replyToken != "" {
		if err := in.Client.Reply(replyToken, reply); err != nil {
			in.log().WarnContext(ctx, "LINE reply failed", "request_id", request.ID(ctx), "event_id", id, "error", err.Error())
		}
	}
	return nil
}

// unfollow ends every registration of a LINE user, one tenant a
// transaction (each its own landlord's events), then marks the event done.
// Ending a registration twice changes nothing, so a redelivery that comes
// while the first delivery works does no harm.
func (in *Inbox) unfollow(ctx context.Context, id, user string) error {
	for {
		var t *rental.Tenant
		err := in.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			t, err = tx.UnfollowLine(ctx, user)
			return err
		})
		if err != nil {
			return err
		}
		if t == nil {
			break
		}
	}
	return in.DB.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.MarkLineEvent(ctx, id)
		return err
	})
}

// lineUser is the LINE user an event came from; events from groups and
// rooms name no one to register.
func lineUser(src webhook.SourceInterface) string {
	if u, ok := src.(webhook.UserSource); ok {
		return u.UserId
	}
	return ""
}

// slip takes a picture a LINE user sent as a transfer slip: a registered
// tenant's is fetched from LINE's content API and filed against the
// tenant's oldest unpaid bill (source line), once however often LINE
// delivers the event, and verified by the slip's job as every slip is,
// never here; the result is pushed when it is known (store.SettleSlip).
// Anyone else, or a tenant with nothing to pay, gets a polite reply and
// nothing is filed. The picture is never logged.
func (in *Inbox) slip(ctx context.Context, id, user, replyToken string, img webhook.ImageMessageContent) error {
	reply, file := in.slipReply(ctx, user, img)
	seen := false
	err := in.DB.InTx(ctx, func(tx *store.Tx) (err error) {
		if seen, err = tx.MarkLineEvent(ctx, id); err != nil || seen || file == nil {
			return err
		}
		return file(tx)
	})
	if err != nil || seen {
		return err
	}
	in.log().InfoContext(ctx, "LINE slip", "request_id", request.ID(ctx), "event_id", id, "filed", file != nil)
	if in.Client != nil && replyToken != "" {
		if err := in.Client.Reply(replyToken, reply); err != nil {
			in.log().WarnContext(ctx, "LINE reply failed", "request_id", request.ID(ctx), "event_id", id, "error", err.Error())
		}
	}
	return nil
}

// slipReply decides what a picture from user comes to: the reply, and the
// filing of the slip (nil when nothing is filed).
func (in *Inbox) slipReply(ctx context.Context, user string, img webhook.ImageMessageContent) (string, func(*store.Tx) error) {
	acct, billID, tenant, err := in.DB.Read().LineSlipBill(ctx, user)
	switch {
	case err != nil:
		in.log().WarnContext(ctx, "LINE slip: the tenant's bill", "request_id", request.ID(ctx), "error", err.Error())
		return ReplySlipFailed, nil
	case !tenant:
		return ReplyNotTenant, nil
	case billID == "":
		return ReplyNothingDue, nil
	case rental.CheckSlipsAvailable(acct.Sandbox, in.SlipsLive) != nil:
		return ReplySlipsUnavailable, nil
	case in.Client == nil || (img.ContentProvider != nil && img.ContentProvider.Type != webhook.ContentProviderTYPE_LINE):
		return ReplySlipFailed, nil
	}
	b, err := in.Client.Content(img.Id, rental.MaxPageSlipImage)
	if err != nil && !errors.Is(err, errTooLarge) {
		in.log().WarnContext(ctx, "LINE slip: the picture", "request_id", request.ID(ctx), "error", err.Error())
		return ReplySlipFailed, nil
	}
	typ, err := rental.SniffSlipImage("image", b, rental.MaxPageSlipImage)
	if err != nil {
		return ReplySlipNotImage, nil
	}
	return ReplySlipReceived, func(tx *store.Tx) error {
		_, err := tx.FileSlip(ctx, acct, store.SlipInput{BillID: billID, Source: rental.SlipFromLINE, Image: b, ImageType: typ})
		return err
	}
}
