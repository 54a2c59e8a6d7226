package web

import (
	"net/http"
	"strings"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// appRow is an application in the developer's list.
type appRow struct {
	ID, Name, Company, Created string
	Keys, Accounts             int
	Disabled                   bool
}

// handlePortalHome lists the developer's applications.
func (s *site) handlePortalHome(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	apps, err := s.db.Read().ApplicationsOf(r.Context(), p.DeveloperID, s.now())
	if err != nil {
		return err
	}
	rows := make([]appRow, 0, len(apps))
	for _, a := range apps {
		rows = append(rows, appRow{ID: a.App.ID, Name: a.App.Name, Company: a.App.Company, Created: when(a.App.CreatedAt),
			Keys: a.Keys, Accounts: a.Accounts, Disabled: a.App.Disabled})
	}
	return s.render(w, r, http.StatusOK, "portal", portalPage(p, rows))
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
	scopes, err := rental.ParseScopeChoices(f["scope"])
	set.Scopes = scopes
	if err == nil {
		err = set.Check()
	}
	return set, err
}

// handleNewApp shows the form of a new application, asking for the read
// scopes to begin with.
func (s *site) handleNewApp(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	reads := rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeBillsRead}
	return s.render(w, r, http.StatusOK, "appnew", portalPage(p, newAppForm(rental.ApplicationSettings{Scopes: reads})))
}

// firstKeyName names the test key a new application comes with.
const firstKeyName = "Test key"

// handleCreateApp makes the application with its sandbox and one test key
// of all the application's scopes, in one transaction, and sends the
// browser to the page that shows the key, once.
func (s *site) handleCreateApp(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, session := v.person, v.session
	if err := form(w, r); err != nil {
		return err
	}
	set, err := formSettings(r)
	var app *rental.Application
	var key *rental.APIKey
	var text string
	if err == nil {
		var minted rental.MintedKey
		if minted, err = s.newSecret(rental.ModeTest); err != nil {
			return err
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
	if msg, status, ok := formError(err, portalWords); ok {
		pg := portalPage(p, newAppForm(set))
		pg.Error = msg
		return s.render(w, r, status, "appnew", pg)
	}
	if err != nil {
		return err
	}
	return s.showOnce(w, r, session, key.ID, reveal{Secret: text}, keySecretPath(app.ID, key.ID)+"?done=app_created")
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
func (s *site) handleDeveloperApp(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, app := v.person, v.app
	pg, err := s.appPage(r, p, app, appSettings(app))
	if err != nil {
		return err
	}
	pg.Flash = done[r.URL.Query().Get("done")]
	return s.render(w, r, http.StatusOK, "portal_app", pg)
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
func (s *site) handleAppSettings(w http.ResponseWriter, r *http.Request, v *visit) error {
	p, app := v.person, v.app
	if err := form(w, r); err != nil {
		return err
	}
	set, err := formSettings(r)
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.UpdateApplication(r.Context(), app.ID, set) })
	}
	if msg, status, ok := formError(err, portalWords); ok {
		pg, err := s.appPage(r, p, app, set)
		if err != nil {
			return err
		}
		pg.Error = msg
		return s.render(w, r, status, "portal_app", pg)
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/portal/apps/"+app.ID+"?done=app_saved#settings", http.StatusSeeOther)
	return nil
}
