package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// The developer manages an application's webhook endpoints in the portal
// with the API's own rules and store methods (rental.EndpointChange for
// the settings, the store for the plan's limit and the sealed secrets,
// RecordTestEvent, Resend, ResetSandbox): a page and a request of the API
// cannot disagree. Every page is of one mode, named in the path
// (/portal/apps/{app_id}/webhooks/test or /live), as endpoints are.

// hooks is what every webhook page of an application knows.
type hooks struct {
	App  *rental.Application
	Mode rental.Mode
	// Base is the mode's list, the root of its pages' paths.
	Base string
}

// Live reports whether the pages are of live mode.
func (h hooks) Live() bool { return h.Mode == rental.ModeLive }

// AppPath is the application's page in the portal.
func (h hooks) AppPath() string { return "/portal/apps/" + h.App.ID }

// endpointForm is the create or edit form, as typed.
type endpointForm struct {
	URL string
	// Events are the ticked boxes: "*" (every type) or types.
	Events      []string
	Description string
}

// Has reports whether the form has the box of event type t ticked.
func (f endpointForm) Has(t string) bool { return slices.Contains(f.Events, t) }

// formOf shows an endpoint's settings in the form.
func formOf(e *rental.WebhookEndpoint) endpointForm {
	f := endpointForm{URL: e.URL, Events: e.EnabledEvents}
	if e.Description != nil {
		f.Description = *e.Description
	}
	return f
}

// change is the change the API's body with the form's values would make,
// judged by the same rules ("*" ticked with types is refused, as the API
// refuses it); an empty description is none.
func (f endpointForm) change() rental.EndpointChange {
	ch := rental.EndpointChange{URL: rental.Of(f.URL), EnabledEvents: rental.Of(append([]string{}, f.Events...)), Description: rental.Of(f.Description)}
	if f.Description == "" {
		ch.Description.Null = true
	}
	return ch
}

// readEndpointForm reads the posted settings, bounded like the API's body.
func readEndpointForm(r *http.Request) endpointForm {
	f := endpointForm{URL: strings.TrimSpace(r.PostForm.Get("url")), Description: strings.TrimSpace(r.PostForm.Get("description"))}
	for _, t := range r.PostForm["enabled_events"] {
		if len(f.Events) <= len(rental.EventTypes) && !slices.Contains(f.Events, t) {
			f.Events = append(f.Events, t)
		}
	}
	return f
}

// eventChoices are the boxes of the form: every type, then each one.
var eventChoices = append([]string{"*"}, rental.EventTypes...)

// when writes a time as it is in Thailand, where the service's landlords
// are.
func when(t rental.Time) string { return t.In(rental.Bangkok).Format("2006-01-02 15:04") }

