package api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

// maxBody is the largest request body accepted (1 MB).
const maxBody = 1 << 20

// call is one authenticated API request as a handler sees it.
type call struct {
	r *http.Request
	// params are the request's query parameters, checked (see checkQuery).
	params url.Values
	ctx    context.Context
	caller *caller
	// q reads: on the read pool for GET, inside the transaction for writes.
	q *store.Queries
	// tx is the write transaction; nil for reads.
	tx   *store.Tx
	body []byte
	// check confirms the key's kept lookup (see store.KeyRun); nil
	// when the request runs on a lookup made for it.
	check *store.KeyCheck
	// key is the run's key lookup; nil for a request with no key.
	key *store.KeyRun
	// appLevel marks an operation on the application's own resources.
	appLevel bool
	// then, if a write's handler set it, runs once its transaction
	// committed with a success, before the answer is sent: work of the
	// write's own that takes transactions of its own (a sandbox's clock
	// catching up). Its error is the answer.
	then func(context.Context) error
}

// acct is the account the request acts on.
func (c *call) acct() *rental.Account { return c.caller.account }

// handlerFunc is an operation: it returns the status and body of success, or
// an error for the adapter to render.
type handlerFunc func(c *call) (int, any, error)

// operation is what an endpoint runs and the rules it runs under: the
// scope it needs, the query parameters it takes, its handler (or, for a
// write prepared outside its transaction, prepare), and whether it acts
// on the application's own resources (see appEndpoint).
type operation struct {
	scope    rental.Scope
	query    []string
	h        handlerFunc
	prepare  prepareFunc
	appLevel bool
	// fresh marks a read whose answer can change with no write of the
	// landlord's data (see read): tagged by its bytes, not by the data
	// version. Every read of an application's own resources is fresh.
	fresh bool
}

// endpoint wraps an operation in everything an API request goes through, in
// this order: authentication and account selection, rate limit and quota,
// reading a write's body (bounded in size and time), a place in the
// overload gate (within the developer's fair share), scope, query
// parameters, then for reads the handler, and for writes the body checks,
// the idempotency key, and the handler inside one transaction that also
// stores the idempotent response.
func (s *Server) endpoint(scope rental.Scope, query []string, h handlerFunc) http.Handler {
	return s.adapt(operation{scope: scope, query: query, h: h})
}

// appEndpoint is endpoint for the application's own resources (its webhook
// endpoints), not a landlord's: an unbound live key needs no account, the
// scope is what the key and the application allow (no landlord grants it),
// and writes hold no landlord's lock.
func (s *Server) appEndpoint(scope rental.Scope, query []string, h handlerFunc) http.Handler {
	return s.adapt(operation{scope: scope, query: query, h: h, appLevel: true, fresh: true})
}

// versioned reports whether r, a request for op, is a read tagged by its
// landlord's data version (see Server.read).
func (op *operation) versioned(r *http.Request) bool { return r.Method == http.MethodGet && !op.fresh }

// freshEndpoint is endpoint for a read whose answer changes without a
// write of the landlord's data (see operation.fresh).
func (s *Server) freshEndpoint(scope rental.Scope, query []string, h handlerFunc) http.Handler {
	return s.adapt(operation{scope: scope, query: query, h: h, fresh: true})
}

// prepareFunc is the part of a write that needs no database: decoding
// and judging its body, and waiting on the outside world (a webhook URL's
// DNS lookup). It runs once the body is read and before the write's
// transaction begins, so that none of it holds a database connection or
// SQLite's one writer's turn, which every other write waits through, and
// returns the operation to run in the transaction. It sees the call
// without c.tx or c.q. It runs also for a request whose Idempotency-Key
// then answers a stored response.
type prepareFunc func(c *call) handlerFunc

// decoded is the prepareFunc of a write whose body decode turns into its
// input, run with it in the transaction. A refusal of the body is the
// transaction's answer, so it is kept under an Idempotency-Key like any
// other 4xx.
func decoded[T any](decode func(c *call) (T, error), run func(c *call, in T) (int, any, error)) prepareFunc {
	return func(c *call) handlerFunc {
		in, err := decode(c)
		return func(c *call) (int, any, error) {
			if err != nil {
				return 0, nil, err
			}
			return run(c, in)
		}
	}
}

