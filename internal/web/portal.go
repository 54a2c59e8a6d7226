package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/request"
	"rentapi/internal/store"
)

// developerApp runs h for the application of the path's app_id when it is
// the signed-in developer's; any other is not found, exactly as one that
// does not exist, so application IDs reveal nothing.
func (s *site) developerApp(h func(w http.ResponseWriter, r *http.Request, p *rental.Person, session string, app *rental.Application)) http.HandlerFunc {
	return s.signedIn(portalArea, func(w http.ResponseWriter, r *http.Request, p *rental.Person, session string) {
		id, err := pathID(r, "app_id", "application")
		var app *rental.Application
		if err == nil {
			app, err = s.db.Read().GetApplication(r.Context(), id)
		}
		if err == nil && app.DeveloperID != p.DeveloperID {
			err = rental.NotFound("application", id)
		}
		if err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
		h(w, r, p, session, app)
	})
}

// pathID is the ID in the path's wildcard name; one that is not the shape
// of an ID names nothing.
func pathID(r *http.Request, name, what string) (string, error) {
	id := r.PathValue(name)
	if !rental.WellFormedID(id) {
		return "", rental.NotFound(what, "")
	}
	return id, nil
}

// portalPage is a page of the portal for the developer, wide enough on a
// desktop for lists of keys.
func portalPage(p *rental.Person, data any) page {
	return page{Area: portalArea, Person: p, Wide: true, Data: data}
}

// whenOpt writes an optional instant, or dash for none.
func whenOpt(t *rental.Time) string {
	if t == nil {
		return "—"
	}
	return when(*t)
}

// --- Applications -------------------------------------------------------

// appRow is an application in the developer's list.
type appRow struct {
	ID, Name, Company, Created string
	Keys, Accounts             int
	Disabled                   bool
}

// handlePortalHome lists the developer's applications.
func (s *site) handlePortalHome(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
	apps, err := s.db.Read().ApplicationsOf(r.Context(), p.DeveloperID, s.now())
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	rows := make([]appRow, 0, len(apps))
	for _, a := range apps {
		rows = append(rows, appRow{ID: a.App.ID, Name: a.App.Name, Company: a.App.Company, Created: when(a.App.CreatedAt),
			Keys: a.Keys, Accounts: a.Accounts, Disabled: a.App.Disabled})
	}
	s.render(w, r, http.StatusOK, "portal", portalPage(p, rows))
}

// scopeChoice is one checkbox of a list of scopes, with what it allows.
type scopeChoice struct {
	Scope   rental.Scope
	TH, EN  string
	Checked bool
}

// scopeChoices are checkboxes for each of offered, checked when in chosen.
func scopeChoices(offered, chosen rental.Scopes) []scopeChoice {
	out := make([]scopeChoice, 0, len(offered))
	for _, sc := range offered {
		th, en := ScopeText(sc)
		out = append(out, scopeChoice{Scope: sc, TH: th, EN: en, Checked: chosen.Has(sc)})
	}
	return out
}

// scopeLabel is a scope shown with what it allows.
type scopeLabel struct {
	Scope  rental.Scope
	TH, EN string
}

func scopeLabels(scopes rental.Scopes) []scopeLabel {
	out := make([]scopeLabel, 0, len(scopes))
	for _, sc := range scopes {
		th, en := ScopeText(sc)
		out = append(out, scopeLabel{sc, th, en})
	}
	return out
}

// appForm is the form of an application's settings, as shown or as sent.
type appForm struct {
	Name, Company, Description string
	RedirectURIs               string // one a line
	Scopes                     []scopeChoice
}

func newAppForm(set rental.ApplicationSettings) appForm {
	return appForm{Name: set.Name, Company: set.Company, Description: set.Description,
		RedirectURIs: strings.Join(set.RedirectURIs, "\n"), Scopes: scopeChoices(rental.AllScopes, set.Scopes)}
}