// excerpt is the start of a receiver's answer, enough to see what it said.
func excerpt(s string) string {
	const n = 300
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// endpointsView is the list page.
type endpointsView struct {
	hooks
	Endpoints []rental.WebhookEndpoint
}

// endpointView is an endpoint's page: its settings, the edit form and the
// actions.
type endpointView struct {
	hooks
	Endpoint *rental.WebhookEndpoint
	Form     endpointForm
	Types    []string
	// Accounts are the landlords a live test event can be sent as.
	Accounts []rental.Account
}

// newEndpointView is the create form.
type newEndpointView struct {
	hooks
	Form  endpointForm
	Types []string
}

// secretView shows a signing secret once, after a creation or rotation;
// a second look finds it gone (the endpoint's Secret empty).
type secretView struct {
	hooks
	Endpoint *rental.WebhookEndpoint
	Rotated  bool
	// OldUntil is when the old secret stops signing, after a rotation.
	OldUntil rental.Time
}

// deliveriesView is an endpoint's delivery log, newest first.
type deliveriesView struct {
	hooks
	Endpoint   *rental.WebhookEndpoint
	Deliveries []rental.Delivery
	// Older is the query of the next page, empty on the last.
	Older string
}

// deliveriesPerPage is how many deliveries a page of the log shows.
const deliveriesPerPage = 20

// hookPage is a webhook page of the portal, with the message of the
// change that sent the browser to it.
func hookPage(r *http.Request, v *visit) page {
	return page{Area: portalArea, Person: v.person, Flash: done[r.URL.Query().Get("done")]}
}

// hookWords say in Thai what a refusal shown on an endpoint's form is
// about.
var hookWords = formWords{
	byCode: map[string]string{
		"invalid_url":        "ใช้ URL นี้ไม่ได้",
		"plan_limit_reached": "จำนวน endpoint ครบตามแพ็กเกจแล้ว",
	},
	other: "ข้อมูลไม่ถูกต้อง",
}

// handleWebhooksHome sends the webhooks of an application to its test mode.
func (s *site) handleWebhooksHome(w http.ResponseWriter, r *http.Request, v *visit) error {
	app := v.app
	http.Redirect(w, r, "/portal/apps/"+app.ID+"/webhooks/"+string(rental.ModeTest), http.StatusSeeOther)
	return nil
}

// handleEndpoints lists the mode's endpoints.
func (s *site) handleEndpoints(w http.ResponseWriter, r *http.Request, v *visit) error {
	return s.renderEndpoints(w, r, http.StatusOK, hookPage(r, v), v.hooks)
}

// renderEndpoints shows the list of the mode's endpoints.
func (s *site) renderEndpoints(w http.ResponseWriter, r *http.Request, status int, pg page, hk hooks) error {
	// A plan allows at most 100 endpoints in all: one page holds a mode's.
	list, _, err := s.db.Read().ListEndpoints(r.Context(), hk.App.ID, hk.Mode, store.Page{Limit: 100})
	if err != nil {
		return err
	}
	pg.Wide = true
	pg.Data = endpointsView{hooks: hk, Endpoints: list}
	return s.render(w, r, status, "webhooks", pg)
}

// handleNewEndpoint shows the create form.
func (s *site) handleNewEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk := hookPage(r, v), v.hooks
	pg.Data = newEndpointView{hooks: hk, Form: endpointForm{Events: []string{"*"}}, Types: eventChoices}
	return s.render(w, r, http.StatusOK, "webhook_new", pg)
}

// handleCreateEndpoint creates an endpoint and sends the browser to the
// page that shows its secret, once. A refusal (the URL guard, the plan's
// limit, a bad value) is shown on the form, which keeps what was typed.
func (s *site) handleCreateEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk := hookPage(r, v), v.hooks
	if err := form(w, r); err != nil {
		return err
	}
	f := readEndpointForm(r)
	var e *rental.WebhookEndpoint
	spec, err := f.change().Check(true, s.guard.CheckFunc(r.Context()))
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
			e, err = tx.CreateEndpoint(r.Context(), hk.App, hk.Mode, spec, s.secret)
			return err
		})
	}
	if msg, status, ok := formError(err, hookWords); ok {
		pg.Error = msg
		pg.Data = newEndpointView{hooks: hk, Form: f, Types: eventChoices}
		return s.render(w, r, status, "webhook_new", pg)
	}
	if err != nil {
		return err
	}
	return s.showOnce(w, r, v.session, e.ID, reveal{Secret: e.Secret}, hk.Base+"/"+e.ID+"/secret")
}

// handleEndpointSecret shows an endpoint's signing secret made (or
// rotated) by this session, the one time; any later look says it was
// shown (410).
func (s *site) handleEndpointSecret(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk, e := hookPage(r, v), v.hooks, v.endpoint
	shown, ok := s.takeReveal(w, r, v.session, e.ID)
	e.Secret = shown.Secret
	sv := secretView{hooks: hk, Endpoint: e}
	if shown.OldUntil != 0 {
		sv.Rotated, sv.OldUntil = true, rental.UnixMilli(shown.OldUntil)
	}
	pg.Data = sv
	status := http.StatusOK
	if !ok {
		status = http.StatusGone
	}
	return s.render(w, r, status, "webhook_secret", pg)
}

