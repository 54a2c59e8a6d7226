package web

import (
	"net/http"

	"rentapi/internal/api"
	"rentapi/internal/rental"
	"rentapi/internal/request"
)

// routes registers every page of the service on one screen. The portal's
// and the app's pages are the signed-in person's (signedIn); a portal page
// of an application is its developer's (developerApp), and another
// developer's application is the same 404 page as one that does not exist.
// A change is a POST (protect's cross-origin check refuses one from another
// site); a change that cannot be undone is confirmed on a page of its own
// first, so nothing needs JavaScript. A POST that makes something answers
// with a redirect (POST-redirect-GET), so reloading the page it leads to
// makes nothing again; a secret made is shown once there (reveal.go). Each
// prefix ends in a catch-all: its unknown paths get its area's 404 page.
func (s *site) routes(mux *request.Mux, p *pages) {
	mux.Handle("GET /assets/site.css", http.FileServerFS(assets))

	// The landing page and the documentation.
	mux.HandleFunc("GET /{$}", s.handleHome)
	mux.HandleFunc("GET /docs", s.handleDoc("docs", s.docs.ref))
	mux.HandleFunc("GET "+api.ErrorDocsPath, s.handleDoc("docs_errors", s.docs.errors))
	mux.HandleFunc("GET /docs/webhooks", s.handleDoc("docs_webhooks", s.docs.webhooks))
	mux.HandleFunc("GET /docs/changelog", s.handleDoc("docs_changelog", s.docs.changelog))
	mux.HandleFunc("/docs/", s.notFound)

	// The tenant's payment page: the token in the path is its only
	// credential.
	mux.HandleFunc("GET /pay/{token}", p.handlePage)
	mux.HandleFunc("HEAD /pay/{token}", p.handleHead)
	mux.HandleFunc("GET /pay/{token}/{payment}", p.handleQR)
	mux.HandleFunc("GET /pay/receipt/{token}", p.handleReceipt)
	mux.HandleFunc("/pay/", func(w http.ResponseWriter, r *http.Request) { p.fail(w, r, http.StatusNotFound, nil) })

	// Signing in, up and out, in the portal and the app alike.
	for _, a := range []area{portalArea, landlordArea} {
		mux.HandleFunc("GET "+a.Base+"/signin", s.handleSignInPage(a))
		mux.HandleFunc("POST "+a.Base+"/signin", s.handleSignIn(a))
		mux.HandleFunc("GET "+a.Base+"/signup", s.handleSignUpPage(a))
		mux.HandleFunc("POST "+a.Base+"/signup", s.handleSignUp(a))
		mux.HandleFunc("POST "+a.Base+"/signout", s.handleSignOut(a))
		mux.HandleFunc("GET "+a.Base+"/password", s.handlePassword(a))
		mux.HandleFunc("POST "+a.Base+"/password", s.handlePassword(a))
		mux.HandleFunc(a.Base+"/", func(w http.ResponseWriter, r *http.Request) { s.fail(w, r, a, rental.NotFound("page", "")) })
	}

	// The landlord's app: plan, PromptPay receiver, connected
	// applications; and the consent pages of connect links.
	mux.HandleFunc("GET /app", s.signedIn(landlordArea, s.handleApp))
	mux.HandleFunc("POST /app/plan", s.signedIn(landlordArea, s.handlePlan))
	mux.HandleFunc("POST /app/promptpay", s.signedIn(landlordArea, s.handlePromptPay))
	mux.HandleFunc("GET /app/connections/{account_id}/disconnect", s.signedIn(landlordArea, s.handleDisconnectPage))
	mux.HandleFunc("POST /app/connections/{account_id}/disconnect", s.signedIn(landlordArea, s.handleDisconnect))
	mux.HandleFunc("GET /connect/{application_id}", s.handleConnect)
	mux.HandleFunc("POST /connect/{application_id}", s.handleConsent)
	mux.HandleFunc("/connect/", func(w http.ResponseWriter, r *http.Request) { s.fail(w, r, landlordArea, rental.NotFound("page", "")) })

	// The developer portal: applications, their keys and linked accounts.
	mux.HandleFunc("GET /portal", s.signedIn(portalArea, s.handlePortalHome))
	mux.HandleFunc("GET /portal/apps/new", s.signedIn(portalArea, s.handleNewApp))
	mux.HandleFunc("POST /portal/apps/new", s.signedIn(portalArea, s.handleCreateApp))
	mux.HandleFunc("GET /portal/apps/{app_id}", s.developerApp(s.handleDeveloperApp))
	mux.HandleFunc("POST /portal/apps/{app_id}/settings", s.developerApp(s.handleAppSettings))
	mux.HandleFunc("GET /portal/apps/{app_id}/keys/new", s.developerApp(s.handleNewKey))
	mux.HandleFunc("POST /portal/apps/{app_id}/keys", s.developerApp(s.handleCreateKey))
	mux.HandleFunc("GET /portal/apps/{app_id}/keys/{key_id}/secret", s.developerApp(s.handleKeySecret))
	mux.HandleFunc("GET /portal/apps/{app_id}/keys/{key_id}/rotate", s.developerApp(s.handleConfirmKey(rotateKey)))
	mux.HandleFunc("POST /portal/apps/{app_id}/keys/{key_id}/rotate", s.developerApp(s.handleRotateKey))
	mux.HandleFunc("GET /portal/apps/{app_id}/keys/{key_id}/revoke", s.developerApp(s.handleConfirmKey(revokeKey)))
	mux.HandleFunc("POST /portal/apps/{app_id}/keys/{key_id}/revoke", s.developerApp(s.handleRevokeKey))
	mux.HandleFunc("GET /portal/apps/{app_id}/accounts/{account_id}/disconnect", s.developerApp(s.handleConfirmDisconnect))
	mux.HandleFunc("POST /portal/apps/{app_id}/accounts/{account_id}/disconnect", s.developerApp(s.handleUnlinkAccount))
	mux.HandleFunc("POST /portal/apps/{app_id}/link", s.developerApp(s.handleStartLink))
	mux.HandleFunc("GET /portal/callback", s.signedIn(portalArea, s.handleLinkCallback))

	// The developer's own account: the plan (and its change), the usage
	// of a month, and the invoices, each printable.
	mux.HandleFunc("GET /portal/plan", s.signedIn(portalArea, s.handlePlanPage))
	mux.HandleFunc("POST /portal/plan", s.signedIn(portalArea, s.handleChangePlan))
	mux.HandleFunc("GET /portal/usage", s.signedIn(portalArea, s.handleUsage))
	mux.HandleFunc("GET /portal/invoices", s.signedIn(portalArea, s.handleInvoices))
	mux.HandleFunc("GET /portal/invoices/{number}", s.signedIn(portalArea, s.handleInvoice))

	// The portal's webhook pages, served only with the server secret that
	// seals signing secrets.
	if s.secret == nil {
		return
	}
	const hooks, endpoint = "/portal/apps/{app_id}/webhooks/{mode}", "/portal/apps/{app_id}/webhooks/{mode}/{endpoint_id}"
	mux.HandleFunc("GET /portal/apps/{app_id}/webhooks", s.handleWebhooksHome())
	mux.HandleFunc("GET "+hooks, s.handleEndpoints())
	mux.HandleFunc("POST "+hooks, s.handleCreateEndpoint())
	mux.HandleFunc("GET "+hooks+"/new", s.handleNewEndpoint())
	mux.HandleFunc("GET "+endpoint, s.handleEndpoint())
	mux.HandleFunc("POST "+endpoint, s.handleUpdateEndpoint())
	mux.HandleFunc("POST "+endpoint+"/status", s.handleEndpointStatus())
	mux.HandleFunc("POST "+endpoint+"/rotate", s.handleRotateSecret())
	mux.HandleFunc("GET "+endpoint+"/secret", s.handleEndpointSecret())
	mux.HandleFunc("POST "+endpoint+"/test", s.handleTestEvent())
	mux.HandleFunc("GET "+endpoint+"/delete", s.handleDeletePage())
	mux.HandleFunc("POST "+endpoint+"/delete", s.handleDeleteEndpoint())
	mux.HandleFunc("GET "+endpoint+"/deliveries", s.handleDeliveries())
	mux.HandleFunc("POST "+endpoint+"/deliveries/{delivery_id}/resend", s.handleResend())
	mux.HandleFunc("GET /portal/apps/{app_id}/sandbox/reset", s.handleSandboxReset())
	mux.HandleFunc("POST /portal/apps/{app_id}/sandbox/reset", s.handleSandboxReset())
}
