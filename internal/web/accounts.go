package web

import (
	"crypto/subtle"
	"net/http"
	"net/url"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

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

// disconnect is the confirmation of ending a landlord's link.
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
func (s *site) handleConfirmDisconnect(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, app := v.person, v.app
	a, err := liveAccount(r, s.db.Read(), app)
	if err != nil {
		return err
	}
	row := newAccountRow(*a)
	return s.render(w, r, http.StatusOK, "confirm", portalPage(p, confirmView{App: app, Action: disconnect, Account: &row,
		Post: "/portal/apps/" + app.ID + "/accounts/" + a.ID + "/disconnect"}))
}

// handleUnlinkAccount ends a landlord's link to the application; ending an
// ended link changes nothing.
func (s *site) handleUnlinkAccount(w http.ResponseWriter, r *http.Request, v *visit) error {
	app := v.app
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		a, err := liveAccount(r, &tx.Queries, app)
		if err != nil || a.Revoked {
			return err
		}
		return tx.RevokeAccount(r.Context(), app.ID, a.ID)
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/portal/apps/"+app.ID+"?done=account_disconnected#accounts", http.StatusSeeOther)
	return nil
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

// setLinkCookie sets (or, with maxAge -1, clears) the link's state
// cookie.
func (s *site) setLinkCookie(w http.ResponseWriter, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: s.linkCookie(), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// handleStartLink begins the portal's link flow: a fresh random state,
// recorded with this developer's session and set in a cookie of this
// browser, and the consent page with the portal's own callback.
func (s *site) handleStartLink(w http.ResponseWriter, r *http.Request, v *visit) error {
	session, app := v.session, v.app
	state, stateHash := identity.NewToken()
	if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.StartPortalLink(r.Context(), stateHash, session, app.ID) }); err != nil {
		return err
	}
	s.setLinkCookie(w, state, int(linkStateLife.Seconds()))
	q := url.Values{"redirect_uri": {s.publicURL + "/portal/callback"}, "state": {state}}
	http.Redirect(w, r, "/connect/"+url.PathEscape(app.ID)+"?"+q.Encode(), http.StatusSeeOther)
	return nil
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
func (s *site) handleLinkCallback(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, session := v.person, v.session
	q := r.URL.Query()
	state, code := q.Get("state"), q.Get("code")
	c, cerr := r.Cookie(s.linkCookie())
	s.setLinkCookie(w, "", -1) // one callback per start, whatever it brings
	if q.Get("error") == "access_denied" {
		return s.render(w, r, http.StatusOK, "linked", portalPage(p, linkResult{Declined: true}))
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
			return err
		}
		ok = err == nil
	}
	if !ok {
		pg := portalPage(p, nil)
		pg.Status = http.StatusBadRequest
		pg.Detail = "เชื่อมต่อบัญชีไม่สำเร็จ และไม่มีบัญชีใดถูกเชื่อมต่อ: ลิงก์นี้ใช้ไปแล้ว หมดอายุ ไม่ได้เริ่มจากเบราว์เซอร์และเซสชันนี้ หรือไม่ถูกต้อง เริ่ม “เชื่อมต่อบัญชี” ใหม่จากหน้าแอปพลิเคชัน · " +
			"Nothing was linked: this link was used already, has expired, was not started in this browser and session, or is not valid. Start “Link an account” again from the application's page."
		return s.render(w, r, http.StatusBadRequest, "error", pg)
	}
	app, err := s.db.Read().GetApplication(r.Context(), acct.ApplicationID)
	if err != nil {
		return err
	}
	row := newAccountRow(*acct)
	return s.render(w, r, http.StatusOK, "linked", portalPage(p, linkResult{App: app, Account: &row}))
}