// handleEndpoint shows an endpoint with its edit form and actions.
func (s *site) handleEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk, e := hookPage(r, v), v.hooks, v.endpoint
	return s.renderEndpoint(w, r, http.StatusOK, pg, hk, e, formOf(e))
}

// renderEndpoint shows an endpoint's page with the form f.
func (s *site) renderEndpoint(w http.ResponseWriter, r *http.Request, status int, pg page, hk hooks, e *rental.WebhookEndpoint, f endpointForm) error {
	ev := endpointView{hooks: hk, Endpoint: e, Form: f, Types: eventChoices}
	if hk.Live() {
		all, err := s.db.Read().LiveAccounts(r.Context(), hk.App.ID)
		if err != nil {
			return err
		}
		for _, a := range all {
			if !a.Revoked {
				ev.Accounts = append(ev.Accounts, a)
			}
		}
	}
	pg.Wide = true
	pg.Data = ev
	return s.render(w, r, status, "webhook", pg)
}

// handleUpdateEndpoint saves the edit form: URL, events and description.
func (s *site) handleUpdateEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk, e := hookPage(r, v), v.hooks, v.endpoint
	if err := form(w, r); err != nil {
		return err
	}
	f := readEndpointForm(r)
	spec, err := f.change().Check(false, s.guard.CheckFunc(r.Context()))
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) error {
			_, err := tx.UpdateEndpoint(r.Context(), hk.App.ID, hk.Mode, e.ID, spec)
			return err
		})
	}
	if msg, status, ok := formError(err, hookWords); ok {
		pg.Error = msg
		return s.renderEndpoint(w, r, status, pg, hk, e, f)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, hk.Base+"/"+e.ID+"?done=saved", http.StatusSeeOther)
	return nil
}

// handleEndpointStatus enables or disables an endpoint.
func (s *site) handleEndpointStatus(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk, e := v.hooks, v.endpoint
	if err := form(w, r); err != nil {
		return err
	}
	status := r.PostForm.Get("status")
	spec, err := rental.EndpointChange{Status: rental.Of(status)}.Check(false, s.guard.CheckFunc(r.Context()))
	spec.DisabledReason = "Disabled in the developer portal."
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) error {
			_, err := tx.UpdateEndpoint(r.Context(), hk.App.ID, hk.Mode, e.ID, spec)
			return err
		})
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, hk.Base+"/"+e.ID+"?done="+status, http.StatusSeeOther)
	return nil
}

// handleRotateSecret gives the endpoint a new secret and sends the browser
// to the page that shows it, once; the old one keeps signing for
// rental.SecretOverlap.
func (s *site) handleRotateSecret(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk, e := v.hooks, v.endpoint
	var rotated *rental.WebhookEndpoint
	err := s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
		rotated, err = tx.RotateSecret(r.Context(), hk.App.ID, hk.Mode, e.ID, s.secret)
		return err
	})
	if err != nil {
		return err
	}
	return s.showOnce(w, r, v.session, e.ID, reveal{Secret: rotated.Secret, OldUntil: rotated.UpdatedAt.Add(rental.SecretOverlap).UnixMilli()}, hk.Base+"/"+e.ID+"/secret")
}

// handleTestEvent sends a webhook.test event to the endpoint, as the API's
// POST /test does: from the sandbox in test mode, from the linked account
// chosen in live mode.
func (s *site) handleTestEvent(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk, e := v.hooks, v.endpoint
	if err := form(w, r); err != nil {
		return err
	}
	if err := e.CheckSendable(); err != nil {
		return err
	}
	acctID := hk.App.SandboxAccountID
	if hk.Live() {
		acctID = r.PostForm.Get("account")
	}
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		acct, err := tx.GetAccount(r.Context(), hk.App.ID, acctID)
		if err == nil {
			err = e.CheckTestEvent(acct)
		}
		if err != nil {
			return err
		}
		_, err = tx.RecordTestEvent(r.Context(), acct, e)
		return err
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, hk.Base+"/"+e.ID+"/deliveries?done=test", http.StatusSeeOther)
	return nil
}

