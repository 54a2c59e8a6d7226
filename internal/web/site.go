package web

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

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
	tpl       *template.Template
	// pay is the payment page's template, a page of its own.
	pay *template.Template
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
	// slipsLive tells that a slip-verification provider is configured, so
	// the payment page takes slips of live bills.
	slipsLive bool
}

// parseTemplates parses the layout, the parts pages share
// (templates/parts) and every page into one set, each part once. Page
// KEY's title and content are defined there as page/KEY/title and
// page/KEY/content, and page/KEY (pageName) is the layout calling them. A
// copy of the layout and the parts for each page (html/template's way of
// giving pages blocks of the same names) was a quarter of what the process
// keeps alive, which every collection walks.
func parseTemplates() *template.Template {
	set := template.Must(template.New("parts").Funcs(funcs).ParseFS(templates, "templates/parts/*.html"))
	layout := readTemplate("templates/layout.html")
	names, _ := fs.Glob(templates, "templates/*.html")
	for _, name := range names {
		if name == "templates/layout.html" {
			continue
		}
		key := pageName(strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html"))
		text := readTemplate(name)
		if n := strings.Count(text, `define "`); n != 2 { // {{define and {{- define alike
			// In one set, a block of another name would be every page's,
			// the last parsed silently replacing the others'.
			panic(fmt.Sprintf("web: %s defines %d blocks, not title and content alone", name, n))
		}
		page := renamed(name, text, `{{define "title"}}`, `{{define "`+key+`/title"}}`, `{{define "content"}}`, `{{define "`+key+`/content"}}`)
		own := renamed("templates/layout.html", layout, `{{define "layout"}}`, `{{define "`+key+`"}}`,
			`{{template "title" .}}`, `{{template "`+key+`/title" .}}`, `{{template "content" .}}`, `{{template "`+key+`/content" .}}`)
		template.Must(set.New(name).Parse(page + own))
	}
	return set
}

// pageName is the template of the page named name (its file's name in
// templates/), apart from the parts' names.
func pageName(name string) string { return "page/" + name }

// readTemplate is the text of a template file.
func readTemplate(name string) string {
	b, err := fs.ReadFile(templates, name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// renamed is text with each old of the pairs replaced by its new, each
// found exactly once (a template that names its blocks otherwise is a
// programming error, found by every test that serves a page).
func renamed(name, text string, pairs ...string) string {
	for i := 0; i < len(pairs); i += 2 {
		if n := strings.Count(text, pairs[i]); n != 1 {
			panic(fmt.Sprintf("web: %s has %s %d times, not once", name, pairs[i], n))
		}
		text = strings.Replace(text, pairs[i], pairs[i+1], 1)
	}
	return text
}

// render writes a page with the layout. A page that cannot be made (a
// programming error: every template is tested) is the error for fail,
// nothing of it written.
func (s *site) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) error {
	if s.tpl.Lookup(pageName(name)) == nil {
		return errors.New("web: no template " + name)
	}
	var buf bytes.Buffer
	if err := s.tpl.ExecuteTemplate(&buf, pageName(name), p); err != nil {
		return fmt.Errorf("web: template %s: %w", name, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

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

// nextQuery is the query that brings a sign-in back to next.
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
		return rental.ErrUnreadableForm
	}
	return rental.CheckFormText(r.Form)
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
	"sent":                 "กำลังส่งเหตุการณ์ไปยัง endpoint ที่เลือก · The event is on its way to the endpoint you chose.",
	"resent":               "กำลังส่งอีกครั้ง · The delivery is queued to be sent again.",
	"deleted":              "ลบ endpoint แล้ว · The endpoint is deleted.",
	"reset":                "แซนด์บ็อกซ์กลับเป็นข้อมูลตัวอย่างแล้ว · The sandbox has its sample data again.",
}
