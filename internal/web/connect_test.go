package web_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// clientCallback is the redirect URI the test application registers.
const clientCallback = "https://client.example.com/callback"

// connectEnv is the service over one engine with a developer's
// application that registered redirect URIs, ready for landlords to
// connect.
type connectEnv struct {
	t   *testing.T
	hs  *httptest.Server
	e   storetest.Engine
	sec *secret.Secret
	// f is the developer with the application landlords connect to.
	f storetest.Fixture
}

// newConnectEnv serves the API and the pages over the engine; the
// application asks for scopes and registers the redirect URIs (the
// client's callback, one with a query, and any others given).
func newConnectEnv(t *testing.T, e storetest.Engine, scopes rental.Scopes, redirects ...string) *connectEnv {
	t.Helper()
	env := &connectEnv{t: t, e: e, sec: storetest.Secret(t)}
	env.hs = httptest.NewUnstartedServer(nil)
	t.Cleanup(env.hs.Close)
	base := "http://" + env.hs.Listener.Addr().String()
	srv, err := api.NewServer(api.Config{DB: e.DB, Secret: env.sec, PublicURL: base})
	if err != nil {
		t.Fatal(err)
	}
	env.hs.Config.Handler = web.New(web.Config{DB: e.DB, PublicURL: base}, srv)
	env.hs.Start()
	env.f = storetest.NewFixture(t, e.DB, rental.PlanDeveloper)
	ctx := t.Context()
	err = e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
		env.f.App, err = tx.CreateApplication(ctx, store.ApplicationSpec{DeveloperID: env.f.Developer.ID, Name: "Baan Books", Company: "Baan Books Co., Ltd.",
			Scopes: scopes, RedirectURIs: append([]string{clientCallback, "https://client.example.com/cb?tenant=7"}, redirects...)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// landlord signs a new landlord up in a browser of their own.
func (env *connectEnv) landlord(name, email string) *browser {
	env.t.Helper()
	b := newBrowser(env.t, env.hs.URL, nil)
	if p := b.post("/app/signup", url.Values{"name": {name}, "email": {email}, "password": {"long enough pw"}}); p.status != http.StatusSeeOther {
		env.t.Fatalf("landlord sign-up: %d %s", p.status, p.body)
	}
	return b
}

// connectPath is the connect link of the application.
func (env *connectEnv) connectPath(redirectURI, state string) string {
	return "/connect/" + env.f.App.ID + "?" + url.Values{"redirect_uri": {redirectURI}, "state": {state}}.Encode()
}

// setScopes changes what the application asks landlords for.
func (env *connectEnv) setScopes(scopes rental.Scopes) {
	env.t.Helper()
	ctx := env.t.Context()
	if err := env.e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationScopes(ctx, env.f.App.ID, scopes) }); err != nil {
		env.t.Fatal(err)
	}
	env.f.App.Scopes = scopes
}

// account is the application's account of a landlord's link.
func (env *connectEnv) account(id string) *rental.Account {
	env.t.Helper()
	a, err := env.e.DB.Read().GetAccount(env.t.Context(), env.f.App.ID, id)
	if err != nil {
		env.t.Fatalf("account %s: %v", id, err)
	}
	return a
}

// liveKey makes a live key of the application bound to the account,
// holding the scopes.
func (env *connectEnv) liveKey(accountID string, scopes rental.Scopes) string {
	return env.f.Key(env.t, env.e.DB, env.sec, store.NewKey{Mode: rental.ModeLive, AccountID: accountID, Scopes: scopes})
}

// apiGet calls the API with a key; it returns the status, the data and the
// error code of the answer.
func (env *connectEnv) apiGet(key, path string) (int, map[string]any, string) {
	env.t.Helper()
	r, _ := http.NewRequest("GET", env.hs.URL+path, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		env.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Data  json.RawMessage `json:"data"`
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		env.t.Fatalf("GET %s: %v", path, err)
	}
	var data map[string]any
	json.Unmarshal(out.Data, &data)
	return resp.StatusCode, data, out.Error.Code
}

var tokenField = regexp.MustCompile(`name="token" value="([^"]+)"`)

// consent opens a connect link signed in and returns the consent page and
// its form's token.
func (b *browser) consent(path string) (page, string) {
	b.t.Helper()
	p := b.get(path)
	m := tokenField.FindStringSubmatch(p.body)
	if p.status != http.StatusOK || m == nil {
		b.t.Fatalf("consent page %s: %d %s", path, p.status, p.body)
	}
	return p, m[1]
}

// answer sends the consent form of the application.
func (b *browser) answer(appID, token, decision string) page {
	return b.post("/connect/"+appID, url.Values{"token": {token}, "decision": {decision}})
}

// approve connects the landlord's browser to the application through the
// client's callback and returns the account ID it was sent back with.
func (env *connectEnv) approve(b *browser, state string) string {
	env.t.Helper()
	_, token := b.consent(env.connectPath(clientCallback, state))
	p := b.answer(env.f.App.ID, token, "approve")
	u, err := url.Parse(p.location)
	if p.status != http.StatusSeeOther || err != nil || !strings.HasPrefix(p.location, clientCallback+"?") || u.Query().Get("state") != state {
		env.t.Fatalf("approve: %d %q", p.status, p.location)
	}
	return u.Query().Get("account_id")
}

// refused checks a connect page refused: an error page of the status that
// redirects nowhere.
func refused(t *testing.T, what string, p page, status int) {
	t.Helper()
	if p.status != status || p.location != "" || !strings.Contains(p.body, "เชื่อมต่อไม่ได้") || !strings.Contains(p.body, "Nothing was connected") {
		t.Errorf("%s: %d, Location %q, want an error page %d:\n%.400s", what, p.status, p.location, status, p.body)
	}
}

// A connect link that is not right is an error page and never a redirect,
// signed in or not: an unknown application, a redirect URI not registered
// exactly (every near miss of a registered one), a missing, short or long
// state, a disabled application.
func TestConnectRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		env := newConnectEnv(t, e, rental.AllScopes)
		const state = "st4te-0123456789"
		bad := []struct {
			name, path string
			status     int
		}{
			{"unknown application", "/connect/app_nonexistent0000000000000?" + url.Values{"redirect_uri": {clientCallback}, "state": {state}}.Encode(), 404},
			{"unregistered", env.connectPath("https://evil.example/callback", state), 400},
			{"trailing slash", env.connectPath(clientCallback+"/", state), 400},
			{"other port", env.connectPath("https://client.example.com:8443/callback", state), 400},
			{"other case", env.connectPath("https://Client.example.com/callback", state), 400},
			{"other case of the path", env.connectPath("https://client.example.com/Callback", state), 400},
			{"added query", env.connectPath(clientCallback+"?next=/x", state), 400},
			{"query of a registered one changed", env.connectPath("https://client.example.com/cb?tenant=8", state), 400},
			{"http for https", env.connectPath("http://client.example.com/callback", state), 400},
			{"the portal's callback of another host", env.connectPath("https://evil.example/portal/callback", state), 400},
			{"no redirect_uri", "/connect/" + env.f.App.ID + "?state=" + state, 400},
			{"no state", "/connect/" + env.f.App.ID + "?" + url.Values{"redirect_uri": {clientCallback}}.Encode(), 400},
			{"short state", env.connectPath(clientCallback, "1234567"), 400},
			{"long state", env.connectPath(clientCallback, strings.Repeat("s", 513)), 400},
			{"state with a space", env.connectPath(clientCallback, "state with space"), 400},
		}
		anon := newBrowser(t, env.hs.URL, nil)
		signedIn := env.landlord("Somchai", "somchai@example.com")
		for _, c := range bad {
			refused(t, c.name+" (signed out)", anon.get(c.path), c.status)
			refused(t, c.name+" (signed in)", signedIn.get(c.path), c.status)
		}
		ctx := t.Context()
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.SetApplicationDisabled(ctx, env.f.App.ID, true) }); err != nil {
			t.Fatal(err)
		}
		refused(t, "disabled application", signedIn.get(env.connectPath(clientCallback, state)), 403)
		if list, _ := e.DB.Read().Connections(ctx, landlordOf(t, e, "somchai@example.com")); len(list) != 0 {
			t.Fatalf("something was linked: %+v", list)
		}
	})
}

