package web

import (
	"net/http"
	"strings"

	"rentapi/internal/rental"
)

// Every page route has one shape: a handler of a visit, which answers the
// request or returns the error that fail answers with its area's page; the
// guards before it (signed in, the developer's own application, …) load
// what the page needs into the visit, composed by pages the same way for
// every route, so a handler never checks who is asking on its own.

// visit is one request to a page and what its guards loaded for it.
type visit struct {
	// area is the part of the site the page belongs to: its look, and the
	// look of its error pages.
	area area
	// person is who is signed in to the area, and session their session's
	// hash (signedIn, or visitor when signing in is optional).
	person  *rental.Person
	session string
	// app is the signed-in developer's application of the path (ownApp).
	app *rental.Application
	// hooks are the webhook pages of the application in the path's mode
	// (hookMode), and endpoint the endpoint of the path (ownEndpoint).
	hooks    hooks
	endpoint *rental.WebhookEndpoint
}

// handler is the one shape of a page.
type handler func(w http.ResponseWriter, r *http.Request, v *visit) error

// guard runs before a handler: it loads into the visit what the handler
// needs and calls it, or answers in its place (a redirect to sign in, an
// error).
type guard func(next handler) handler

// pages returns what serves the pages of area behind guards, run in the
// order given; an error any of them returns is answered by fail, the one
// place that does.
func (s *site) pages(a area, guards ...guard) func(handler) http.Handler {
	return func(h handler) http.Handler {
		for i := len(guards) - 1; i >= 0; i-- {
			h = guards[i](h)
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			v := &visit{area: a}
			if err := h(w, r, v); err != nil {
				s.fail(w, r, v, err)
			}
		})
	}
}

// signedIn lets in a signed-in person of the area; anyone else is sent to
// sign in first, and back here afterwards (for a GET).
func (s *site) signedIn(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		p, session, err := s.person(r, v.area)
		if err != nil {
			return err
		}
		if p == nil {
			back := ""
			if r.Method == http.MethodGet {
				back = r.URL.RequestURI()
			}
			http.Redirect(w, r, v.area.Base+"/signin"+nextQuery(back), http.StatusSeeOther)
			return nil
		}
		v.person, v.session = p, session
		return next(w, r, v)
	}
}

// visitor lets in anyone, with the person signed in to the area if there
// is one: a page that decides itself what a signed-out visitor gets (the
// consent pages).
func (s *site) visitor(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		p, session, err := s.person(r, v.area)
		if err != nil {
			return err
		}
		v.person, v.session = p, session
		return next(w, r, v)
	}
}

// ownApp loads the application of the path's app_id when it is the
// signed-in developer's; any other is not found, exactly as one that does
// not exist, so application IDs reveal nothing. It follows signedIn.
func (s *site) ownApp(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		id, err := pathID(r, "app_id", "application")
		if err != nil {
			return err
		}
		app, err := s.db.Read().GetApplication(r.Context(), id)
		if err != nil {
			return err
		}
		if app.DeveloperID != v.person.DeveloperID {
			return rental.NotFound("application", id)
		}
		v.app = app
		return next(w, r, v)
	}
}

// sealing lets in only when the server secret that seals webhook signing
// secrets is there: without it the webhook pages are none, as any other
// unknown page of the area.
func (s *site) sealing(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		if s.secret == nil {
			return rental.NotFound("page", "")
		}
		return next(w, r, v)
	}
}

// hookMode sets up the webhook pages of the application in the path's
// mode (test or live); another mode is no page. It follows ownApp.
func (s *site) hookMode(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		mode := rental.Mode(r.PathValue("mode"))
		if mode != rental.ModeTest && mode != rental.ModeLive {
			return rental.NotFound("page", "")
		}
		v.hooks = hooks{App: v.app, Mode: mode, Base: "/portal/apps/" + v.app.ID + "/webhooks/" + string(mode)}
		return next(w, r, v)
	}
}

// ownEndpoint loads the endpoint of the path, of the application and
// mode; another's is not found. It follows hookMode.
func (s *site) ownEndpoint(next handler) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		e, err := s.db.Read().GetEndpoint(r.Context(), v.app.ID, v.hooks.Mode, r.PathValue("endpoint_id"))
		if err != nil {
			return err
		}
		v.endpoint = e
		return next(w, r, v)
	}
}

// notFound is the page of a path that is no page of its area.
func notFound(http.ResponseWriter, *http.Request, *visit) error {
	return rental.NotFound("page", "")
}

// nobodys is the page of a path that is nobody's, for browsers: the
// not-found page of the signed-in area the path is under, else the
// landing page's.
func nobodys(w http.ResponseWriter, r *http.Request, v *visit) error {
	v.area = homeArea
	for _, in := range []area{portalArea, landlordArea} {
		if r.URL.Path == in.Base || strings.HasPrefix(r.URL.Path, in.Base+"/") {
			v.area = in
		}
	}
	return rental.NotFound("page", "")
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