// prepared is endpoint for a write prepared outside its transaction (see
// prepareFunc).
func (s *Server) prepared(scope rental.Scope, prepare prepareFunc) http.Handler {
	return s.adapt(operation{scope: scope, prepare: prepare})
}

// appWrite is appEndpoint for a write that is prepared outside its
// transaction (see prepareFunc).
func (s *Server) appWrite(scope rental.Scope, prepare prepareFunc) http.Handler {
	return s.adapt(operation{scope: scope, prepare: prepare, appLevel: true})
}

// adapt serves op on the request's key as the store finds it (see
// store.DB.ServeKey): a request whose key's kept lookup turned out not to
// hold runs again as its first run began, with nothing of that run's
// headers or log fields, on a lookup made now.
func (s *Server) adapt(op operation) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var once onceRun // what the first run did that the next must not do again
		fingerprint, hint, err := s.keyRef(r)
		if err != nil {
			s.serve(w, r, &op, &once, nil) // no key to look up: identify refuses it
			return
		}
		var before headerSnapshot
		before.take(w.Header())
		runs := 0
		write := r.Method != http.MethodGet && r.Method != http.MethodHead
		s.db.ServeKey(fingerprint, hint, s.now(), write, func(key *store.KeyRun) bool {
			if runs++; runs > 1 {
				before.restore(w.Header())
				inf := info(r.Context())
				inf.applicationID, inf.accountID, inf.mode, inf.code, inf.keyLast4 = "", "", "", "", ""
				inf.late = nil
			}
			if once.body.read && request.StatusOf(once.body.err) == http.StatusRequestTimeout {
				// The body came too late, and net/http has cancelled the
				// request's context (the failed read ends it): the answer
				// still owed (the 408, or what the lookup made now says
				// of the key) must not stop at it.
				ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), lateAnswerWait)
				defer cancel()
				r = r.WithContext(ctx)
			}
			return s.serve(w, r, &op, &once, key)
		})
	})
}

// headerSnapshot is a writer's headers as they were before a request's
// first run, for a run after it to start from (see adapt): a copy of the
// map for every request, in case, was a twentieth of what a read
// allocated, and there is one header then (X-Request-ID). A header the run
// sets gets a list of its own (Header.Set), so the lists kept here stay as
// they were.
type headerSnapshot struct {
	n      int
	names  [2]string
	values [2][]string
	more   http.Header // all of them, when there are more than fit
}

func (hs *headerSnapshot) take(h http.Header) {
	if len(h) > len(hs.names) {
		hs.more = h.Clone()
		return
	}
	for k, v := range h {
		hs.names[hs.n], hs.values[hs.n] = k, v
		hs.n++
	}
}

// restore makes h what it was when taken.
func (hs *headerSnapshot) restore(h http.Header) {
	clear(h)
	if hs.more != nil {
		maps.Copy(h, hs.more)
		return
	}
	for i := range hs.n {
		h[hs.names[i]] = hs.values[i]
	}
}

// lateAnswerWait bounds a run after the first of a request whose body came
// too late (see adapt), which no longer ends with the request's context.
const lateAnswerWait = 5 * time.Second

// onceRun is what a request's first run did that a run after it (see
// adapt) must not do again: read the body, take a token of the
// developer's per-second limit.
type onceRun struct {
	body  onceBody
	token tokenTaken
}

// onceBody is a request's body as read by its first run (see serve).
type onceBody struct {
	read bool
	body []byte
	err  error
}

// get reads the body with read the first time, and returns what that read.
func (b *onceBody) get(read func() ([]byte, error)) ([]byte, error) {
	if !b.read {
		b.body, b.err = read()
		b.read = true
	}
	return b.body, b.err
}

