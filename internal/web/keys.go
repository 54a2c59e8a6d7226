package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

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

// newKeyRow lists a key as it is at now.
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

// keyForm is the new key form of the application, with its linked
// accounts to bind a live key to.
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
func (s *site) handleNewKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, app := v.person, v.app
	f, err := s.keyForm(r, app)
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "keynew", portalPage(p, f))
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
	// Quickstart is the docs' month with a new test key filled in.
	Quickstart *quickstart
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
func (s *site) handleCreateKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, session, app := v.person, v.session, v.app
	if err := form(w, r); err != nil {
		return err
	}
	f, err := s.keyForm(r, app)
	if err != nil {
		return err
	}
	pf := r.PostForm
	f.Name, f.Mode, f.Expires, f.Account = strings.TrimSpace(pf.Get("name")), rental.Mode(pf.Get("mode")), pf.Get("expires"), pf.Get("account")
	scopes, err := rental.ParseScopeChoices(pf["scope"])
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
			return err
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
	if msg, status, ok := formError(err, portalWords); ok {
		pg := portalPage(p, f)
		pg.Error = msg
		return s.render(w, r, status, "keynew", pg)
	}
	if err != nil {
		return err
	}
	return s.showOnce(w, r, session, key.ID, reveal{Secret: text}, keySecretPath(app.ID, key.ID))
}

// handleKeySecret shows a key made (or rotated) by this session with its
// secret, the one time, and for a successor the key it replaced with its
// new end; any later look says the secret was shown and is not kept (410),
// with the key's settings still.
func (s *site) handleKeySecret(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, session, app := v.person, v.session, v.app
	k, err := appKey(r, s.db.Read(), app)
	if err != nil {
		return err
	}
	now := s.now()
	ks := keySecret{App: app, Key: newKeyRow(*k, now), PublicURL: s.publicURL}
	shown, ok := s.takeReveal(w, r, session, k.ID)
	if !ok {
		return s.render(w, r, http.StatusGone, "keysecret", portalPage(p, ks))
	}
	ks.Secret = shown.Secret
	if k.Mode == rental.ModeTest {
		q := s.docs.quickstart
		q.Base, q.Key = s.quickstartBase(), shown.Secret
		ks.Quickstart = &q
	}
	if k.RotatedFrom != "" {
		old, err := s.db.Read().GetAPIKey(r.Context(), app.ID, k.RotatedFrom)
		if err != nil {
			return err
		}
		row := newKeyRow(*old, now)
		ks.Old = &row
	}
	pg := portalPage(p, ks)
	pg.Flash = done[r.URL.Query().Get("done")]
	return s.render(w, r, http.StatusOK, "keysecret", pg)
}

// rotateKey and revokeKey are the confirmations of a key's rotation and
// revocation.
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

// appKey loads a key of the application from the path.
func appKey(r *http.Request, q *store.Queries, app *rental.Application) (*rental.APIKey, error) {
	id, err := pathID(r, "key_id", "key")
	if err != nil {
		return nil, err
	}
	return q.GetAPIKey(r.Context(), app.ID, id)
}

// handleConfirmKey asks before a rotation or a revocation.
func (s *site) handleConfirmKey(a confirmation) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		k, err := appKey(r, s.db.Read(), v.app)
		if err != nil {
			return err
		}
		row := newKeyRow(*k, s.now())
		return s.render(w, r, http.StatusOK, "confirm", portalPage(v.person, confirmView{App: v.app, Action: a, Key: &row,
			Post: "/portal/apps/" + v.app.ID + "/keys/" + k.ID + "/" + a.Path}))
	}
}

// handleRotateKey makes the key's successor and sends the browser to the
// page that shows its secret once; the old key works 24 hours more.
func (s *site) handleRotateKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	session, app := v.session, v.app
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
		return err
	}
	return s.showOnce(w, r, session, key.ID, reveal{Secret: text}, keySecretPath(app.ID, key.ID))
}

// handleRevokeKey stops a key at once; revoking it again changes nothing.
func (s *site) handleRevokeKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	app := v.app
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		k, err := appKey(r, &tx.Queries, app)
		if err != nil || k.RevokedAt != nil {
			return err
		}
		return tx.RevokeAPIKey(r.Context(), k.ID)
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/portal/apps/"+app.ID+"?done=key_revoked#keys", http.StatusSeeOther)
	return nil
}
