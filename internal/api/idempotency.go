package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// heldKey is an Idempotency-Key this request claimed: its response is
// stored in the request's own transaction, or the key is given back so a
// retry runs the request again.
type heldKey struct {
	s     *Server
	ctx   context.Context
	key   store.IdempotencyKey
	token int64
	done  bool
}

// claimKey claims the write's Idempotency-Key. Without the header it
// returns nothing: the write runs unprotected. Otherwise either the key is
// held for this request, or answer is what the client gets instead: the
// stored response of the first request, or an idempotency error.
func (s *Server) claimKey(c *call) (held *heldKey, answer *response, err error) {
	r := c.r
	values, keyed := r.Header["Idempotency-Key"]
	if !keyed {
		return nil, nil, nil
	}
	if len(values) != 1 || !validIdempotencyKey(values[0]) {
		return nil, nil, rental.Errorf(rental.KindInvalid, "invalid_idempotency_key", "Idempotency-Key must be 1 to 255 printable ASCII characters.")
	}
	k := store.IdempotencyKey{ApplicationID: c.caller.key.App.ID, AccountID: c.caller.accountID(), Key: values[0]}
	sum := sha256.Sum256([]byte(r.Method + "\n" + r.URL.Path + "\n" + string(c.body)))
	claim, token, stored, err := s.db.ClaimIdempotency(c.ctx, k, hex.EncodeToString(sum[:]))
	if err != nil {
		return nil, nil, err
	}
	switch claim {
	case store.Replay:
		resp, err := s.replay(k, *stored)
		if err != nil {
			return nil, nil, err
		}
		if resp.status >= 400 { // the log line and metrics name a replayed error's code too
			var env errorBody
			json.Unmarshal(resp.body, &env)
			info(c.ctx).code = env.Error.Code
		}
		return nil, &resp, nil
	case store.InProgress:
		return nil, nil, rental.Errorf(rental.KindConflict, "idempotency_in_progress",
			"A request with this Idempotency-Key is still running; retry after a second.")
	case store.Mismatch:
		return nil, nil, requestErrorf(http.StatusUnprocessableEntity, "idempotency_key_reused",
			"This Idempotency-Key was used for a request with a different method, path or body.")
	}
	return &heldKey{s: s, ctx: c.ctx, key: k, token: token}, nil, nil
}

// keep stores the response in tx, the request's own transaction, so the
// write and its stored response commit together.
func (k *heldKey) keep(tx *store.Tx, resp response) error {
	return tx.CompleteIdempotency(k.ctx, k.key, k.token, k.s.stored(k.key, resp))
}

// finish ends the claim once the response is known: a 5xx (or a request
// the client gave up on) is not kept, so the key is given back for a retry.
func (k *heldKey) finish(status int) {
	if k == nil {
		return
	}
	k.done = true
	if !keepable(status) {
		k.release()
	}
}

// keepable reports whether a response is the request's answer, to keep and
// replay: 2xx to 4xx. A 5xx is the service's failure and a client abort
// answered no one; a retry runs the request again.
func keepable(status int) bool { return status < 500 && status != StatusClientClosed }

// abandon gives the key back if the request never finished (a panic).
func (k *heldKey) abandon() {
	if !k.done {
		k.release()
	}
}

func (k *heldKey) release() {
	ctx := context.WithoutCancel(k.ctx)
	if err := k.s.db.ReleaseIdempotency(ctx, k.key, k.token); err != nil {
		k.s.log.ErrorContext(ctx, "idempotency release", "request_id", requestID(ctx), "error", err.Error())
	}
}

// stored turns a response into its stored form: status, body, and the
// headers that describe the body. The body is sealed under the server
// secret, bound to the key it answers: some responses carry a secret shown
// once (a webhook signing secret), and the table keeping them for 24 hours
// must not hold it in clear.
func (s *Server) stored(k store.IdempotencyKey, resp response) store.StoredResponse {
	h, _ := json.Marshal(map[string]string{"Content-Type": resp.header.Get("Content-Type"), "Retry-After": resp.header.Get("Retry-After")})
	body := []byte(sealedBody + s.secret.Seal(resp.body, storedContext(k)))
	return store.StoredResponse{Status: resp.status, Header: string(h), Body: body}
}

// sealedBody marks a stored body as sealed; bodies stored before sealing
// (JSON or empty, kept at most 24 hours) are replayed as they are.
const sealedBody = "sealed.v1."

// storedContext binds a sealed body to the one key it answers, so a stored
// row cannot be replayed under another key.
func storedContext(k store.IdempotencyKey) []byte {
	return []byte("idempotent response\x00" + k.ApplicationID + "\x00" + k.AccountID + "\x00" + k.Key)
}

// replay rebuilds a stored response, marked as a replay.
func (s *Server) replay(k store.IdempotencyKey, sr store.StoredResponse) (response, error) {
	body := sr.Body
	if sealed, ok := bytes.CutPrefix(body, []byte(sealedBody)); ok {
		var err error
		if body, err = s.secret.Open(string(sealed), storedContext(k)); err != nil {
			return response{}, fmt.Errorf("api: stored response of an idempotency key does not open: %w", err)
		}
	}
	var hm map[string]string
	json.Unmarshal([]byte(sr.Header), &hm)
	h := http.Header{}
	for k, v := range hm {
		if v != "" {
			h.Set(k, v)
		}
	}
	h.Set("Idempotent-Replayed", "true")
	return response{status: sr.Status, header: h, body: body}, nil
}

// validIdempotencyKey reports whether k is 1 to 255 printable ASCII
// characters, as the specification allows.
func validIdempotencyKey(k string) bool {
	return len(k) > 0 && len(k) <= 255 && printableASCII(k)
}