// serve runs an API request through everything endpoint lists, on this
// run's key lookup (nil when the request carries no key). On a kept lookup
// (see store.KeyRun) it answers only once the lookup's check confirms it;
// otherwise it writes nothing and returns false.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, op *operation, once *onceRun, key *store.KeyRun) bool {
	var owner *rental.KeyOwner // known once identified, for held
	noted := false
	held := func() bool {
		// Not the request's context: a body that came too slowly ends it
		// (net/http cancels it on the failed read), and its 408 is
		// answered once the check says the key may have it.
		if !key.Held(context.WithoutCancel(r.Context())) {
			return false
		}
		if !noted && key.Kept() && owner != nil && owner.Key.UseToNote(s.now()) {
			s.noteKeyUse(r.Context(), owner.Key.ID, s.now())
		}
		noted = true
		return true
	}
	fail := func(err error) bool {
		if !held() {
			return false
		}
		s.writeError(w, r, err)
		return true
	}
	if op.versioned(r) {
		key.WantVersion() // for the answer's tag (see Server.read)
	}
	owner, cl, counter, err := s.authenticate(w, r, op, key, &once.token)
	if err != nil {
		return fail(err)
	}
	// A write's body is read before the request takes a place in the
	// gate: a client trickling its body holds only its own connection
	// (and only once its key is known and within its rate). Its errors
	// are answered in their usual place, after the checks below.
	read := r.Method != http.MethodGet && r.Method != http.MethodHead
	var body []byte
	var bodyErr error
	if read {
		body, bodyErr = once.body.get(func() ([]byte, error) { return s.readBody(w, r) })
		if request.StatusOf(bodyErr) == http.StatusRequestTimeout {
			w.Header().Set("Connection", "close") // as readBody set it, for a second run too
			return fail(bodyErr)                  // the connection is done for: answer now
		}
	}
	release, err := s.gate.enter(r.Context(), cl.key.Developer.ID)
	if err != nil {
		return fail(err)
	}
	release = sync.OnceFunc(release)
	defer release()
	// Counted as the status is written, before the client can send its next request.
	w = &request.StatusWriter{ResponseWriter: w, OnStatus: func(status int) {
		if rental.Billable(cl.account, status) {
			s.meter.add(counter)
		}
	}}
	if err := cl.scopes.Require(op.scope); err != nil {
		return fail(err)
	}
	params, err := checkQuery(r, op.query)
	if err != nil {
		return fail(err)
	}
	if err := checkPathIDs(r); err != nil {
		return fail(err)
	}
	c := &call{r: r, params: params, ctx: r.Context(), caller: cl, appLevel: op.appLevel, check: key.Check(), key: key}
	var resp response
	if !read {
		c.q = s.db.Read()
		if c.check != nil {
			c.q = s.db.ReadChecking(c.check)
		}
		resp = s.read(c, op)
	} else if bodyErr != nil {
		return fail(bodyErr)
	} else {
		c.body = body
		h := op.h
		if op.prepare != nil {
			h = op.prepare(c)
		}
		resp = s.serveWrite(c, h)
	}
	if !held() {
		return false
	}
	if resp.stream != nil {
		release() // a stream lasts: it holds no place in the gate
		request.SetFields(w.Header(), info(r.Context()).late)
		resp.stream.serve(w)
		return true
	}
	if resp.write(r.Context(), w) == nil {
		resp.release()
	}
	return true
}

// authenticate runs the checks before a request's body is read: its key
// (identify), its developer's per-second limit, its account and scopes
// (admit), and its quota. The key's owner is returned once identified,
// with a later refusal too.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, op *operation, key *store.KeyRun, token *tokenTaken) (*rental.KeyOwner, *caller, cell, error) {
	owner, err := s.identify(w, r, key)
	if err != nil {
		return nil, nil, cell{}, err
	}
	now := s.now()
	if err := s.limits.allow(r.Context(), w.Header(), owner, now, token); err != nil {
		return owner, nil, cell{}, err
	}
	cl, err := s.admit(r, owner, op.appLevel)
	if err != nil {
		return owner, nil, cell{}, err
	}
	counter, err := s.quota(r.Context(), cl, now)
	return owner, cl, counter, err
}

// run calls the handler and renders its result. A store error that is
// not the handler's to answer (see overrides) is returned instead, and
// nothing rendered.
func (s *Server) run(c *call, h handlerFunc) (response, error) {
	status, body, err := h(c)
	if c.tx != nil && overrides(c.tx.Err()) != nil {
		// Whatever the handler made of it (a handler may make light of a
		// failed statement), the transaction did nothing that counts.
		err = c.tx.Err()
	}
	if overrides(err) != nil {
		return response{}, err
	}
	if err != nil {
		return s.renderError(c.ctx, err), nil
	}
	if st, ok := body.(*eventStream); ok {
		return response{status: status, stream: st}, nil
	}
	return renderInto(&s.bodies, status, body), nil
}

// serveWrite runs a write: all-or-nothing in one transaction, and with an
// Idempotency-Key, exactly once with the response stored in that same
// transaction.
func (s *Server) serveWrite(c *call, h handlerFunc) response {
	idem, err := idempotencyOf(c)
	if err != nil {
		return s.renderError(c.ctx, err)
	}
	if idem != nil {
		if err := s.running.start(idem); err != nil {
			return s.renderError(c.ctx, err)
		}
		defer s.running.end(idem)
	}
	return s.transact(c, h, idem)
}