// formScopes reads checked scopes: each value exactly one scope's name, so
// a forged form cannot slip in "all" or a list.
func formScopes(values []string) (rental.Scopes, error) {
	for _, v := range values {
		if !slices.Contains(rental.AllScopes, rental.Scope(v)) {
			return nil, rental.Invalid("scopes", "Unknown scope '%s'.", v)
		}
	}
	return rental.ParseScopes(strings.Join(values, " "))
}

// formSettings reads an application's settings from its form; the
// redirect URIs are one a line, blank lines ignored.
func formSettings(r *http.Request) (rental.ApplicationSettings, error) {
	f := r.PostForm
	set := rental.ApplicationSettings{Name: strings.TrimSpace(f.Get("name")), Company: strings.TrimSpace(f.Get("company")),
		Description: strings.TrimSpace(strings.ReplaceAll(f.Get("description"), "\r\n", "\n"))}
	for line := range strings.SplitSeq(f.Get("redirect_uris"), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			set.RedirectURIs = append(set.RedirectURIs, line)
		}
	}
	scopes, err := formScopes(f["scope"])
	set.Scopes = scopes
	if err == nil {
		err = set.Check()
	}
	return set, err
}

// handleNewApp shows the form of a new application, asking for the read
// scopes to begin with.
func (s *site) handleNewApp(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
	reads := rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeBillsRead}
	s.render(w, r, http.StatusOK, "appnew", portalPage(p, newAppForm(rental.ApplicationSettings{Scopes: reads})))
}

// firstKeyName names the test key a new application comes with.
const firstKeyName = "Test key"

// handleCreateApp makes the application with its sandbox and one test key
// of all the application's scopes, in one transaction, and sends the
// browser to the page that shows the key, once.
func (s *site) handleCreateApp(w http.ResponseWriter, r *http.Request, p *rental.Person, session string) {
	if err := form(w, r); err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	set, err := formSettings(r)
	var app *rental.Application
	var key *rental.APIKey
	var text string
	if err == nil {
		var minted rental.MintedKey
		if minted, err = s.newSecret(rental.ModeTest); err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
		text = minted.Text
		err = s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
			app, err = tx.CreateApplication(r.Context(), store.ApplicationSpec{DeveloperID: p.DeveloperID, Name: set.Name, Company: set.Company,
				Description: set.Description, Scopes: set.Scopes, RedirectURIs: set.RedirectURIs})
			if err != nil {
				return err
			}
			key, err = tx.CreateAPIKey(r.Context(), store.NewKey{ApplicationID: app.ID, Name: firstKeyName, Mode: rental.ModeTest, Scopes: app.Scopes}.Minted(minted))
			return err
		})
	}
	if msg, status, ok := formError(err); ok {
		pg := portalPage(p, newAppForm(set))
		pg.Error = msg
		s.render(w, r, status, "appnew", pg)
		return
	}
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	s.showOnce(w, r, session, key.ID, reveal{Secret: text}, keySecretPath(app.ID, key.ID)+"?done=app_created")
}

// keyRow is a key as listed: never its secret, only the parts kept in
// clear to recognise it.
type keyRow struct {
	ID, Name   string
	Mode       rental.Mode
	Shown      string // svc_live_AbCd…wxyz
	Scopes     rental.Scopes
	Account    string
	Expires    string
	Created    string
	LastUsed   string
	Status     rental.KeyStatus
	StatusTH   string
	Usable     bool
	StatusTone string // the tag's colour
}

func newKeyRow(k rental.APIKey, now time.Time) keyRow {
	st := k.Status(now)
	row := keyRow{ID: k.ID, Name: k.Name, Mode: k.Mode, Shown: k.Prefix + "…" + k.Last4, Scopes: k.Scopes, Account: k.AccountID,
		Expires: whenOpt(k.ExpiresAt), Created: when(k.CreatedAt), LastUsed: whenOpt(k.LastUsedAt), Status: st,
		Usable: st == rental.KeyActive || st == rental.KeyExpiring}
	switch st {
	case rental.KeyActive:
		row.StatusTH, row.StatusTone = "ใช้งานได้", "good"
	case rental.KeyExpiring:
		row.StatusTH, row.StatusTone = "ใกล้หมดอายุ", "new"
	case rental.KeyExpired:
		row.StatusTH, row.StatusTone = "หมดอายุ", "bad"
	default:
		row.StatusTH, row.StatusTone = "เพิกถอนแล้ว", "bad"
	}
	return row
}