// landlordOf is the landlord ID of a signed-up landlord.
func landlordOf(t *testing.T, e storetest.Engine, email string) string {
	t.Helper()
	p, _, err := e.DB.Read().PersonByEmail(t.Context(), rental.PersonLandlord, email)
	if err != nil {
		t.Fatal(err)
	}
	return p.LandlordID
}

// A landlord follows a connect link: signed out, to sign-in (with a way to
// sign up) and back to the same link; the consent page shows the
// application, its company, each scope in plain words, the account and its
// counts, under a policy that lets the answer go to the redirect URI's
// origin. Approving returns to the exact redirect URI with account_id and
// the same state, and links the account with the scopes shown; the form
// works once, only from its session, only in its 30 minutes, and never
// cross-site. Denying returns access_denied. Linking again keeps the
// account ID and replaces the grant.
func TestConsent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		shown := rental.Scopes{rental.ScopePropertiesRead, rental.ScopeRoomsRead, rental.ScopeTenantsRead, rental.ScopeBillsRead}
		env := newConnectEnv(t, e, shown)
		const state = "xyz-STATE_0123456789~"
		link := env.connectPath(clientCallback, state)

		b := newBrowser(t, env.hs.URL, nil)
		p := b.get(link)
		if p.status != http.StatusSeeOther || p.location != "/app/signin?next="+url.QueryEscape(link) {
			t.Fatalf("signed out: %d %q", p.status, p.location)
		}
		signin := b.get(p.location)
		signup := regexp.MustCompile(`href="(/app/signup\?next=[^"]+)"`).FindStringSubmatch(signin.body)
		if signin.status != http.StatusOK || signup == nil {
			t.Fatalf("the sign-in page has no way to sign up:\n%s", signin.body)
		}
		if u, err := url.Parse(html.UnescapeString(signup[1])); err != nil || u.Query().Get("next") != link {
			t.Fatalf("sign-up link %q does not come back to the link", signup[1])
		}
		up := b.post("/app/signup", url.Values{"name": {"คุณสมชาย Somchai"}, "email": {"somchai@example.com"}, "password": {"long enough pw"}, "next": {link}})
		if up.status != http.StatusSeeOther || up.location != link {
			t.Fatalf("sign-up goes to %d %q, want the link", up.status, up.location)
		}

		cp, token := b.consent(link)
		for _, want := range []string{"Baan Books", "Baan Books Co., Ltd.", "คุณสมชาย Somchai", "See your properties", "ดูข้อมูลหอพักและอาคารของคุณ",
			"See your tenants (personal data)", "หอพัก 0 แห่ง", "0 properties, 0 rooms", "https://client.example.com"} {
			if !strings.Contains(cp.body, want) {
				t.Errorf("the consent page does not say %q", want)
			}
		}
		if strings.Contains(cp.body, "See tenants&#39; QR payments") || strings.Contains(cp.body, `class="tag new"`) {
			t.Error("the page shows a scope not asked for, or marks one new on a first link")
		}
		if csp := consentCSP(t, env, b, link); !strings.Contains(csp, "form-action 'self' https://client.example.com;") {
			t.Errorf("CSP %q", csp)
		}

		// Cross-site, and from another session, the form does nothing.
		if p := b.do("POST", "/connect/"+env.f.App.ID, url.Values{"token": {token}, "decision": {"approve"}}, "https://evil.example"); p.status != http.StatusForbidden || p.location != "" {
			t.Fatalf("cross-site: %d %q", p.status, p.location)
		}
		other := newBrowser(t, env.hs.URL, nil)
		other.post("/app/signin", url.Values{"email": {"somchai@example.com"}, "password": {"long enough pw"}})
		refused(t, "another session of the same landlord", other.answer(env.f.App.ID, token, "approve"), 400)
		refused(t, "signed out", newBrowser(t, env.hs.URL, nil).answer(env.f.App.ID, token, "approve"), 403)
		refused(t, "no decision", b.answer(env.f.App.ID, token, "maybe"), 400)
		refused(t, "another application's path", b.answer("app_someotherapplication0000", token, "approve"), 400)
		ll := landlordOf(t, e, "somchai@example.com")
		if _, err := e.DB.Read().LandlordAccount(t.Context(), env.f.App.ID, ll); !rental.IsNotFound(err) {
			t.Fatalf("linked before approval: %v", err)
		}

		// Approve: back to the exact URI, with the account and the state.
		_, token = b.consent(link)
		ok := b.answer(env.f.App.ID, token, "approve")
		u, _ := url.Parse(ok.location)
		acctID := u.Query().Get("account_id")
		want := clientCallback + "?" + url.Values{"account_id": {acctID}, "state": {state}}.Encode()
		if ok.status != http.StatusSeeOther || ok.location != want || !strings.HasPrefix(acctID, "acct_") {
			t.Fatalf("approve: %d %q", ok.status, ok.location)
		}
		if a := env.account(acctID); a.LandlordID != ll || a.Revoked || a.Granted.String() != shown.String() {
			t.Fatalf("linked %+v", a)
		}
		refused(t, "the form posted twice", b.answer(env.f.App.ID, token, "approve"), 400)
		refused(t, "the form posted twice, to deny", b.answer(env.f.App.ID, token, "deny"), 400)

		// Deny: access_denied with the state; the link stays as it was.
		_, token = b.consent(link)
		if p := b.answer(env.f.App.ID, token, "deny"); p.status != http.StatusSeeOther || p.location != clientCallback+"?error=access_denied&state="+url.QueryEscape(state) {
			t.Fatalf("deny: %d %q", p.status, p.location)
		}
		// An expired form.
		_, token = b.consent(link)
		e.Clock.Advance(rental.ConsentValidity)
		refused(t, "an expired form", b.answer(env.f.App.ID, token, "approve"), 400)

		// The registered URI's own query is kept; the answer is added to it.
		_, token = b.consent(env.connectPath("https://client.example.com/cb?tenant=7", state))
		if p := b.answer(env.f.App.ID, token, "deny"); p.location != "https://client.example.com/cb?tenant=7&error=access_denied&state="+url.QueryEscape(state) {
			t.Fatalf("deny to a URI with a query: %q", p.location)
		}

		// Relink after a disconnection: the same account, the grant replaced
		// by what the page shows now.
		if p := b.post("/app/connections/"+acctID+"/disconnect", url.Values{}); p.status != http.StatusSeeOther {
			t.Fatalf("disconnect: %d", p.status)
		}
		fewer := rental.Scopes{rental.ScopePropertiesRead, rental.ScopeMetersRead}
		env.setScopes(fewer)
		if again := env.approve(b, "second-state-0001"); again != acctID {
			t.Fatalf("relinked as %s, was %s", again, acctID)
		}
		if a := env.account(acctID); a.Revoked || a.Granted.String() != fewer.String() {
			t.Fatalf("relinked %+v", a)
		}
	})
}

