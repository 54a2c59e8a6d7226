package web

import (
	"net/http"
	"net/url"
	"strings"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// Why a connect link or a consent form is refused: each has its own
// explanation on the page (connect_error.html).
const (
	refuseUnknownApp = "unknown_application"
	refuseDisabled   = "application_disabled"
	refuseRedirect   = "redirect_uri"
	refuseState      = "state"
	refuseForm       = "form"
	refuseSignedOut  = "signed_out"
	refusePortal     = "portal_state"
)

// connectError is what the page of a refused connect link or consent form
// shows: why, in words for the landlord, and for the developer the rule
// that was broken.
type connectError struct {
	Reason string
	Detail string
}

// consentPage is what a landlord reads before approving: the application
// and its company, what it asks for grouped by resource (read, write, or
// both), each scope still in its own plain words (those the current grant
// lacks marked new), the landlord's own account, and where the answer goes.
type consentPage struct {
	App      *rental.Application
	Grants   []grantView
	Landlord *rental.Landlord
	Usage    capacityView
	// Connected says the application is linked now: approving replaces
	// its grant with what this page shows.
	Connected bool
	Portal    bool
	ReturnTo  string // the origin the answer goes back to
	Token     string
}

// connectLink is a connect link that may be shown: the application exists
// and is enabled, the redirect URI is one it registered, exactly (or the
// portal's own callback), and the state is usable.
type connectLink struct {
	app         *rental.Application
	redirectURI string
	state       string
	// portal marks the portal's own flow, whose answer is a code for the
	// developer's session rather than a link.
	portal bool
}

// refusal is a connect link or consent form that cannot go on: the status
// and reason of its page (fail shows it), and for the developer the rule
// it broke.
type refusal struct {
	status         int
	reason, detail string
}

func (e *refusal) Error() string { return "connect: " + e.reason + ": " + e.detail }

// HTTPStatus is the status of the refusal's page (request.StatusOf).
func (e *refusal) HTTPStatus() int { return e.status }

// checkLink checks the connect link of the request; a link that is not
// right is a *refusal.
func (s *site) checkLink(r *http.Request) (*connectLink, error) {
	app, err := s.db.Read().GetApplication(r.Context(), r.PathValue("application_id"))
	if rental.IsNotFound(err) {
		return nil, &refusal{http.StatusNotFound, refuseUnknownApp, "No application has the ID in this link."}
	}
	if err != nil {
		return nil, err
	}
	if app.Disabled {
		return nil, &refusal{http.StatusForbidden, refuseDisabled, "The application is disabled."}
	}
	q := r.URL.Query()
	l := &connectLink{app: app, redirectURI: q.Get("redirect_uri"), state: q.Get("state")}
	l.portal = s.publicURL != "" && l.redirectURI == s.publicURL+"/portal/callback"
	switch {
	case l.redirectURI == "":
		return nil, &refusal{http.StatusBadRequest, refuseRedirect, "The link has no redirect_uri."}
	case !l.portal && !rental.RedirectAllowed(app.RedirectURIs, l.redirectURI):
		return nil, &refusal{http.StatusBadRequest, refuseRedirect,
			"redirect_uri must be exactly one of the application's registered redirect URIs: the same scheme, host, port, path, case and query."}
	}
	if _, ok := rental.RedirectOrigin(l.redirectURI); !ok {
		return nil, &refusal{http.StatusBadRequest, refuseRedirect, "The redirect URI's host must be a domain name or an IPv4 address."}
	}
	if err := rental.CheckState(l.state); err != nil {
		return nil, &refusal{http.StatusBadRequest, refuseState, err.(*rental.Error).Message}
	}
	return l, nil
}

// handleConnect is a connect link opened. A link that is not right is a
// page saying why, never a redirect; a signed-out visitor signs in (or
// signs up) and comes back here; a landlord signed in sees the consent
// page, whose form carries a single-use token bound to this session.
func (s *site) handleConnect(w http.ResponseWriter, r *http.Request, v *visit) error {
	link, err := s.checkLink(r)
	if err != nil {
		return err
	}
	p := v.person
	if p == nil {
		http.Redirect(w, r, landlordArea.Base+"/signin"+nextQuery(r.URL.RequestURI()), http.StatusSeeOther)
		return nil
	}
	l, err := s.db.Read().Landlord(r.Context(), p.LandlordID)
	if err != nil {
		return err
	}
	app := link.app
	d := &consentPage{App: app, Landlord: l, Usage: newCapacity(l.Usage, l.Plan.Capacity()), Portal: link.portal}
	d.ReturnTo, _ = rental.RedirectOrigin(link.redirectURI)
	var fresh rental.Scopes
	switch acct, err := s.db.Read().LandlordAccount(r.Context(), app.ID, p.LandlordID); {
	case err == nil && !acct.Revoked:
		d.Connected, fresh = true, rental.NewScopes(app.Scopes, acct.Granted)
	case err != nil && !rental.IsNotFound(err):
		return err
	}
	d.Grants = grantViews(app.Scopes, fresh)
	token, hash := identity.NewToken()
	d.Token = token
	consent := store.Consent{ApplicationID: app.ID, LandlordID: p.LandlordID, RedirectURI: link.redirectURI, State: link.state, Scopes: app.Scopes, Portal: link.portal}
	if err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.ShowConsent(r.Context(), hash, v.session, consent) }); err != nil {
		return err
	}
	// Chrome applies form-action to where the form's answer redirects:
	// this page's form may go on to the redirect URI's origin.
	hd := w.Header()
	hd.Set("Content-Security-Policy", strings.Replace(hd.Get("Content-Security-Policy"), "form-action 'self'", "form-action 'self' "+d.ReturnTo, 1))
	return s.render(w, r, http.StatusOK, "consent", page{Area: landlordArea, Person: p, Data: d})
}