// accountRow is a real landlord linked to the application, now or before.
type accountRow struct {
	ID, Name string
	Scopes   rental.Scopes
	Since    string // linked since, or disconnected at
	Active   bool
}

// newAccountRow shows an account; its last change is when it was linked
// (or linked again), or, for an ended link, when it ended.
func newAccountRow(a rental.Account) accountRow {
	return accountRow{ID: a.ID, Name: a.Name, Scopes: a.Granted, Since: when(a.UpdatedAt), Active: !a.Revoked}
}

// appView is the page of one application.
type appView struct {
	App      *rental.Application
	Created  string
	Scopes   []scopeLabel
	Form     appForm
	Keys     []keyRow
	Accounts []accountRow
}

// handleDeveloperApp shows an application: its keys, its linked accounts, its
// settings.
func (s *site) handleDeveloperApp(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	pg, err := s.appPage(r, p, app, appSettings(app))
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	pg.Flash = done[r.URL.Query().Get("done")]
	s.render(w, r, http.StatusOK, "portal_app", pg)
}

func appSettings(app *rental.Application) rental.ApplicationSettings {
	return rental.ApplicationSettings{Name: app.Name, Company: app.Company, Description: app.Description, Scopes: app.Scopes, RedirectURIs: app.RedirectURIs}
}

// appPage gathers the application's page, its settings form filled with set.
func (s *site) appPage(r *http.Request, p *rental.Person, app *rental.Application, set rental.ApplicationSettings) (page, error) {
	keys, err := s.db.Read().APIKeys(r.Context(), app.ID)
	if err != nil {
		return page{}, err
	}
	accounts, err := s.db.Read().LiveAccounts(r.Context(), app.ID)
	if err != nil {
		return page{}, err
	}
	v := appView{App: app, Created: when(app.CreatedAt), Scopes: scopeLabels(app.Scopes), Form: newAppForm(set)}
	now := s.now()
	for _, k := range keys {
		v.Keys = append(v.Keys, newKeyRow(k, now))
	}
	for _, a := range accounts {
		v.Accounts = append(v.Accounts, newAccountRow(a))
	}
	return portalPage(p, v), nil
}

// handleAppSettings saves an application's settings.
func (s *site) handleAppSettings(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	if err := form(w, r); err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	set, err := formSettings(r)
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.UpdateApplication(r.Context(), app.ID, set) })
	}
	if msg, status, ok := formError(err); ok {
		pg, err := s.appPage(r, p, app, set)
		if err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
		pg.Error = msg
		s.render(w, r, status, "portal_app", pg)
		return
	}
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	http.Redirect(w, r, "/portal/apps/"+app.ID+"?done=app_saved#settings", http.StatusSeeOther)
}

// formError is the message of a refusal to show on the form that was
// sent, in Thai and English, with its status; ok is false for anything
// that is not the sender's to fix (that is an error page).
func formError(err error) (msg string, status int, ok bool) {
	e, isErr := rental.AsError(err)
	if !isErr || request.StatusOf(err) >= 500 || e.Kind == rental.KindNotFound {
		return "", 0, false
	}
	th, known := thaiByCode[e.Code]
	if !known {
		th = thaiByParam[e.Param]
	}
	if th == "" {
		th = "ทำรายการนี้ไม่ได้"
	}
	return th + " · " + e.Message, request.StatusOf(err), true
}

