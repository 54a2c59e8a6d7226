package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"

	"rentapi/internal/rental"
)

// handleLineWebhook takes the events of the service's LINE Official
// Account: tenants following it, sending their registration codes, and
// unfollowing. The signature is checked before anything else: a request
// without a valid X-Line-Signature is 401 whatever its body, size or media
// type (readLineBody). What the events do, and the replies, are the chat
// package's (chat.Inbox).
func (s *Server) handleLineWebhook() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := s.readLineBody(w, r)
		if err == nil {
			err = s.lineInbox.Take(r.Context(), body)
		}
		if err != nil {
			s.log.WarnContext(r.Context(), "LINE webhook refused", "request_id", requestID(r.Context()), "error", err.Error())
			s.writeError(w, r, err)
			return
		}
		renderJSON(http.StatusOK, map[string]any{}).write(r.Context(), w)
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
	unsigned := rental.BadLineSignature()
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

// lineRegister registers a sandbox tenant with the chat channel as if the
// tenant had sent the code, through the store operation the webhook uses
// (test mode never calls LINE, so no LINE user is linked). The tenant is
// looked up first: an ID of no tenant of the caller's account is 404 for
// every key, so a live key learns nothing of other accounts' IDs here.
func (s *Server) lineRegister(c *call) (int, any, error) {
	if _, err := c.tx.GetTenant(c.ctx, c.acct(), c.r.PathValue("tenant_id")); err != nil {
		return 0, nil, err
	}
	if err := rental.CheckTestHelper(c.caller.mode); err != nil {
		return 0, nil, err
	}
	t, err := c.tx.RegisterLine(c.ctx, c.acct(), c.r.PathValue("tenant_id"), "")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{s.shown(t)}, nil
}
