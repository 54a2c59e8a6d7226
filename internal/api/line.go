package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// handleLineWebhook takes the events of the service's LINE Official
// Account: tenants following it, sending their registration codes, and
// unfollowing. The signature is checked before anything else: a request
// without a valid X-Line-Signature is 401 whatever its body, size or media
// type (readLineBody). Each event is handled once, however often LINE
// delivers it.
func (s *Server) handleLineWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := s.readLineBody(w, r)
		var cb webhook.CallbackRequest
		if err == nil && json.Unmarshal(body, &cb) != nil {
			err = rental.Errorf(rental.KindInvalid, "invalid_json", "The body is not a LINE webhook request.")
		}
		for _, ev := range cb.Events {
			if err != nil {
				break
			}
			err = s.lineEvent(r.Context(), ev)
		}
		if err != nil {
			s.log.WarnContext(r.Context(), "LINE webhook refused", "request_id", requestID(r.Context()), "error", err.Error())
			s.writeError(w, r, err)
			return
		}
		renderJSON(http.StatusOK, map[string]any{}).write(w)
	})
}

// maxSignedBody is the most of a LINE request read to check its signature:
// a larger body cannot be verified, and is refused as unsigned.
const maxSignedBody = 4 * maxBody

// readLineBody reads a LINE webhook request's body and checks, in this
// order: the signature (401 invalid_signature for a request without one,
// with one that is not an HMAC-SHA256 at all, with one that does not match
// the whole body, or one too large or too slow to verify), then the size
// (413 over maxBody), the media type (415) and UTF-8 (400), as every other
// body. Nothing of an unsigned request is judged but its signature, so a
// stranger learns nothing about what the webhook would accept.
func (s *Server) readLineBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	unsigned := rental.Errorf(rental.KindUnauthenticated, "invalid_signature",
		"X-Line-Signature is not the base64 HMAC-SHA256 of the raw body with the channel secret.")
	sig, err := base64.StdEncoding.DecodeString(r.Header.Get("X-Line-Signature"))
	if s.lineSecret == "" || err != nil || len(sig) != sha256.Size || r.ContentLength > maxSignedBody {
		return nil, unsigned
	}
	mac := hmac.New(sha256.New, []byte(s.lineSecret))
	kept := &prefixWriter{max: maxBody}
	if err := s.readWithin(w, r, io.MultiWriter(mac, kept), maxSignedBody); err != nil {
		return nil, unsigned
	}
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return nil, unsigned
	}
	if kept.over {
		return nil, errTooLarge()
	}
	return kept.b, checkBody(r, kept.b)
}

// prefixWriter keeps the first max bytes written to it, and notes whether
// more came.
type prefixWriter struct {
	b    []byte
	max  int
	over bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	room := p.max - len(p.b)
	if len(b) > room {
		p.over = true
		p.b = append(p.b, b[:max(room, 0)]...)
		return len(b), nil
	}
	p.b = append(p.b, b...)
	return len(b), nil
}

// lineEvent handles one LINE event and replies when it asks for an answer.
// Events the service has no use for are acknowledged and dropped.
func (s *Server) lineEvent(ctx context.Context, ev webhook.EventInterface) error {
	var id, user, replyToken, reply string
	var handle func(tx *store.Tx) error
	switch e := ev.(type) {
	case webhook.FollowEvent:
		id, user, replyToken, reply = e.WebhookEventId, lineUser(e.Source), e.ReplyToken, rental.ReplyHowTo
	case webhook.MessageEvent:
		id, user, replyToken, reply = e.WebhookEventId, lineUser(e.Source), e.ReplyToken, rental.ReplyHowTo
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
				reply = rental.ReplyTryLater
				return nil
			}
			_, err = tx.RegisterLineCode(ctx, code, user)
			reply = rental.ReplyRegistered
			if rental.IsNotFound(err) {
				reply = rental.ReplyUnknownCode
				return tx.SetLineCodeTries(ctx, user, tries.AfterWrong(tx.Now))
			}
			return err
		}
	case webhook.UnfollowEvent:
		if user = lineUser(e.Source); user != "" {
			return s.unfollow(ctx, e.WebhookEventId, user)
		}
		return nil
	default:
		return nil
	}
	seen := false
	err := s.db.InTx(ctx, func(tx *store.Tx) (err error) {
		if seen, err = tx.MarkLineEvent(ctx, id); err != nil || seen || handle == nil {
			return err
		}
		return handle(tx)
	})
	if err != nil || seen {
		return err
	}
	s.log.InfoContext(ctx, "LINE event", "request_id", requestID(ctx), "event_id", id, "reply", reply == rental.ReplyRegistered)
	if s.line != nil && replyToken != "" {
		if err := s.line.Reply(replyToken, reply); err != nil {
			s.log.WarnContext(ctx, "LINE reply failed", "request_id", requestID(ctx), "event_id", id, "error", err.Error())
		}
	}
	return nil
}

// unfollow ends every registration of a LINE user, one tenant a
// transaction (each its own landlord's events), then marks the event done.
// Ending a registration twice changes nothing, so a redelivery that comes
// while the first delivery works does no harm.
func (s *Server) unfollow(ctx context.Context, id, user string) error {
	for {
		var t *rental.Tenant
		err := s.db.InTx(ctx, func(tx *store.Tx) (err error) {
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
	return s.db.InTx(ctx, func(tx *store.Tx) error {
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

// lineRegister registers a sandbox tenant with the chat channel as if the
// tenant had sent the code, through the store operation the webhook uses
// (test mode never calls LINE, so no LINE user is linked). The tenant is
// looked up first: an ID of no tenant of the caller's account is 404 for
// every key, so a live key learns nothing of other accounts' IDs here.
func (s *Server) lineRegister(c *call) (int, any, error) {
	if _, err := c.tx.GetTenant(c.ctx, c.acct(), c.r.PathValue("tenant_id")); err != nil {
		return 0, nil, err
	}
	if err := testModeOnly(c); err != nil {
		return 0, nil, err
	}
	t, err := c.tx.RegisterLine(c.ctx, c.acct(), c.r.PathValue("tenant_id"), "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{t}, nil
}
