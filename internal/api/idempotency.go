package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

// idempotency is a write's Idempotency-Key: the key, the fingerprint of
// the request (method, path, body) it may only be used for, and once
// claimed in the request's transaction the token that stores the answer.
type idempotency struct {
	key         store.IdempotencyKey
	fingerprint string
	token       int64
}

// idempotencyOf reads the write's Idempotency-Key: nil without the
// header (the write runs unprotected), an error if it is malformed.
func idempotencyOf(c *call) (*idempotency, error) {
	r := c.r
	values, keyed := r.Header["Idempotency-Key"]
	if !keyed {
		return nil, nil
	}
	if len(values) != 1 {
		return nil, rental.BadIdempotencyKey()
	}
	if err := rental.CheckIdempotencyKey(values[0]); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(r.Method + "\n" + r.URL.Path + "\n" + string(c.body)))
	return &idempotency{
		key:         store.IdempotencyKey{ApplicationID: c.caller.key.App.ID, AccountID: c.caller.accountID(), Key: values[0]},
		fingerprint: hex.EncodeToString(sum[:]),
	}, nil
}

// claim claims the key in tx, the request's transaction. ok means the
// request runs; otherwise answer is what the client gets instead: the
// stored response of the first request with the key, or an idempotency
// error.
func (s *Server) claim(c *call, tx *store.Tx, idem *idempotency) (ok bool, answer response) {
	claim, token, stored, err := tx.ClaimIdempotency(c.ctx, idem.key, idem.fingerprint)
	if err != nil {
		return false, s.renderError(c.ctx, err)
	}
	switch claim {
	case store.Claimed:
		idem.token = token
		return true, response{}
	case store.Replay:
		resp, err := s.replay(idem.key, *stored)
		if err != nil {
			return false, s.renderError(c.ctx, err)
		}
		if resp.status >= 400 { // the log line and metrics name a replayed error's code too
			var env errorBody
			json.Unmarshal(resp.body, &env)
			info(c.ctx).code = env.Error.Code
		}
		return false, resp
	case store.InProgress:
		return false, s.renderError(c.ctx, rental.IdempotencyInProgress())
	}
	return false, s.renderError(c.ctx, errKeyReused)
}

// errKeyReused answers a request whose key was used for another.
var errKeyReused = requestErrorf(http.StatusUnprocessableEntity, "idempotency_key_reused",
	"This Idempotency-Key was used for a request with a different method, path or body.")

// keep stores the response in tx, the request's own transaction, so the
// write and its stored response commit together.
func (s *Server) keep(c *call, tx *store.Tx, idem *idempotency, resp response) error {
	return tx.CompleteIdempotency(c.ctx, idem.key, idem.token, s.stored(idem.key, resp))
}

// keepable reports whether a response is the request's answer, to keep and
// replay: 2xx to 4xx. A 5xx is the service's failure and a client abort
// answered no one; a retry runs the request again.
func keepable(status int) bool { return status < 500 && status != request.StatusClientClosed }

// running is the Idempotency-Keys of this process's requests under way,
// with their requests' fingerprints. A second request with one of them is
// answered at once, as the specification says: 409 idempotency_in_progress,
// or 422 idempotency_key_reused if it is another request; it does not wait
// at the key's row for the first to end. Across processes, the key's hold
// in the database does the same (store.BeginIdempotent), answering 409
// whichever request it is, since another process's fingerprint is not
// known until its answer is kept.
type running struct {
	mu   sync.Mutex
	keys map[store.IdempotencyKey]string
}

// start takes the key for a request, or says why it cannot.
func (r *running) start(idem *idempotency) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fp, busy := r.keys[idem.key]; busy {
		if fp != idem.fingerprint {
			return errKeyReused
		}
		return rental.IdempotencyInProgress()
	}
	if r.keys == nil {
		r.keys = map[store.IdempotencyKey]string{}
	}
	r.keys[idem.key] = idem.fingerprint
	return nil
}

// end gives the key back.
func (r *running) end(idem *idempotency) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.keys, idem.key)
}

// stored turns a response into its stored form: status, body, and the
// headers that describe the body. The body is sealed under the server
// secret, bound to the key it answers: some responses carry a secret shown
// once (a webhook signing secret), and the table keeping them for 24 hours
// must not hold it in clear.
func (s *Server) stored(k store.IdempotencyKey, resp response) store.StoredResponse {
	h, _ := json.Marshal(map[string]string{"Content-Type": resp.contentType(), "Retry-After": resp.header.Get("Retry-After")})
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
