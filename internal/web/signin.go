package web

import (
	"context"
	"errors"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

// handleSignInPage shows the sign-in form.
func (s *site) handleSignInPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	a := v.area
	if p, _, _ := s.person(r, a); p != nil {
		http.Redirect(w, r, localNext(a, r.URL.Query().Get("next")), http.StatusSeeOther)
		return nil
	}
	return s.render(w, r, http.StatusOK, "signin", page{Area: a, Next: localNext(a, r.URL.Query().Get("next"))})
}

// handleSignIn signs a person in: the same answer for an unknown email and
// a wrong password, tries throttled per address, per email from the
// address and per email from all addresses across every process
// (identity.Throttle), and a new session (a new token) at every sign-in.
func (s *site) handleSignIn(w http.ResponseWriter, r *http.Request, v *visit) error {
	a := v.area
	if err := form(w, r); err != nil {
		return err
	}
	next := localNext(a, r.PostForm.Get("next"))
	email := strings.ToLower(strings.TrimSpace(r.PostForm.Get("email")))
	password := r.PostForm.Get("password")
	again := page{Area: a, Next: next, Email: email}
	ip, now := s.proxies.ClientIP(r), s.now()
	if wait, err := s.throttle.Begin(r.Context(), email, ip, now); errors.Is(err, identity.ErrThrottled) {
		again.Error = throttled(wait)
		return s.render(w, r, http.StatusTooManyRequests, "signin", again)
	} else if err != nil {
		return err
	}
	p, hash, err := s.db.Read().PersonByEmail(r.Context(), a.Kind, email)
	if err != nil && !rental.IsNotFound(err) {
		return err
	}
	var right bool
	if err := s.hashing(r.Context(), func() {
		if p == nil {
			identity.CheckDecoy(password)
		} else {
			right = identity.CheckPassword(hash, password)
		}
	}); err != nil {
		return err
	}
	if !right {
		if err := s.throttle.Failed(r.Context(), ip, now); err != nil {
			s.log.ErrorContext(r.Context(), "sign-in throttle", "error", err.Error())
		}
		again.Error = "อีเมลหรือรหัสผ่านไม่ถูกต้อง · The email or password is not right."
		return s.render(w, r, http.StatusUnauthorized, "signin", again)
	}
	if err := s.startSession(w, r, a, p.ID); err != nil {
		return err
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// startSession ends the browser's old session of the area, if any, and
// starts a new one: a session token is never carried across a sign-in.
func (s *site) startSession(w http.ResponseWriter, r *http.Request, a area, personID string) error {
	token, hash := identity.NewToken()
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		if c, err := r.Cookie(s.cookieName(a)); err == nil && c.Value != "" {
			if err := tx.EndSession(r.Context(), identity.HashToken(c.Value)); err != nil {
				return err
			}
		}
		return tx.StartSession(r.Context(), personID, hash)
	})
	if err != nil {
		return err
	}
	s.setSession(w, a, token)
	return nil
}

// throttled is what a throttled form says.
func throttled(wait time.Duration) string {
	return "ลองหลายครั้งเกินไป ลองใหม่ในอีก " + minutes(wait) + " นาที · Too many tries: try again in " + minutes(wait) + " minutes."
}

// maxHashing bounds the password hashes computed at once: each takes 19
// MiB, so a burst of sign-ins must wait its turn, not exhaust memory.
func maxHashing() int { return 2 * runtime.GOMAXPROCS(0) }

// hashing runs fn, which hashes a password, once a place is free: waiting
// up to 5 seconds, then 503.
func (s *site) hashing(ctx context.Context, fn func()) error {
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case s.hashes <- struct{}{}:
	case <-t.C:
		return rental.Busy()
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.hashes }()
	fn()
	return nil
}

// minutes writes a wait in whole minutes, at least one.
func minutes(d time.Duration) string {
	return strconv.Itoa(int(max(1, math.Ceil(d.Minutes()))))
}

// handleSignUpPage shows the sign-up form.
func (s *site) handleSignUpPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.render(w, r, http.StatusOK, "signup", page{Area: v.area, Next: localNext(v.area, r.URL.Query().Get("next"))})
}