// handleDeletePage asks before deleting an endpoint.
func (s *site) handleDeletePage(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk, e := hookPage(r, v), v.hooks, v.endpoint
	pg.Data = endpointView{hooks: hk, Endpoint: e}
	return s.render(w, r, http.StatusOK, "webhook_delete", pg)
}

// handleDeleteEndpoint deletes an endpoint and its delivery log.
func (s *site) handleDeleteEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk, e := v.hooks, v.endpoint
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		return tx.DeleteEndpoint(r.Context(), hk.App.ID, hk.Mode, e.ID)
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, hk.Base+"?done=deleted", http.StatusSeeOther)
	return nil
}

// handleDeliveries shows an endpoint's delivery log, newest first, a page
// at a time; ?older= names the last delivery of the page before.
func (s *site) handleDeliveries(w http.ResponseWriter, r *http.Request, v *visit) error {
	pg, hk, e := hookPage(r, v), v.hooks, v.endpoint
	p := store.Page{Limit: deliveriesPerPage}
	if q := r.URL.Query(); q.Has("older") {
		ms, id, err := rental.ParsePosition("older", q.Get("older"))
		if err != nil {
			return err
		}
		p.After = &store.Position{CreatedAt: ms, ID: id}
	}
	list, more, err := s.db.Read().ListDeliveries(r.Context(), hk.App.ID, hk.Mode, e.ID, store.DeliveryFilter{}, p)
	if err != nil {
		return err
	}
	dv := deliveriesView{hooks: hk, Endpoint: e, Deliveries: list}
	if more {
		last := list[len(list)-1]
		dv.Older = "?older=" + url.QueryEscape(strconv.FormatInt(last.CreatedAt.UnixMilli(), 10)+"."+last.ID)
	}
	pg.Wide = true
	pg.Data = dv
	return s.render(w, r, http.StatusOK, "deliveries", pg)
}

// handleResend sends a delivery of the endpoint again, as the API's resend
// does: at once, as a new run of attempts with the same event and body.
func (s *site) handleResend(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk, e := v.hooks, v.endpoint
	if err := e.CheckSendable(); err != nil {
		return err
	}
	id := r.PathValue("delivery_id")
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		d, err := tx.GetDelivery(r.Context(), hk.App.ID, hk.Mode, id)
		if err == nil && d.EndpointID != e.ID {
			err = rental.NotFound("webhook_delivery", id)
		}
		if err != nil {
			return err
		}
		_, err = tx.Resend(r.Context(), hk.App.ID, hk.Mode, id)
		return err
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, hk.Base+"/"+e.ID+"/deliveries?done=resent", http.StatusSeeOther)
	return nil
}

// handleSandboxReset asks before resetting the application's sandbox (GET)
// and resets it (POST), as the API's test helper does: every change to the
// sandbox and its events are deleted, and the sample data put back.
func (s *site) handleSandboxReset(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, app := v.person, v.app
	hk := hooks{App: app, Mode: rental.ModeTest, Base: "/portal/apps/" + app.ID + "/webhooks/" + string(rental.ModeTest)}
	if r.Method != http.MethodPost { // GET and HEAD ask; only a POST resets
		return s.render(w, r, http.StatusOK, "sandbox_reset", page{Area: portalArea, Person: p, Data: hk})
	}
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		acct, err := tx.GetAccount(r.Context(), app.ID, app.SandboxAccountID)
		if err != nil {
			return err
		}
		return tx.ResetSandbox(r.Context(), acct)
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, hk.Base+"?done=reset", http.StatusSeeOther)
	return nil
}