// thaiByCode and thaiByParam say in Thai what a refusal is about; the
// English beside it is the domain's own message.
var (
	thaiByCode = map[string]string{
		"no_linked_account": "สร้างคีย์ live ได้หลังจากมีเจ้าของหอพักเชื่อมต่อบัญชีกับแอปพลิเคชันนี้แล้วอย่างน้อยหนึ่งบัญชี",
		"invalid_state":     "คีย์นี้ถูกเพิกถอนหรือหมดอายุแล้ว",
	}
	thaiByParam = map[string]string{
		"name":          "ตรวจสอบชื่อ",
		"company":       "ตรวจสอบชื่อบริษัท",
		"description":   "ตรวจสอบคำอธิบาย",
		"scopes":        "ตรวจสอบสิทธิ์ (scopes) ที่เลือก",
		"redirect_uris": "ตรวจสอบ redirect URI",
		"expires":       "ตรวจสอบวันหมดอายุ",
		"account":       "ตรวจสอบบัญชีที่ผูกกับคีย์",
		"mode":          "เลือกโหมด test หรือ live",
	}
)

// --- Keys ---------------------------------------------------------------

// keyForm is the form of a new key, as shown or as sent.
type keyForm struct {
	App      *rental.Application
	Name     string
	Mode     rental.Mode
	Scopes   []scopeChoice
	Expires  string
	Account  string
	Accounts []accountRow // active links, to bind a live key to
	Today    string
}

func (s *site) keyForm(r *http.Request, app *rental.Application) (keyForm, error) {
	accounts, err := s.db.Read().LiveAccounts(r.Context(), app.ID)
	if err != nil {
		return keyForm{}, err
	}
	f := keyForm{App: app, Mode: rental.ModeTest, Scopes: scopeChoices(app.Scopes, app.Scopes), Today: s.now().In(rental.Bangkok).Format(time.DateOnly)}
	for _, a := range accounts {
		if !a.Revoked {
			f.Accounts = append(f.Accounts, newAccountRow(a))
		}
	}
	return f, nil
}

// handleNewKey shows the form of a new key.
func (s *site) handleNewKey(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	f, err := s.keyForm(r, app)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	s.render(w, r, http.StatusOK, "keynew", portalPage(p, f))
}

// keySecret is the page that shows a new key's secret, once; a second
// look finds it gone (Secret empty).
type keySecret struct {
	App    *rental.Application
	Key    keyRow
	Secret string
	// Old is the key a rotation replaced, with its new end.
	Old       *keyRow
	PublicURL string
}

// newSecret mints a key of the mode (rental.MintKey) under the server
// secret.
func (s *site) newSecret(mode rental.Mode) (rental.MintedKey, error) {
	if s.secret == nil {
		return rental.MintedKey{}, errors.New("web: no server secret to fingerprint keys with")
	}
	return rental.MintKey(mode, s.secret.Fingerprint), nil
}

// keySecretPath is the page that shows a key's secret once.
func keySecretPath(appID, keyID string) string {
	return "/portal/apps/" + appID + "/keys/" + keyID + "/secret"
}

// handleCreateKey makes a key by the rules of keys and sends the browser
// to the page that shows its secret, once.
func (s *site) handleCreateKey(w http.ResponseWriter, r *http.Request, p *rental.Person, session string, app *rental.Application) {
	if err := form(w, r); err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	f, err := s.keyForm(r, app)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	pf := r.PostForm
	f.Name, f.Mode, f.Expires, f.Account = strings.TrimSpace(pf.Get("name")), rental.Mode(pf.Get("mode")), pf.Get("expires"), pf.Get("account")
	scopes, err := formScopes(pf["scope"])
	f.Scopes = scopeChoices(app.Scopes, scopes)
	if err == nil {
		err = rental.CheckKeyName(f.Name)
	}
	if err == nil {
		err = rental.CheckKeyAccountID(f.Account)
	}
	var expires *time.Time
	if err == nil {
		expires, err = rental.KeyExpiryDate(f.Expires, s.now())
	}
	var key *rental.APIKey
	var text string
	if err == nil {
		var minted rental.MintedKey
		if minted, err = s.newSecret(f.Mode); err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
		text = minted.Text
		err = s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
			key, err = tx.CreateAPIKey(r.Context(), store.NewKey{ApplicationID: app.ID, Name: f.Name, Mode: f.Mode, Scopes: scopes,
				AccountID: f.Account, ExpiresAt: expires}.Minted(minted))
			return err
		})
	}
	if rental.IsNotFound(err) { // a bound account that is not this application's
		err = rental.ErrKeyAccount
	}
	if msg, status, ok := formError(err); ok {
		pg := portalPage(p, f)
		pg.Error = msg
		s.render(w, r, status, "keynew", pg)
		return
	}
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	s.showOnce(w, r, session, key.ID, reveal{Secret: text}, keySecretPath(app.ID, key.ID))
}

