package rental

// Bounds of what a developer writes about an application.
const (
	maxCompanyLen     = 200
	maxDescriptionLen = 2000
)

// ApplicationSettings are what a developer decides about an application,
// when making it and after: its names (the company is what a landlord sees
// on the consent page), a description for the developer's own records, the
// scopes it asks landlords for, and where the connect flow may send
// browsers back.
type ApplicationSettings struct {
	Name         string
	Company      string
	Description  string
	Scopes       Scopes
	RedirectURIs []string
}

// Check is nil for settings an application may have: a name and a company
// of 1 to 200 characters, a description of at most 2000, at least one
// scope, and redirect URIs that CheckRedirectURIs accepts.
//
// Changing the scopes later needs no rule of its own: a request may use
// only what the key, the application and the landlord's grant all hold, so
// a scope removed here is refused from the next request on, and a scope
// added here is used only once a landlord approves it.
func (a ApplicationSettings) Check() error {
	if err := checkText("name", Of(a.Name), 1, MaxNameLen); err != nil {
		return err
	}
	if err := checkText("company", Of(a.Company), 1, maxCompanyLen); err != nil {
		return err
	}
	if err := checkLines("description", Of(a.Description), 0, maxDescriptionLen); err != nil {
		return err
	}
	if len(a.Scopes) == 0 {
		return Invalid("scopes", "Choose at least one scope for the application to ask landlords for.")
	}
	return CheckRedirectURIs(a.RedirectURIs)
}
