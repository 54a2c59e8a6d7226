package web

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/webhook"
)

//go:embed templates
var templates embed.FS

// area is one signed-in part of the site: the developer portal or the
// landlord's app. Each has its own people, cookie and pages.
type area struct {
	Kind           rental.PersonKind
	Base           string // "/portal" or "/app"
	cookie         string // the session cookie's name, without the __Host- prefix
	NameTH, NameEN string
	// PitchTH and PitchEN say on the sign-in page who it is for.
	PitchTH, PitchEN string
	Nav              []navItem
	// Links are the bar's links of a public area (the documentation),
	// shown to everyone.
	Links []navItem
}

// navItem is a link of an area's bar.
type navItem struct{ Href, TH, EN string }

var (
	portalArea = area{Kind: rental.PersonDeveloper, Base: "/portal", cookie: "rentapi_portal",
		NameTH: "พอร์ทัลนักพัฒนา", NameEN: "Developer portal",
		PitchTH: "สำหรับนักพัฒนาที่เชื่อมต่อแอปกับบัญชีเจ้าของหอพัก", PitchEN: "For developers whose software works on landlords' data",
		Nav: []navItem{{"/portal", "แอปพลิเคชัน", "Applications"}, {"/portal/usage", "การใช้งาน", "Usage"},
			{"/portal/plan", "แพ็กเกจ", "Plan"}, {"/portal/invoices", "ใบแจ้งหนี้", "Invoices"}, {"/portal/password", "รหัสผ่าน", "Password"}}}
	landlordArea = area{Kind: rental.PersonLandlord, Base: "/app", cookie: "rentapi_app",
		NameTH: "เจ้าของหอพัก", NameEN: "Landlord",
		PitchTH: "สำหรับเจ้าของหอพักและอพาร์ทเมนท์", PitchEN: "For landlords of dormitories and apartments",
		Nav: []navItem{{"/app", "บัญชีของฉัน", "My account"}, {"/app/password", "รหัสผ่าน", "Password"}}}
)

// page is what every template of a signed-in area gets: the area, the
// person signed in (nil on the sign-in pages), a message, and the page's
// own data.
type page struct {
	Area   area
	Person *rental.Person
	Flash  string
	Error  string
	Status int
	Detail string
	// Wide lets a page use a desktop's width (lists of keys, say); every
	// page still fits a phone.
	Wide bool
	// Sign-in and sign-up forms.
	Next, Email, Name string
	// Data is the page's own.
	Data any
}

// site serves the signed-in pages: the developer portal, the landlord's app
// and the consent pages.
type site struct {
	db       *store.DB
	log      *slog.Logger
	now      func() time.Time
	throttle identity.Throttle
	// secure is true when the public URL is https: cookies are then
	// __Host- prefixed and Secure. Plain http is for loopback development.
	secure    bool
	publicURL string
	tpl       map[string]*template.Template
	// secret fingerprints the API keys the portal makes and seals webhook
	// signing secrets, as the API does; guard judges webhook URLs, as the
	// API's does.
	secret *secret.Secret
	guard  webhook.Guard
	// docs is the documentation's content, read once.
	docs *docs
	// hashes bounds the password hashes computed at once (maxHashing).
	hashes chan struct{}
	// proxies tell the client's address for the sign-in throttle.
	proxies request.Proxies
	// seller is who the developers' invoices are from.
	seller Seller
}

// parseTemplates gives each page template its own copy of the layout and
// of the parts pages share (templates/parts).
func parseTemplates() map[string]*template.Template {
	layout := template.Must(template.New("layout").Funcs(funcs).ParseFS(templates, "templates/layout.html", "templates/parts/*.html"))
	out := map[string]*template.Template{}
	names, _ := fs.Glob(templates, "templates/*.html")
	for _, name := range names {
		if name == "templates/layout.html" {
			continue
		}
		key := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		out[key] = template.Must(template.Must(layout.Clone()).ParseFS(templates, name))
	}
	return out
}

// render writes a page with the layout; a template error is a 500.
func (s *site) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	var buf bytes.Buffer
	t, ok := s.tpl[name]
	if !ok {
		s.fail(w, r, p.Area, errors.New("web: no template "+name))
		return
	}
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		s.log.ErrorContext(r.Context(), "page template", "request_id", request.ID(r.Context()), "template", name, "error", err.Error())
		status, buf = http.StatusInternalServerError, bytes.Buffer{}
		s.tpl["error"].ExecuteTemplate(&buf, "layout", page{Area: p.Area, Status: status})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail answers an error with a clear page of its status: a domain error's