// consentCSP is the Content-Security-Policy of the consent page.
func consentCSP(t *testing.T, env *connectEnv, b *browser, link string) string {
	t.Helper()
	r, _ := http.NewRequest("GET", env.hs.URL+link, nil)
	resp, err := b.c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.Header.Get("Content-Security-Policy")
}

// An application asks for one more scope: the landlord's grant stays as it
// was (a live key holding the scope gets 403 insufficient_scope) until the
// landlord approves again through a connect link, whose page marks the
// scope as new; then the call works, on the same account.
func TestScopeUpgrade(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		before := rental.Scopes{rental.ScopePropertiesRead, rental.ScopeBillsRead}
		env := newConnectEnv(t, e, before)
		b := env.landlord("Somchai", "somchai@example.com")
		acctID := env.approve(b, "first-state-123")

		after := rental.Scopes{rental.ScopePropertiesRead, rental.ScopeBillsRead, rental.ScopePaymentsRead}
		env.setScopes(after)
		key := env.liveKey(acctID, after)
		if status, _, code := env.apiGet(key, "/v1/payments"); status != http.StatusForbidden || code != "insufficient_scope" {
			t.Fatalf("payments before approval: %d %s", status, code)
		}
		if status, _, _ := env.apiGet(key, "/v1/bills"); status != http.StatusOK {
			t.Fatalf("bills: %d", status)
		}
		cp, token := b.consent(env.connectPath(clientCallback, "second-state-123"))
		news := regexp.MustCompile(`<li class="new"><span class="tag new">ใหม่ <span lang="en">new</span></span> ([^<]+) · <span lang="en">`).FindAllStringSubmatch(cp.body, -1)
		if len(news) != 1 || news[0][1] != "ดูการชำระเงินด้วย QR ของผู้เช่า (ข้อมูลการเงิน)" || !strings.Contains(cp.body, "Already connected") {
			t.Fatalf("new scopes marked: %v\n%s", news, cp.body)
		}
		p := b.answer(env.f.App.ID, token, "approve")
		if u, _ := url.Parse(p.location); u == nil || u.Query().Get("account_id") != acctID {
			t.Fatalf("approve again: %q", p.location)
		}
		if status, _, code := env.apiGet(key, "/v1/payments"); status != http.StatusOK {
			t.Fatalf("payments after approval: %d %s", status, code)
		}
	})
}

