package web

import (
	"encoding/json"
	"net/http"
	"time"
)

// A secret the portal makes (a new API key's text, a webhook endpoint's
// signing secret) is shown once, on the page that the POST which made it
// redirects to (POST-redirect-GET): reloading that page makes nothing, and
// shows the secret no more. The secret goes from the POST to that page in a
// cookie of its own, sealed with the server secret and bound to the
// developer's session and to what it is the secret of, HttpOnly and
// SameSite=Strict, good for revealLife; the page takes it and clears it.
// Nothing of it is kept on the server: an API key stays stored only as its
// fingerprint.

// revealLife is how long a made secret waits for its page: a browser
// follows the redirect at once.
const revealLife = 5 * time.Minute

// reveal is what the page of a made secret shows, as sealed in its cookie.
type reveal struct {
	Secret string `json:"secret"`
	// OldUntil is when a rotated webhook secret stops signing (Unix ms).
	OldUntil int64 `json:"old_until,omitempty"`
	// Until is when the cookie stops being honoured (Unix ms), whatever a
	// browser keeps.
	Until int64 `json:"until"`
}

// revealCookie names the cookie of the secret of subject (a key's or an
// endpoint's ID): one each, so two made in two tabs do not meet. Over
// https it is __Host- prefixed, as the session's is.
func (s *site) revealCookie(subject string) string {
	if s.secure {
		return "__Host-rentapi_shown_" + subject
	}
	return "rentapi_shown_" + subject
}

// revealContext binds a sealed secret to the session that made it and to
// its subject: no other session, and no other key or endpoint, opens it.
func revealContext(session, subject string) []byte {
	return []byte("rentapi reveal\x00" + session + "\x00" + subject)
}

// keepReveal sets the cookie that carries v to the page of subject's secret.
func (s *site) keepReveal(w http.ResponseWriter, session, subject string, v reveal) error {
	v.Until = s.now().Add(revealLife).UnixMilli()
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	http.SetCookie(w, &http.Cookie{Name: s.revealCookie(subject), Value: s.secret.Seal(b, revealContext(session, subject)), Path: "/",
		MaxAge: int(revealLife.Seconds()), HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteStrictMode})
	return nil
}

// showOnce ends a form that made a secret: the secret is kept for the
// page at to, which shows it once, and the browser is sent there, so a
// reload makes nothing again (POST-redirect-GET).
func (s *site) showOnce(w http.ResponseWriter, r *http.Request, session, subject string, v reveal, to string) error {
	if err := s.keepReveal(w, session, subject, v); err != nil {
		return err
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// takeReveal returns the secret of subject made by this session, once:
// the cookie is cleared whatever it holds. ok is false when there is none
// (shown already, expired, another session's, or tampered with).
func (s *site) takeReveal(w http.ResponseWriter, r *http.Request, session, subject string) (v reveal, ok bool) {
	c, err := r.Cookie(s.revealCookie(subject))
	if err != nil {
		return v, false
	}
	http.SetCookie(w, &http.Cookie{Name: c.Name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteStrictMode})
	b, err := s.secret.Open(c.Value, revealContext(session, subject))
	if err != nil || json.Unmarshal(b, &v) != nil || v.Secret == "" || s.now().UnixMilli() >= v.Until {
		return reveal{}, false
	}
	return v, true
}