// handleSignUp makes a person with an account of their own, and signs
// them in.
func (s *site) handleSignUp(w http.ResponseWriter, r *http.Request, v *visit) error {
	a := v.area
	if err := form(w, r); err != nil {
		return err
	}
	name, password := strings.TrimSpace(r.PostForm.Get("name")), r.PostForm.Get("password")
	again := page{Area: a, Next: localNext(a, r.PostForm.Get("next")), Email: r.PostForm.Get("email"), Name: name}
	email, err := rental.NormalizeEmail(r.PostForm.Get("email"))
	if err == nil {
		err = rental.CheckPersonName(name)
	}
	if err == nil {
		err = rental.CheckPassword(password, email)
	}
	if err == nil {
		if wait, terr := s.throttle.SignUp(r.Context(), s.proxies.ClientIP(r), s.now()); errors.Is(terr, identity.ErrThrottled) {
			again.Error = throttled(wait)
			return s.render(w, r, http.StatusTooManyRequests, "signup", again)
		} else if terr != nil {
			err = terr
		}
	}
	var p *rental.Person
	var hash string
	if err == nil {
		err = s.hashing(r.Context(), func() { hash = identity.HashPassword(password) })
	}
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
			p, err = tx.SignUp(r.Context(), a.Kind, email, name, hash)
			return err
		})
	}
	if e, ok := rental.AsError(err); ok && request.StatusOf(err) < 500 {
		again.Error = e.Message
		return s.render(w, r, request.StatusOf(err), "signup", again)
	}
	if err == nil {
		err = s.startSession(w, r, a, p.ID)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, again.Next, http.StatusSeeOther)
	return nil
}

// handleSignOut ends the browser's session of the area.
func (s *site) handleSignOut(w http.ResponseWriter, r *http.Request, v *visit) error {
	if c, err := r.Cookie(s.cookieName(v.area)); err == nil && c.Value != "" {
		if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.EndSession(r.Context(), identity.HashToken(c.Value)) }); err != nil {
			return err
		}
	}
	s.clearSession(w, v.area)
	http.Redirect(w, r, v.area.Base+"/signin", http.StatusSeeOther)
	return nil
}

// handlePassword changes the signed-in person's password after checking
// the current one; every session of theirs ends, and they sign in again.
func (s *site) handlePassword(w http.ResponseWriter, r *http.Request, v *visit) error {
	a, p := v.area, v.person
	if r.Method != http.MethodPost { // GET and HEAD show the form; only a POST changes anything
		return s.render(w, r, http.StatusOK, "password", page{Area: a, Person: p})
	}
	if err := form(w, r); err != nil {
		return err
	}
	again := page{Area: a, Person: p}
	// The current password is guessed no faster here than at sign-in.
	ip, now := s.proxies.ClientIP(r), s.now()
	if wait, err := s.throttle.Begin(r.Context(), p.Email, ip, now); errors.Is(err, identity.ErrThrottled) {
		again.Error = throttled(wait)
		return s.render(w, r, http.StatusTooManyRequests, "password", again)
	} else if err != nil {
		return err
	}
	hash, err := s.db.Read().PasswordHash(r.Context(), p.ID)
	if err != nil {
		return err
	}
	var right bool
	if err := s.hashing(r.Context(), func() { right = identity.CheckPassword(hash, r.PostForm.Get("current")) }); err != nil {
		return err
	}
	if !right {
		if err := s.throttle.Failed(r.Context(), ip, now); err != nil {
			s.log.ErrorContext(r.Context(), "sign-in throttle", "error", err.Error())
		}
		again.Error = "รหัสผ่านปัจจุบันไม่ถูกต้อง · The current password is not right."
		return s.render(w, r, http.StatusUnauthorized, "password", again)
	}
	password := r.PostForm.Get("password")
	if err := rental.CheckPassword(password, p.Email); err != nil {
		again.Error = err.(*rental.Error).Message
		return s.render(w, r, http.StatusBadRequest, "password", again)
	}
	var newHash string
	if err := s.hashing(r.Context(), func() { newHash = identity.HashPassword(password) }); err != nil {
		return err
	}
	if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.SetPassword(r.Context(), p.ID, newHash) }); err != nil {
		return err
	}
	s.clearSession(w, a)
	http.Redirect(w, r, a.Base+"/signin", http.StatusSeeOther)
	return nil
}