// message is shown (it is written for people), anything else goes to the
// log only. A 503 (the database busy, the sign-in throttle's store down)
// says when to try again (Retry-After).
func (s *site) fail(w http.ResponseWriter, r *http.Request, a area, err error) {
	if r.Context().Err() != nil { // the browser went away: nobody to answer, no fault of ours
		w.WriteHeader(request.StatusClientClosed)
		return
	}
	status, retryAfter := request.StatusOf(err), 1
	if errors.Is(err, identity.ErrUnavailable) {
		// The sign-in throttle cannot count (Redis is down): nobody's
		// password is judged until it can, which it checks every second.
		status, retryAfter = http.StatusServiceUnavailable, throttleRetryAfter
	}
	p := page{Area: a, Status: status}
	if e, ok := rental.AsError(err); ok && status < 500 && status != http.StatusNotFound {
		p.Detail = e.Message // a 404 says all there is: no such page, whatever it named
	} else if status >= 500 {
		s.log.ErrorContext(context.WithoutCancel(r.Context()), "page", "request_id", request.ID(r.Context()), "error", err.Error())
	}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	s.render(w, r, status, "error", p)
}

// throttleRetryAfter is the seconds a browser is asked to wait when the
// sign-in throttle's store is down.
const throttleRetryAfter = 5

// cookieName is the area's session cookie: __Host- prefixed (Secure, path
// /, no domain: no subdomain can set or read it) whenever served over https.
func (s *site) cookieName(a area) string {
	if s.secure {
		return "__Host-" + a.cookie
	}
	return a.cookie
}

// setSession sends the session cookie of a new session.
func (s *site) setSession(w http.ResponseWriter, a area, token string) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(a), Value: token, Path: "/", MaxAge: int(rental.SessionMax.Seconds()),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// clearSession removes the session cookie.
func (s *site) clearSession(w http.ResponseWriter, a area) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(a), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// person is who is signed in to the area, with the hash of their session's
// token; nil when nobody is.
func (s *site) person(r *http.Request, a area) (*rental.Person, string, error) {
	c, err := r.Cookie(s.cookieName(a))
	if err != nil || c.Value == "" || len(c.Value) > 200 {
		return nil, "", nil
	}
	hash := identity.HashToken(c.Value)
	p, err := s.db.Session(r.Context(), hash, s.now())
	if rental.IsNotFound(err) || (err == nil && p.Kind != a.Kind) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	return p, hash, nil
}

// signedIn runs h for a signed-in person of the area; anyone else is sent
// to sign in first, and back here afterwards (for a GET).
func (s *site) signedIn(a area, h func(w http.ResponseWriter, r *http.Request, p *rental.Person, session string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, session, err := s.person(r, a)
		if err != nil {
			s.fail(w, r, a, err)
			return
		}
		if p == nil {
			next := ""
			if r.Method == http.MethodGet {
				next = r.URL.RequestURI()
			}
			http.Redirect(w, r, a.Base+"/signin"+nextQuery(next), http.StatusSeeOther)
			return
		}
		h(w, r, p, session)
	}
}

func nextQuery(next string) string {
	if next == "" {
		return ""
	}
	return "?next=" + url.QueryEscape(next)
}

// localNext is where to go after signing in: a path of this site only, so
// the form cannot be made to send anyone elsewhere; else the area's home.
func localNext(a area, next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return a.Base
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return a.Base
	}
	return next
}

// form reads a posted form of at most 64 KB.
func form(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return rental.Errorf(rental.KindInvalid, "invalid_form", "The form could not be read.")
	}
	for _, values := range r.Form {
		for _, v := range values {
			if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
				return rental.Errorf(rental.KindInvalid, "invalid_form", "The form holds text that is not UTF-8, or a NUL character.")
			}
		}
	}
	return nil
}

// handleSignInPage shows the sign-in form.
func (s *site) handleSignInPage(a area) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if p, _, _ := s.person(r, a); p != nil {
			http.Redirect(w, r, localNext(a, r.URL.Query().Get("next")), http.StatusSeeOther)
			return
		}
		s.render(w, r, http.StatusOK, "signin", page{Area: a, Next: localNext(a, r.URL.Query().Get("next"))})
	}
}