// handleKeySecret shows a key made (or rotated) by this session with its
// secret, the one time, and for a successor the key it replaced with its
// new end; any later look says the secret was shown and is not kept (410),
// with the key's settings still.
func (s *site) handleKeySecret(w http.ResponseWriter, r *http.Request, p *rental.Person, session string, app *rental.Application) {
	k, err := appKey(r, s.db.Read(), app)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	now := s.now()
	v := keySecret{App: app, Key: newKeyRow(*k, now), PublicURL: s.publicURL}
	shown, ok := s.takeReveal(w, r, session, k.ID)
	if !ok {
		s.render(w, r, http.StatusGone, "keysecret", portalPage(p, v))
		return
	}
	v.Secret = shown.Secret
	if k.RotatedFrom != "" {
		old, err := s.db.Read().GetAPIKey(r.Context(), app.ID, k.RotatedFrom)
		if err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
		row := newKeyRow(*old, now)
		v.Old = &row
	}
	pg := portalPage(p, v)
	pg.Flash = done[r.URL.Query().Get("done")]
	s.render(w, r, http.StatusOK, "keysecret", pg)
}

// confirmation is the page that asks before a change that cannot be
// undone (or, for a rotation, that starts a clock).
type confirmation struct {
	Path             string // the last segment of its address
	TitleTH, TitleEN string
	TextTH, TextEN   string
	ButtonTH         string
	ButtonEN         string
	Danger           bool
}

var (
	rotateKey = confirmation{Path: "rotate", TitleTH: "หมุนเวียนคีย์", TitleEN: "Rotate the key",
		TextTH:   "จะสร้างคีย์ใหม่ที่ตั้งค่าเหมือนเดิม คีย์เดิมยังใช้ได้อีก 24 ชั่วโมง (หรือจนถึงวันหมดอายุเดิมถ้าเร็วกว่า) เพื่อให้เปลี่ยนคีย์ในระบบได้ทัน",
		TextEN:   "A new key with the same settings is made. The old key keeps working for 24 hours (or until its own earlier expiry), so your software can switch over.",
		ButtonTH: "หมุนเวียนคีย์", ButtonEN: "Rotate"}
	revokeKey = confirmation{Path: "revoke", TitleTH: "เพิกถอนคีย์", TitleEN: "Revoke the key",
		TextTH:   "คีย์จะใช้ไม่ได้ตั้งแต่คำขอถัดไป และย้อนกลับไม่ได้",
		TextEN:   "The key is refused from the next request on. This cannot be undone.",
		ButtonTH: "เพิกถอน", ButtonEN: "Revoke", Danger: true}
)

// confirmView is a page that asks before a change.
type confirmView struct {
	App    *rental.Application
	Action confirmation
	Key    *keyRow
	// Account is the link to end, for a disconnection.
	Account *accountRow
	Post    string
}

// appKey loads a key of the application from the path.
func appKey(r *http.Request, q *store.Queries, app *rental.Application) (*rental.APIKey, error) {
	id, err := pathID(r, "key_id", "key")
	if err != nil {
		return nil, err
	}
	return q.GetAPIKey(r.Context(), app.ID, id)
}