// transact runs the handler in a transaction. With an Idempotency-Key the
// key is claimed first in the same transaction (a key used before answers
// its stored response instead), and the answer is stored before the
// commit. A 4xx rolls the work back but is still kept; a 5xx keeps
// nothing, not even the claim, so a retry runs the request again.
//
// The claims are first made ahead, as if nothing stood in their way
// (store's BeginAhead and ClaimIdempotencyAhead: no round trip of their
// own, and the landlord's lock held through one round trip less). When
// one did not hold (the key was taken, another process ticked the
// landlord's clock), the request runs again, claiming as usual, which
// says what to answer.
func (s *Server) transact(c *call, h handlerFunc, idem *idempotency) response {
	resp, err := s.transactOnce(c, h, idem, true)
	if errors.Is(err, store.ErrNotClaimed) {
		resp, _ = s.transactOnce(c, h, idem, false)
	}
	return resp
}

// transactOnce is one run of transact; with ahead, the claims are made
// ahead. An error is returned, and nothing rendered, when the request
// must run again (see again).
func (s *Server) transactOnce(c *call, h handlerFunc, idem *idempotency, ahead bool) (response, error) {
	// A write for an account takes its landlord first, then the key's row,
	// even one on the application's own resources (it may record an event
	// of the landlord): one order for every write, no deadlock. Before
	// both, an Idempotency-Key is held (see store.BeginIdempotent): while
	// a request with it runs on any process, this one is answered 409 at
	// once instead of waiting for that one's answer.
	var tx *store.Tx
	var err error
	switch {
	case idem != nil:
		tx, err = s.db.BeginIdempotent(c.ctx, c.acct(), c.check, idem.key, ahead)
	case ahead:
		tx, err = s.db.BeginAhead(c.ctx, c.acct(), c.check)
	default:
		tx, err = s.db.BeginChecked(c.ctx, c.acct(), c.check)
	}
	if err != nil {
		return s.again(c, err)
	}
	defer tx.Rollback()
	if ahead && idem != nil {
		idem.token = tx.ClaimIdempotencyAhead(idem.key, idem.fingerprint)
	} else if idem != nil {
		if ok, answer := s.claim(c, tx, idem); !ok {
			// A kept answer read on SQLite may be a write whose shared
			// commit is still to come: it is replayed only once that
			// commit is done (see database.Begin).
			if err := tx.Rollback(); err != nil {
				return s.again(c, err)
			}
			return answer, nil
		}
	}
	c.tx, c.q = tx, &tx.Queries
	resp, err := s.run(c, h)
	if err != nil {
		return s.again(c, err)
	}
	if !keepable(resp.status) || resp.status >= 400 && idem == nil {
		return resp, nil
	}
	if resp.status >= 400 {
		// The work is undone and the answer kept: in a new transaction
		// that takes only the key (not the landlord's turn again), and
		// claims it again (another process may have run a request with it
		// in between: then that one's answer counts, and one that runs
		// still is answered 409).
		tx.Rollback()
		// The key's kept lookup may not have been checked yet (nothing
		// was sent): the answer is kept only if it holds.
		if tx, err = s.db.BeginIdempotent(c.ctx, nil, c.check, idem.key, false); err != nil {
			return s.again(c, err)
		}
		defer tx.Rollback()
		if ok, answer := s.claim(c, tx, idem); !ok {
			return answer, nil
		}
	}
	if idem != nil {
		resp.set("Idempotent-Replayed", "false")
		err = s.keep(c, tx, idem, resp)
	}
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return s.again(c, err)
	}
	if c.then != nil && resp.status < 300 {
		if err := c.then(c.ctx); err != nil {
			resp.release()
			return s.renderError(c.ctx, err), nil
		}
	}
	return resp, nil
}

// again passes on the errors that mean the request must run again and
// answers nothing: store.ErrNotClaimed (transact runs it again) and
// store.ErrKeyChanged (store.DB.ServeKey does, on a lookup made now). Any other error
// is rendered.
func (s *Server) again(c *call, err error) (response, error) {
	if err := runAgain(err); err != nil {
		return response{}, err
	}
	return s.renderError(c.ctx, err), nil
}