// handleSignIn signs a person in: the same answer for an unknown email and
// a wrong password, tries throttled per address, per email from the
// address and per email from all addresses across every process
// (identity.Throttle), and a new session (a new token) at every sign-in.
func (s *site) handleSignIn(a area) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := form(w, r); err != nil {
			s.fail(w, r, a, err)
			return
		}
		next := localNext(a, r.PostForm.Get("next"))
		email := strings.ToLower(strings.TrimSpace(r.PostForm.Get("email")))
		password := r.PostForm.Get("password")
		again := page{Area: a, Next: next, Email: email}
		ip, now := s.proxies.ClientIP(r), s.now()
		if wait, err := s.throttle.Begin(r.Context(), email, ip, now); errors.Is(err, identity.ErrThrottled) {
			again.Error = throttled(wait)
			s.render(w, r, http.StatusTooManyRequests, "signin", again)
			return
		} else if err != nil {
			s.fail(w, r, a, err)
			return
		}
		p, hash, err := s.db.Read().PersonByEmail(r.Context(), a.Kind, email)
		if err != nil && !rental.IsNotFound(err) {
			s.fail(w, r, a, err)
			return
		}
		var right bool
		if err := s.hashing(r.Context(), func() {
			if p == nil {
				identity.CheckDecoy(password)
			} else {
				right = identity.CheckPassword(hash, password)
			}
		}); err != nil {
			s.fail(w, r, a, err)
			return
		}
		if !right {
			if err := s.throttle.Failed(r.Context(), ip, now); err != nil {
				s.log.ErrorContext(r.Context(), "sign-in throttle", "error", err.Error())
			}
			again.Error = "อีเมลหรือรหัสผ่านไม่ถูกต้อง · The email or password is not right."
			s.render(w, r, http.StatusUnauthorized, "signin", again)
			return
		}
		if err := s.startSession(w, r, a, p.ID); err != nil {
			s.fail(w, r, a, err)
			return
		}
		http.Redirect(w, r, next, http.StatusSeeOther)
	}
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
		e := rental.Errorf(rental.KindUnavailable, "service_unavailable", "The service is busy; try again in a moment.")
		e.RetryAfter = 1
		return e
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
func (s *site) handleSignUpPage(a area) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.render(w, r, http.StatusOK, "signup", page{Area: a, Next: localNext(a, r.URL.Query().Get("next"))})
	}
}

// handleSignUp makes a person with an account of their own, and signs
// them in.
func (s *site) handleSignUp(a area) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := form(w, r); err != nil {
			s.fail(w, r, a, err)
			return
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
				s.render(w, r, http.StatusTooManyRequests, "signup", again)
				return
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
			s.render(w, r, request.StatusOf(err), "signup", again)
			return
		}
		if err == nil {
			err = s.startSession(w, r, a, p.ID)
		}
		if err != nil {
			s.fail(w, r, a, err)
			return
		}
		http.Redirect(w, r, again.Next, http.StatusSeeOther)
	}
}

// handleSignOut ends the browser's session of the area.
func (s *site) handleSignOut(a area) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie(s.cookieName(a)); err == nil && c.Value != "" {
			if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.EndSession(r.Context(), identity.HashToken(c.Value)) }); err != nil {
				s.fail(w, r, a, err)
				return
			}
		}
		s.clearSession(w, a)
		http.Redirect(w, r, a.Base+"/signin", http.StatusSeeOther)
	}
}