// The portal's own flow: its callback on this service is always allowed;
// approving leaves a single-use code for the developer's session that
// started it (and links nothing yet); an unknown state is an error page;
// denying returns access_denied to the portal.
func TestPortalConsent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		env := newConnectEnv(t, e, rental.AllScopes)
		ctx := t.Context()
		callback := env.hs.URL + "/portal/callback"
		state, stateHash := identity.NewToken()
		if err := e.DB.InTx(ctx, func(tx *store.Tx) error { return tx.StartPortalLink(ctx, stateHash, "developer-session", env.f.App.ID) }); err != nil {
			t.Fatal(err)
		}
		b := env.landlord("Somchai", "somchai@example.com")
		cp, token := b.consent(env.connectPath(callback, state))
		if !strings.Contains(cp.body, "developer portal") {
			t.Error("the page does not say the answer goes to the portal")
		}
		if csp := consentCSP(t, env, b, env.connectPath(callback, state)); !strings.Contains(csp, "form-action 'self' "+env.hs.URL+";") {
			t.Errorf("CSP %q", csp)
		}
		p := b.answer(env.f.App.ID, token, "approve")
		u, _ := url.Parse(p.location)
		code := u.Query().Get("code")
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, callback+"?") || u.Query().Get("state") != state || code == "" || u.Query().Has("account_id") {
			t.Fatalf("approve: %d %q", p.status, p.location)
		}
		ll := landlordOf(t, e, "somchai@example.com")
		if _, err := e.DB.Read().LandlordAccount(ctx, env.f.App.ID, ll); !rental.IsNotFound(err) {
			t.Fatalf("linked before the exchange: %v", err)
		}
		var acct *rental.Account
		err := e.DB.InTx(ctx, func(tx *store.Tx) (err error) {
			acct, err = tx.ExchangePortalCode(ctx, identity.HashToken(code), stateHash, "developer-session")
			return err
		})
		if err != nil || acct.LandlordID != ll || acct.Granted.String() != rental.AllScopes.String() {
			t.Fatalf("exchange: %+v %v", acct, err)
		}

		// The same state again (its code is issued) and a state never
		// started are refused on the page; nothing is sent to the portal.
		for _, s := range []string{state, "never-started-state"} {
			_, token = b.consent(env.connectPath(callback, s))
			refused(t, "portal state "+s, b.answer(env.f.App.ID, token, "approve"), 400)
		}
		_, token = b.consent(env.connectPath(callback, "any-portal-state"))
		if p := b.answer(env.f.App.ID, token, "deny"); p.location != callback+"?error=access_denied&state=any-portal-state" {
			t.Fatalf("deny: %q", p.location)
		}
	})
}

