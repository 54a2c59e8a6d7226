package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// maxBody is the largest request body accepted (1 MB).
const maxBody = 1 << 20

// call is one authenticated API request as a handler sees it.
type call struct {
	r      *http.Request
	ctx    context.Context
	caller *caller
	// q reads: on the read pool for GET, inside the transaction for writes.
	q *store.Queries
	// tx is the write transaction; nil for reads.
	tx   *store.Tx
	body []byte
	// appLevel marks an operation on the application's own resources.
	appLevel bool
}

// acct is the account the request acts on.
func (c *call) acct() *rental.Account { return c.caller.account }

// handlerFunc is an operation: it returns the status and body of success, or
// an error for the adapter to render.
type handlerFunc func(c *call) (int, any, error)

// endpoint wraps an operation in everything an API request goes through, in
// this order: authentication and account selection, rate limit and quota,
// reading a write's body (bounded in size and time), a place in the
// overload gate (within the developer's fair share), scope, query
// parameters, then for reads the handler, and for writes the body checks,
// the idempotency key, and the handler inside one transaction that also
// stores the idempotent response.
func (s *Server) endpoint(scope rental.Scope, query []string, h handlerFunc) http.Handler {
	return s.adapt(scope, query, h, false)
}

// appEndpoint is endpoint for the application's own resources (its webhook
// endpoints), not a landlord's: an unbound live key needs no account, the
// scope is what the key and the application allow (no landlord grants it),
// and writes hold no landlord's lock.
func (s *Server) appEndpoint(scope rental.Scope, query []string, h handlerFunc) http.Handler {
	return s.adapt(scope, query, h, true)
}

func (s *Server) adapt(scope rental.Scope, query []string, h handlerFunc, appLevel bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cl, err := s.authenticate(w, r, appLevel)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		now := s.now()
		if err := s.limits.allow(r.Context(), w.Header(), cl, now); err != nil {
			s.writeError(w, r, err)
			return
		}
		counter, err := s.quota(r.Context(), w.Header(), cl, now)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		// A write's body is read before the request takes a place in the
		// gate: a client trickling its body holds only its own connection
		// (and only once its key is known and within its rate). Its errors
		// are answered in their usual place, after the checks below.
		var body []byte
		var bodyErr error
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			body, bodyErr = s.readBody(w, r)
			if e, ok := rental.AsError(bodyErr); ok && e.Kind == rental.KindTimeout {
				s.writeError(w, r, e) // the connection is done for: answer now
				return
			}
		}
		release, err := s.gate.enter(r.Context(), cl.key.Developer.ID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		defer release()
		// Counted as the status is written, before the client can send its next request.
		w = &statusWriter{ResponseWriter: w, onStatus: func(status int) {
			if billable(status) && cl.account != nil {
				s.meter.add(counter, now)
			}
		}}
		if scope != "" && !cl.scopes.Has(scope) {
			s.writeError(w, r, &rental.Error{Kind: rental.KindForbidden, Code: "insufficient_scope", Scope: string(scope),
				Message: "This request needs the scope '" + string(scope) + "', which the key, the application or the landlord's grant does not include."})
			return
		}
		if err := checkQuery(r, query); err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := checkPathIDs(r); err != nil {
			s.writeError(w, r, err)
			return
		}
		c := &call{r: r, ctx: r.Context(), caller: cl, appLevel: appLevel}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			c.q = s.db.Read()
			s.run(c, h).write(w)
			return
		}
		if bodyErr != nil {
			s.writeError(w, r, bodyErr)
			return
		}
		c.body = body
		s.serveWrite(w, c, h)
	})
}

// run calls the handler and renders its result.
func (s *Server) run(c *call, h handlerFunc) response {
	status, body, err := h(c)
	if err != nil {
		return renderError(c.ctx, s.log, err)
	}
	return renderJSON(status, body)
}

// serveWrite runs a write: all-or-nothing in one transaction, and with an
// Idempotency-Key, exactly once with the response stored in that same
// transaction.
func (s *Server) serveWrite(w http.ResponseWriter, c *call, h handlerFunc) {
	r, body := c.r, c.body
	key, keyed := r.Header["Idempotency-Key"]
	var ik store.IdempotencyKey
	var token int64
	done := true // false while a claimed key awaits its response
	if keyed {
		if len(key) != 1 || !validIdempotencyKey(key[0]) {
			s.writeError(w, r, rental.Errorf(rental.KindInvalid, "invalid_idempotency_key",
				"Idempotency-Key must be 1 to 255 printable ASCII characters."))
			return
		}
		ik = store.IdempotencyKey{ApplicationID: c.caller.key.App.ID, AccountID: c.caller.accountID(), Key: key[0]}
		sum := sha256.Sum256([]byte(r.Method + "\n" + r.URL.Path + "\n" + string(body)))
		claim, tok, stored, err := s.db.ClaimIdempotency(c.ctx, ik, hex.EncodeToString(sum[:]))
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		switch claim {
		case store.Replay:
			resp, err := s.replay(ik, *stored)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			if resp.status >= 400 { // the log line and metrics name a replayed error's code too
				var env errorBody
				json.Unmarshal(resp.body, &env)
				info(r.Context()).code = env.Error.Code
			}
			resp.write(w)
			return
		case store.InProgress:
			s.writeError(w, r, rental.Errorf(rental.KindConflict, "idempotency_in_progress",
				"A request with this Idempotency-Key is still running; retry after a second."))
			return
		case store.Mismatch:
			s.writeError(w, r, rental.Errorf(rental.KindUnprocessable, "idempotency_key_reused",
				"This Idempotency-Key was used for a request with a different method, path or body."))
			return
		}
		token = tok
		w.Header().Set("Idempotent-Replayed", "false")
		done = false
		defer func() {
			if !done { // a panic: give the key back so a retry can run now
				s.db.ReleaseIdempotency(context.WithoutCancel(c.ctx), ik, token)
			}
		}()
	}
	var keep func(*store.Tx, response) error
	if keyed {
		keep = func(tx *store.Tx, resp response) error {
			return tx.CompleteIdempotency(c.ctx, ik, token, s.stored(ik, resp))
		}
	}
	resp := s.transact(c, h, keep)
	done = true
	if keyed && resp.status >= 500 {
		if err := s.db.ReleaseIdempotency(context.WithoutCancel(c.ctx), ik, token); err != nil {
			s.log.ErrorContext(c.ctx, "idempotency release", "request_id", requestID(c.ctx), "error", err.Error())
		}
	}
	resp.write(w)
}