// handleConfirmKey asks before a rotation or a revocation.
func (s *site) handleConfirmKey(a confirmation) func(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	return func(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
		k, err := appKey(r, s.db.Read(), app)
		if err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
		row := newKeyRow(*k, s.now())
		s.render(w, r, http.StatusOK, "confirm", portalPage(p, confirmView{App: app, Action: a, Key: &row,
			Post: "/portal/apps/" + app.ID + "/keys/" + k.ID + "/" + a.Path}))
	}
}

// handleRotateKey makes the key's successor and sends the browser to the
// page that shows its secret once; the old key works 24 hours more.
func (s *site) handleRotateKey(w http.ResponseWriter, r *http.Request, _ *rental.Person, session string, app *rental.Application) {
	var key *rental.APIKey
	var text string
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		k, err := appKey(r, &tx.Queries, app)
		if err != nil {
			return err
		}
		var minted rental.MintedKey
		if minted, err = s.newSecret(k.Mode); err != nil {
			return err
		}
		text = minted.Text
		key, err = tx.RotateAPIKey(r.Context(), k.ID, minted.Fingerprint, minted.Prefix, minted.Last4)
		return err
	})
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	s.showOnce(w, r, session, key.ID, reveal{Secret: text}, keySecretPath(app.ID, key.ID))
}

// handleRevokeKey stops a key at once; revoking it again changes nothing.
func (s *site) handleRevokeKey(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		k, err := appKey(r, &tx.Queries, app)
		if err != nil || k.RevokedAt != nil {
			return err
		}
		return tx.RevokeAPIKey(r.Context(), k.ID)
	})
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	http.Redirect(w, r, "/portal/apps/"+app.ID+"?done=key_revoked#keys", http.StatusSeeOther)
}

// --- Linked accounts ----------------------------------------------------

var disconnect = confirmation{Path: "disconnect", TitleTH: "ยกเลิกการเชื่อมต่อบัญชี", TitleEN: "Disconnect the account",
	TextTH:   "ตั้งแต่คำขอถัดไป ทุกคีย์จะได้ 403 account_access_revoked สำหรับบัญชีนี้ ข้อมูลของเจ้าของหอพักยังอยู่ การเชื่อมต่อใหม่ต้องให้เจ้าของหอพักอนุมัติอีกครั้ง",
	TextEN:   "From the next request every key gets 403 account_access_revoked for this account. The landlord's data is kept; linking again needs the landlord's approval again.",
	ButtonTH: "ยกเลิกการเชื่อมต่อ", ButtonEN: "Disconnect", Danger: true}

// liveAccount loads a real landlord's account of the application from the
// path; the sandbox is not found (it is never disconnected).
func liveAccount(r *http.Request, q *store.Queries, app *rental.Application) (*rental.Account, error) {
	id, err := pathID(r, "account_id", "account")
	if err != nil {
		return nil, err
	}
	a, err := q.GetAccount(r.Context(), app.ID, id)
	if err == nil && a.Sandbox {
		err = rental.NotFound("account", id)
	}
	return a, err
}

// handleConfirmDisconnect asks before ending a link.
func (s *site) handleConfirmDisconnect(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	a, err := liveAccount(r, s.db.Read(), app)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	row := newAccountRow(*a)
	s.render(w, r, http.StatusOK, "confirm", portalPage(p, confirmView{App: app, Action: disconnect, Account: &row,
		Post: "/portal/apps/" + app.ID + "/accounts/" + a.ID + "/disconnect"}))
}

// handleUnlinkAccount ends a landlord's link to the application; ending an
// ended link changes nothing.
func (s *site) handleUnlinkAccount(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string, app *rental.Application) {
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		a, err := liveAccount(r, &tx.Queries, app)
		if err != nil || a.Revoked {
			return err
		}
		return tx.RevokeAccount(r.Context(), app.ID, a.ID)
	})
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	http.Redirect(w, r, "/portal/apps/"+app.ID+"?done=account_disconnected#accounts", http.StatusSeeOther)
}

// linkStateLife is how long a browser may take from "link an account" to
// the callback: the landlord signs in (or up) and reads the consent page
// (whose form is good for rental.ConsentValidity) on the way.
const linkStateLife = rental.ConsentValidity