// The consent page of an application asking for every scope groups them
// by resource, each group saying how far it goes, and keeps every scope's
// own words; the decision is one block at the end of the form, which the
// stylesheet keeps at the bottom of the screen.
func TestConsentGroupsScopes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		env := newConnectEnv(t, e, rental.AllScopes)
		b := env.landlord("Somchai", "somchai@example.com")
		cp, _ := b.consent(env.connectPath(clientCallback, "grouped-state-1"))
		groups := regexp.MustCompile(`<h3>([^<]+) <span lang="en">([^<]+)</span> <span class="tag access">([^<]+) <span lang="en">([^<]+)</span></span></h3>`).FindAllStringSubmatch(cp.body, -1)
		var got []string
		for _, g := range groups {
			got = append(got, g[2]+": "+g[4])
		}
		want := []string{"Properties: read and write", "Rooms: read and write", "Tenants: read and write", "Meters: read and write", "Bills: read and write",
			"Payments: read and write", "Messages to tenants: read and write", "Event notices (webhooks): write"}
		if strings.Join(got, "; ") != strings.Join(want, "; ") {
			t.Fatalf("groups %q", got)
		}
		for _, sc := range rental.AllScopes {
			th, en := web.ScopeText(sc)
			if !strings.Contains(cp.body, html.EscapeString(th)+` · <span lang="en">`+html.EscapeString(en)+`</span>`) {
				t.Errorf("the page leaves out what %s allows", sc)
			}
		}
		if !regexp.MustCompile(`(?s)<div class="decide row">\s*<button name="decision" value="approve">.*<button name="decision" value="deny" class="secondary">.*</div>\s*</form>`).MatchString(cp.body) {
			t.Errorf("the decision is not one block at the end of the form:\n%s", cp.body)
		}

		// Fewer scopes: read only, and write only.
		env.setScopes(rental.Scopes{rental.ScopePropertiesRead, rental.ScopeBillsWrite})
		cp, _ = b.consent(env.connectPath(clientCallback, "grouped-state-2"))
		if !strings.Contains(cp.body, `Properties</span> <span class="tag access">ดูอย่างเดียว <span lang="en">read only</span>`) ||
			!strings.Contains(cp.body, `Bills</span> <span class="tag access">แก้ไข <span lang="en">write</span>`) || strings.Contains(cp.body, "Rooms") {
			t.Fatalf("two scopes:\n%s", cp.body)
		}
	})
}
