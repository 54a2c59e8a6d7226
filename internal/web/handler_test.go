package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"rentapi/internal/api"
	"rentapi/internal/store/storetest"
	"rentapi/internal/web"
)

// Without the server secret that seals signing secrets the webhook pages
// are none: each is the portal's not-found page, the same page as an
// unknown path of the portal, for a visitor signed out (who is not asked
// to sign in first) and for a developer signed in; the rest of the portal
// is served as ever.
func TestWebhookPagesNeedTheSecret(t *testing.T) {
	t.Parallel()
	e := storetest.SQLite(t)
	hs := httptest.NewUnstartedServer(nil)
	t.Cleanup(hs.Close)
	base := "http://" + hs.Listener.Addr().String()
	srv, err := api.NewServer(api.Config{DB: e.DB, Secret: storetest.Secret(t), PublicURL: base})
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = web.New(web.Config{DB: e.DB, PublicURL: base}, srv)
	hs.Start()

	b := newBrowser(t, hs.URL, hs.Client().Transport)
	unknown := b.get("/portal/no-such-page")
	if unknown.status != http.StatusNotFound {
		t.Fatalf("unknown page: %d", unknown.status)
	}
	const app = "/portal/apps/app_000000000000000000000000"
	paths := []string{app + "/webhooks", app + "/webhooks/test", app + "/webhooks/live/new",
		app + "/webhooks/test/whe_000000000000000000000000", app + "/sandbox/reset"}
	for _, p := range paths {
		if got := b.get(p); got.status != http.StatusNotFound || got.body != unknown.body {
			t.Errorf("signed out, GET %s: %d %q, want the portal's 404 page", p, got.status, got.location)
		}
	}
	signup := b.post("/portal/signup", url.Values{"name": {"Dev"}, "email": {"dev@example.com"}, "password": {"long enough pw"}})
	if signup.status != http.StatusSeeOther {
		t.Fatalf("sign-up: %+v", signup)
	}
	for _, p := range paths {
		if got := b.get(p); got.status != http.StatusNotFound {
			t.Errorf("signed in, GET %s: %d, want 404", p, got.status)
		}
		if got := b.post(p, url.Values{}); got.status != http.StatusNotFound {
			t.Errorf("signed in, POST %s: %d, want 404", p, got.status)
		}
	}
	if home := b.get("/portal"); home.status != http.StatusOK {
		t.Errorf("the portal's home: %d", home.status)
	}
}