// linkCookie names the cookie that ties the portal's callback to the
// browser that started the link. It has Path=/ so that, over https, it can
// carry the __Host- prefix: no sibling subdomain and no plain-http page can
// then plant or overwrite it (which a cookie scoped to /portal/callback
// could not prevent). It is HttpOnly, short-lived and cleared at the
// callback, so being sent to other pages of the site for a few minutes
// costs nothing.
func (s *site) linkCookie() string {
	if s.secure {
		return "__Host-rentapi_link_state"
	}
	return "rentapi_link_state"
}

func (s *site) setLinkCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.linkCookie(), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// handleStartLink begins the portal's link flow: a fresh random state,
// recorded with this developer's session and set in a cookie of this
// browser, and the consent page with the portal's own callback.
func (s *site) handleStartLink(w http.ResponseWriter, r *http.Request, _ *rental.Person, session string, app *rental.Application) {
	state, stateHash := identity.NewToken()
	if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.StartPortalLink(r.Context(), stateHash, session, app.ID) }); err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	s.setLinkCookie(w, state, int(linkStateLife.Seconds()))
	q := url.Values{"redirect_uri": {s.publicURL + "/portal/callback"}, "state": {state}}
	http.Redirect(w, r, "/connect/"+url.PathEscape(app.ID)+"?"+q.Encode(), http.StatusSeeOther)
}

// linkResult is the page the callback ends on.
type linkResult struct {
	App      *rental.Application
	Account  *accountRow
	Declined bool
}

// maxLinkParam bounds the code and state the callback reads: both are
// this service's own tokens, far shorter.
const maxLinkParam = 512

// handleLinkCallback finishes the portal's link flow. The code is
// exchanged only with the state that this browser's cookie holds and only
// by the developer's session that started the link; anything else (a
// replayed, expired or forged code, a state of another browser or session)
// links nothing and says so.
func (s *site) handleLinkCallback(w http.ResponseWriter, r *http.Request, p *rental.Person, session string) {
	q := r.URL.Query()
	state, code := q.Get("state"), q.Get("code")
	c, cerr := r.Cookie(s.linkCookie())
	s.setLinkCookie(w, "", -1) // one callback per start, whatever it brings
	if q.Get("error") == "access_denied" {
		s.render(w, r, http.StatusOK, "linked", portalPage(p, linkResult{Declined: true}))
		return
	}
	ok := cerr == nil && state != "" && code != "" && len(state) <= maxLinkParam && len(code) <= maxLinkParam &&
		subtle.ConstantTimeCompare([]byte(c.Value), []byte(state)) == 1
	var acct *rental.Account
	if ok {
		err := s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
			acct, err = tx.ExchangePortalCode(r.Context(), identity.HashToken(code), identity.HashToken(state), session)
			return err
		})
		if err != nil && !rental.IsNotFound(err) {
			s.fail(w, r, portalArea, err)
			return
		}
		ok = err == nil
	}
	if !ok {
		pg := portalPage(p, nil)
		pg.Status = http.StatusBadRequest
		pg.Detail = "เชื่อมต่อบัญชีไม่สำเร็จ และไม่มีบัญชีใดถูกเชื่อมต่อ: ลิงก์นี้ใช้ไปแล้ว หมดอายุ ไม่ได้เริ่มจากเบราว์เซอร์และเซสชันนี้ หรือไม่ถูกต้อง เริ่ม “เชื่อมต่อบัญชี” ใหม่จากหน้าแอปพลิเคชัน · " +
			"Nothing was linked: this link was used already, has expired, was not started in this browser and session, or is not valid. Start “Link an account” again from the application's page."
		s.render(w, r, http.StatusBadRequest, "error", pg)
		return
	}
	app, err := s.db.Read().GetApplication(r.Context(), acct.ApplicationID)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	row := newAccountRow(*acct)
	s.render(w, r, http.StatusOK, "linked", portalPage(p, linkResult{App: app, Account: &row}))
}