// handlePassword changes the signed-in person's password after checking
// the current one; every session of theirs ends, and they sign in again.
func (s *site) handlePassword(a area) http.HandlerFunc {
	return s.signedIn(a, func(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
		if r.Method != http.MethodPost { // GET and HEAD show the form; only a POST changes anything
			s.render(w, r, http.StatusOK, "password", page{Area: a, Person: p})
			return
		}
		if err := form(w, r); err != nil {
			s.fail(w, r, a, err)
			return
		}
		again := page{Area: a, Person: p}
		// The current password is guessed no faster here than at sign-in.
		ip, now := s.proxies.ClientIP(r), s.now()
		if wait, err := s.throttle.Begin(r.Context(), p.Email, ip, now); errors.Is(err, identity.ErrThrottled) {
			again.Error = throttled(wait)
			s.render(w, r, http.StatusTooManyRequests, "password", again)
			return
		} else if err != nil {
			s.fail(w, r, a, err)
			return
		}
		hash, err := s.db.Read().PasswordHash(r.Context(), p.ID)
		if err != nil {
			s.fail(w, r, a, err)
			return
		}
		var right bool
		if err := s.hashing(r.Context(), func() { right = identity.CheckPassword(hash, r.PostForm.Get("current")) }); err != nil {
			s.fail(w, r, a, err)
			return
		}
		if !right {
			if err := s.throttle.Failed(r.Context(), ip, now); err != nil {
				s.log.ErrorContext(r.Context(), "sign-in throttle", "error", err.Error())
			}
			again.Error = "รหัสผ่านปัจจุบันไม่ถูกต้อง · The current password is not right."
			s.render(w, r, http.StatusUnauthorized, "password", again)
			return
		}
		password := r.PostForm.Get("password")
		if err := rental.CheckPassword(password, p.Email); err != nil {
			again.Error = err.(*rental.Error).Message
			s.render(w, r, http.StatusBadRequest, "password", again)
			return
		}
		var newHash string
		if err := s.hashing(r.Context(), func() { newHash = identity.HashPassword(password) }); err != nil {
			s.fail(w, r, a, err)
			return
		}
		if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.SetPassword(r.Context(), p.ID, newHash) }); err != nil {
			s.fail(w, r, a, err)
			return
		}
		s.clearSession(w, a)
		http.Redirect(w, r, a.Base+"/signin", http.StatusSeeOther)
	})
}

// done is the message a page shows after a change sent it there, by the
// name in ?done=: a fixed set, so an address cannot make a page say
// anything else.
var done = map[string]string{
	"app_created":          "สร้างแอปพลิเคชันและแซนด์บ็อกซ์พร้อมข้อมูลตัวอย่างแล้ว พร้อมคีย์ทดสอบด้านล่างสำหรับแซนด์บ็อกซ์ · The application and its sandbox with sample data are ready, with the test key below for the sandbox.",
	"app_saved":            "บันทึกการตั้งค่าแล้ว · Settings saved.",
	"key_revoked":          "เพิกถอนคีย์แล้ว คำขอถัดไปที่ใช้คีย์นี้จะถูกปฏิเสธ · The key is revoked: the next request with it is refused.",
	"account_disconnected": "ยกเลิกการเชื่อมต่อแล้ว ข้อมูลของเจ้าของหอพักยังอยู่ · Disconnected: from the next request every key gets 403 account_access_revoked for this account. The landlord's data is kept.",
	"plan":                 "เปลี่ยนแพ็กเกจแล้ว · The plan is changed.",
	"plan_now":             "เปลี่ยนแพ็กเกจแล้ว มีผลตั้งแต่คำขอถัดไป · The plan is changed: its limits apply from the next request.",
	"plan_later":           "บันทึกการเปลี่ยนแพ็กเกจแล้ว จะมีผลวันที่ 1 ของเดือนหน้า เวลา 00:00 (เวลาประเทศไทย) · The change is scheduled: it takes effect at 00:00 on the 1st of next month (Thailand time).",
	"promptpay":            "บันทึกบัญชีพร้อมเพย์แล้ว · The PromptPay receiver is saved.",
	"disconnected":         "ยกเลิกการเชื่อมต่อแล้ว แอปพลิเคชันนี้เข้าถึงบัญชีของคุณไม่ได้อีก ข้อมูลของคุณยังอยู่ครบ · Disconnected: the application can no longer reach your account. Your data is kept.",
	"saved":                "บันทึกแล้ว · Saved.",
	"enabled":              "เปิดใช้แล้ว · The endpoint is enabled.",
	"disabled":             "ปิดใช้แล้ว ไม่มีการส่งเหตุการณ์ไปจนกว่าจะเปิดใช้อีกครั้ง · The endpoint is disabled: nothing is sent to it until it is enabled again.",
	"test":                 "ส่งเหตุการณ์ทดสอบ webhook.test แล้ว · A webhook.test event is on its way.",
	"resent":               "กำลังส่งอีกครั้ง · The delivery is queued to be sent again.",
	"deleted":              "ลบ endpoint แล้ว · The endpoint is deleted.",
	"reset":                "แซนด์บ็อกซ์กลับเป็นข้อมูลตัวอย่างแล้ว · The sandbox has its sample data again.",
}