// handleConsent is the landlord's answer on the consent page: the form is
// taken once, from the session it was shown to, within its validity;
// anything else is a page saying so, with nothing linked. Approving links
// the account (or replaces its grant) with the scopes the page showed and
// returns to the redirect URI with account_id and state; in the portal's
// flow it leaves a single-use code for the developer's session instead.
// Denying returns error=access_denied with the state.
func (s *site) handleConsent(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	if p == nil {
		return &refusal{http.StatusForbidden, refuseSignedOut, ""}
	}
	if err := form(w, r); err != nil {
		return err
	}
	decision, token := r.PostForm.Get("decision"), r.PostForm.Get("token")
	if (decision != "approve" && decision != "deny") || token == "" || len(token) > 200 {
		return &refusal{http.StatusBadRequest, refuseForm, ""}
	}
	var target string
	reason := refuseForm
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		c, err := tx.TakeConsent(r.Context(), identity.HashToken(token), v.session)
		if err != nil {
			return err
		}
		if err := rental.CheckConsentAnswer(c.ApplicationID, c.LandlordID, r.PathValue("application_id"), p.LandlordID); err != nil {
			return err
		}
		answer := url.Values{"state": {c.State}}
		switch {
		case decision == "deny":
			answer.Set("error", "access_denied")
		case c.Portal:
			code, codeHash := identity.NewToken()
			if err := tx.IssuePortalCode(r.Context(), identity.HashToken(c.State), c.ApplicationID, p.LandlordID, c.Scopes, codeHash); err != nil {
				reason = refusePortal
				return err
			}
			answer.Set("code", code)
		default:
			acct, err := tx.LinkAccount(r.Context(), c.ApplicationID, p.LandlordID, c.Scopes)
			if err != nil {
				return err
			}
			answer.Set("account_id", acct.ID)
		}
		target, err = rental.ConnectReturn(c.RedirectURI, answer)
		return err
	})
	if rental.IsNotFound(err) {
		return &refusal{http.StatusBadRequest, reason, ""}
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil
}
