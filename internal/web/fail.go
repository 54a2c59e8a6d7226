package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/request"
)

// fail is the one place a page's error is answered: with the API's status
// for it (request.StatusOf; a refused connect link's own, a sign-in
// throttle that cannot count is 503), on its area's error page. A domain
// error's message is shown (it is written for people), a 404 says all there
// is, anything else goes to the log only; a 503 (the database busy, the
// throttle's store down) says when to try again (Retry-After). A browser
// that went away gets nothing: no fault of ours.
func (s *site) fail(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	if r.Context().Err() != nil {
		w.WriteHeader(request.StatusClientClosed)
		return
	}
	status, retryAfter := request.StatusOf(err), 1
	if errors.Is(err, identity.ErrUnavailable) {
		// The sign-in throttle cannot count (Redis is down): nobody's
		// password is judged until it can, which it checks every second.
		status, retryAfter = http.StatusServiceUnavailable, throttleRetryAfter
	}
	if status >= 500 {
		s.log.ErrorContext(context.WithoutCancel(r.Context()), "page", "request_id", request.ID(r.Context()), "area", v.area.Base, "error", err.Error())
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	var out error
	if rf, ok := errors.AsType[*refusal](err); ok {
		// A connect link or consent form that cannot go on: a page of its
		// own, never a redirect, and nothing linked.
		out = s.render(w, r, status, "connect_error", page{Area: v.area, Person: v.person, Status: status, Data: connectError{Reason: rf.reason, Detail: rf.detail}})
	} else if v.area.Base == payArea.Base {
		out = s.payError(w, status, err)
	} else {
		p := page{Area: v.area, Status: status}
		if e, ok := rental.AsError(err); ok && status < 500 && status != http.StatusNotFound {
			p.Detail = e.Message // a 404 says all there is: no such page, whatever it named
			if words, ok := pageWords[e.Code]; ok {
				p.Detail = words
			}
		}
		out = s.render(w, r, status, "error", p)
	}
	if out != nil {
		s.log.ErrorContext(context.WithoutCancel(r.Context()), "error page", "request_id", request.ID(r.Context()), "error", out.Error())
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
	}
}

// payError is the payment page's error: a short bilingual page of the
// status, in the payment page's own look; a refused slip upload says why.
func (s *site) payError(w http.ResponseWriter, status int, err error) error {
	v := view{Error: status}
	if rf, ok := errors.AsType[*slipRefusal](err); ok {
		// A refused slip upload: what was wrong, and the way back to the form.
		v.RefusedTH, v.RefusedEN, v.Back = rf.th, rf.en, rf.back
	}
	var buf bytes.Buffer
	if err := s.pay.Execute(&buf, v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

// throttleRetryAfter is the seconds a browser is asked to wait when the
// sign-in throttle's store is down.
const throttleRetryAfter = 5

// pageWords are what an error page says for a refusal whose own message
// is written for the API's clients (it names a request of the API), by
// its code.
var pageWords = map[string]string{
	"webhook_endpoint_disabled": "endpoint นี้ปิดใช้อยู่ เปิดใช้ก่อน · The endpoint is disabled; enable it first.",
}

// formWords say in Thai what a refusal shown on a form is about, by the
// refusal's code, else by the field it names, else other; the English
// beside it is the domain's own message.
type formWords struct {
	byCode, byParam map[string]string
	other           string
}

// formError is a refusal to show on the form that was sent, in Thai and
// English, with its status; ok is false for anything that is not the
// sender's to fix (a page not found, a failure of ours): that is fail's.
func formError(err error, words formWords) (msg string, status int, ok bool) {
	e, isErr := rental.AsError(err)
	status = request.StatusOf(err)
	if !isErr || status >= 500 || e.Kind == rental.KindNotFound {
		return "", 0, false
	}
	th, known := words.byCode[e.Code]
	if !known {
		th = words.byParam[e.Param]
	}
	if th == "" {
		th = words.other
	}
	return th + " · " + e.Message, status, true
}