// overrides is err if it, not the handler's answer, says how the request
// ends: it must run again (see runAgain), or its Idempotency-Key is held by
// a request that still runs (store.ErrKeyBusy: 409, which is never kept),
// else nil.
func overrides(err error) error {
	if runAgain(err) != nil || errors.Is(err, store.ErrKeyBusy) {
		return err
	}
	return nil
}

// runAgain is err if it means the request must run again, else nil.
func runAgain(err error) error {
	if errors.Is(err, store.ErrKeyChanged) || errors.Is(err, store.ErrNotClaimed) {
		return err
	}
	return nil
}

// readBody reads a write's body: at most maxBody bytes (413 beyond, checked
// while reading) within the body timeout (408 beyond: plenty for a JSON body
// of up to 1 MB, short enough that a trickled body ties up nothing for
// long), and JSON when not empty (415 otherwise).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > maxBody {
		return nil, errTooLarge()
	}
	var b bytes.Buffer
	if err := s.readWithin(w, r, &b, maxBody); err != nil {
		return nil, err
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return b.Bytes(), checkBody(r, b.Bytes())
}

// errTooLarge is the answer to a body over maxBody.
func errTooLarge() error {
	return requestErrorf(http.StatusRequestEntityTooLarge, "request_too_large", "The request body is over the limit of 1 MB.")
}

// readWithin copies the body to dst: at most limit bytes (errTooLarge
// beyond, checked while reading), within the body timeout (408 beyond).
func (s *Server) readWithin(w http.ResponseWriter, r *http.Request, dst io.Writer, limit int64) error {
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(s.bodyWait)) == nil
	_, err := io.Copy(dst, http.MaxBytesReader(w, r.Body, limit))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The deadline stays passed, so the server does not wait for the
		// rest of the body either: the connection closes after the answer.
		w.Header().Set("Connection", "close")
		return requestErrorf(http.StatusRequestTimeout, "request_timeout", "The request body did not arrive within %s.", s.bodyWait)
	}
	if deadline {
		rc.SetReadDeadline(time.Time{})
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errTooLarge()
	}
	if err != nil {
		return rental.BodyUnreadable()
	}
	return nil
}

// checkBody refuses a body that is not JSON (415) or not UTF-8 text.
func checkBody(r *http.Request, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		return requestErrorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "Request bodies must be sent as Content-Type: application/json.")
	}
	if !utf8.Valid(b) {
		return rental.BodyNotUTF8()
	}
	return nil
}

// checkQuery refuses query parameters the operation does not accept, and
// any parameter given twice unless allowed names it with a trailing "*"
// (the stream's type: repeatable); it returns the parameters, parsed once
// for the whole request.
func checkQuery(r *http.Request, allowed []string) (url.Values, error) {
	q := info(r.Context()).query
	if q == nil { // not through ServeHTTP
		q = r.URL.Query()
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		repeatable := slices.Contains(allowed, name+"*")
		if !repeatable && !slices.Contains(allowed, name) {
			accepted := make([]string, len(allowed))
			for i, a := range allowed {
				accepted[i] = strings.TrimSuffix(a, "*")
			}
			return nil, rental.UnknownQueryParameter(name, accepted)
		}
		if len(q[name]) > 1 && !repeatable {
			return nil, rental.RepeatedQueryParameter(name)
		}
		for _, v := range q[name] {
			if !utf8.ValidString(v) || strings.ContainsFunc(v, unicode.IsControl) {
				return nil, rental.QueryNotText(name)
			}
		}
	}
	return q, nil
}

// checkPathIDs answers 404 for a path ID that cannot be one of ours (IDs are
// [a-z0-9_], at most 64 characters), before it reaches a query. It walks
// the route's pattern for its wildcards: a regular expression over it was
// a hundredth of a read's CPU.
func checkPathIDs(r *http.Request) error {
	for rest := r.Pattern; ; {
		_, after, ok := strings.Cut(rest, "{")
		if !ok {
			return nil
		}
		name, tail, _ := strings.Cut(after, "}")
		rest = tail
		if strings.ContainsAny(name, ".$") { // {$} and {rest...} name no ID
			continue
		}
		if id := r.PathValue(name); !validID(id) {
			return rental.NoSuchObject(id)
		}
	}
}

// validID reports whether s has the shape of an ID of ours.
func validID(s string) bool { return rental.WellFormedID(s) }