// transact runs the handler in a transaction. On success, keep (which stores
// the idempotent response; nil without a key) runs in the same transaction
// before the commit. A 4xx rolls the work back but is still kept; a 5xx
// keeps nothing.
func (s *Server) transact(c *call, h handlerFunc, keep func(*store.Tx, response) error) response {
	tx, err := s.db.Begin(c.ctx)
	if err != nil {
		return renderError(c.ctx, s.log, err)
	}
	defer tx.Rollback()
	if !c.appLevel {
		if err := tx.Claim(c.ctx, c.acct()); err != nil {
			return renderError(c.ctx, s.log, err)
		}
	}
	c.tx, c.q = tx, &tx.Queries
	resp := s.run(c, h)
	if resp.status >= 500 {
		return resp
	}
	switch {
	case resp.status >= 400 && keep != nil:
		tx.Rollback()
		err = s.db.InTx(c.ctx, func(tx *store.Tx) error { return keep(tx, resp) })
	case resp.status >= 400:
	case keep != nil:
		if err = keep(tx, resp); err == nil {
			err = tx.Commit()
		}
	default:
		err = tx.Commit()
	}
	if err != nil {
		return renderError(c.ctx, s.log, err)
	}
	return resp
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

func validIdempotencyKey(k string) bool {
	return len(k) > 0 && len(k) <= 255 && printableASCII(k)
}

// readBody reads a write's body: at most maxBody bytes (413 beyond, checked
// while reading) within the body timeout (408 beyond: plenty for a JSON body
// of up to 1 MB, short enough that a trickled body ties up nothing for
// long), and JSON when not empty (415 otherwise).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	tooLarge := rental.Errorf(rental.KindTooLarge, "request_too_large", "The request body is over the limit of 1 MB.")
	if r.ContentLength > maxBody {
		return nil, tooLarge
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(s.bodyWait)) == nil
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The deadline stays passed, so the server does not wait for the
		// rest of the body either: the connection closes after the answer.
		w.Header().Set("Connection", "close")
		return nil, rental.Errorf(rental.KindTimeout, "request_timeout", "The request body did not arrive within %s.", s.bodyWait)
	}
	if deadline {
		rc.SetReadDeadline(time.Time{})
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge
	}
	if err != nil {
		return nil, rental.Errorf(rental.KindInvalid, "invalid_json", "The request body could not be read.")
	}
	if len(b) == 0 {
		return nil, nil
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return nil, rental.Errorf(rental.KindUnsupportedMedia, "unsupported_media_type", "Request bodies must be sent as Content-Type: application/json.")
	}
	if !utf8.Valid(b) {
		return nil, rental.Errorf(rental.KindInvalid, "invalid_json", "The request body is not valid UTF-8.")
	}
	return b, nil
}

// checkQuery refuses query parameters the operation does not accept, and
// any parameter given twice.
func checkQuery(r *http.Request, allowed []string) error {
	q := r.URL.Query()
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if !slices.Contains(allowed, name) {
			return &rental.Error{Kind: rental.KindInvalid, Code: "unknown_parameter", Param: name,
				Message: "Unknown query parameter '" + name + "'. Accepted: " + strings.Join(allowed, ", ") + "."}
		}
		if len(q[name]) > 1 {
			return rental.Invalid(name, "Query parameter '%s' was given more than once.", name)
		}
		if v := q.Get(name); !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
			return rental.Invalid(name, "Query parameter '%s' must be text without control characters.", name)
		}
	}
	return nil
}

// checkPathIDs answers 404 for a path ID that cannot be one of ours (IDs are
// [a-z0-9_], at most 64 characters), before it reaches a query.
func checkPathIDs(r *http.Request) error {
	for _, m := range pathWildcard.FindAllStringSubmatch(r.Pattern, -1) {
		if id := r.PathValue(m[1]); !validID(id) {
			return rental.Errorf(rental.KindNotFound, "resource_not_found", "No such object: '%s'.", strings.ToValidUTF8(id, "?"))
		}
	}
	return nil
}

var pathWildcard = regexp.MustCompile(`\{([a-z_]+)\}`)

// validID reports whether s has the shape of an ID of ours.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
