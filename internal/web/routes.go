package web

import (
	"net/http"

	"rentapi/internal/api"
	"rentapi/internal/request"
)

// routes registers every page of the service on one screen, each a
// handler of a visit (handler.go) behind the guards of its kind: the
// portal's and the app's pages are the signed-in person's (signedIn); a
// portal page of an application is its developer's (ownApp), and another
// developer's application is the same 404 page as one that does not exist;
// the webhook pages need the server secret that seals signing secrets
// (sealing). A change is a POST (protect's cross-origin check refuses one
// from another site); a change that cannot be undone is confirmed on a
// page of its own first, so nothing needs JavaScript. A POST that makes
// something answers with a redirect (POST-redirect-GET), so reloading the
// page it leads to makes nothing again; a secret made is shown once there
// (reveal.go). Each prefix ends in a catch-all: its unknown paths get its
// area's 404 page. Every error is answered by fail, on its area's page.
func (s *site) routes(mux *request.Mux) {
	mux.Handle("GET /assets/site.css", http.FileServerFS(assets))

	// The landing page and the documentation.
	home, docs := s.pages(homeArea), s.pages(docsArea)
	mux.Handle("GET /{$}", home(s.handleHome))
	mux.Handle("GET /docs", docs(s.handleQuickstart))
	mux.Handle("GET /docs/api", docs(s.handleDoc("docs_api", apiIndex{Ref: s.docs.ref})))
	mux.Handle("GET /docs/api/{resource}", docs(s.handleResource))
	mux.Handle("GET /docs/search", docs(s.handleSearch))
	mux.Handle("GET "+api.ErrorDocsPath, docs(s.handleDoc("docs_errors", s.docs.errors)))
	mux.Handle("GET /docs/webhooks", docs(s.handleDoc("docs_webhooks", s.docs.webhooks)))
	mux.Handle("GET /docs/changelog", docs(s.handleDoc("docs_changelog", s.docs.changelog)))
	mux.Handle("/docs/", home(notFound))

	// The tenant's payment page: the token in the path is its only
	// credential.
	pay := s.pages(payArea)
	mux.Handle("GET /pay/{token}", pay(s.handlePay))
	mux.Handle("HEAD /pay/{token}", pay(s.handlePayHead))
	mux.Handle("GET /pay/{token}/{payment}", pay(s.handleQR))
	mux.Handle("POST /pay/{token}/slip", pay(s.handleSlip))
	mux.Handle("GET /pay/receipt/{token}", pay(s.handleReceipt))
	mux.Handle("/pay/", pay(notFound))

	// Signing in, up and out, in the portal and the app alike.
	for _, a := range []area{portalArea, landlordArea} {
		open, mine := s.pages(a), s.pages(a, s.signedIn)
		mux.Handle("GET "+a.Base+"/signin", open(s.handleSignInPage))
		mux.Handle("POST "+a.Base+"/signin", open(s.handleSignIn))
		mux.Handle("GET "+a.Base+"/signup", open(s.handleSignUpPage))
		mux.Handle("POST "+a.Base+"/signup", open(s.handleSignUp))
		mux.Handle("POST "+a.Base+"/signout", open(s.handleSignOut))
		mux.Handle("GET "+a.Base+"/password", mine(s.handlePassword))
		mux.Handle("POST "+a.Base+"/password", mine(s.handlePassword))
		mux.Handle(a.Base+"/", open(notFound))
	}

	// The landlord's app: plan, PromptPay receiver, connected
	// applications; and the consent pages of connect links, which decide
	// themselves what a signed-out visitor gets.
	landlord, consent := s.pages(landlordArea, s.signedIn), s.pages(landlordArea, s.visitor)
	mux.Handle("GET /app", landlord(s.handleApp))
	mux.Handle("POST /app/plan", landlord(s.handlePlan))
	mux.Handle("POST /app/promptpay", landlord(s.handlePromptPay))
	mux.Handle("GET /app/connections/{account_id}/disconnect", landlord(s.handleDisconnectPage))
	mux.Handle("POST /app/connections/{account_id}/disconnect", landlord(s.handleDisconnect))
	mux.Handle("GET /connect/{application_id}", consent(s.handleConnect))
	mux.Handle("POST /connect/{application_id}", consent(s.handleConsent))
	mux.Handle("/connect/", s.pages(landlordArea)(notFound))

	// The developer portal: applications, their keys and linked accounts.
	portal, app := s.pages(portalArea, s.signedIn), s.pages(portalArea, s.signedIn, s.ownApp)
	mux.Handle("GET /portal", portal(s.handlePortalHome))
	mux.Handle("GET /portal/apps/new", portal(s.handleNewApp))
	mux.Handle("POST /portal/apps/new", portal(s.handleCreateApp))
	mux.Handle("GET /portal/apps/{app_id}", app(s.handleDeveloperApp))
	mux.Handle("POST /portal/apps/{app_id}/settings", app(s.handleAppSettings))
	mux.Handle("GET /portal/apps/{app_id}/requests", app(s.handleRequests))
	mux.Handle("GET /portal/apps/{app_id}/keys/new", app(s.handleNewKey))
	mux.Handle("POST /portal/apps/{app_id}/keys", app(s.handleCreateKey))
	mux.Handle("GET /portal/apps/{app_id}/keys/{key_id}/secret", app(s.handleKeySecret))
	mux.Handle("GET /portal/apps/{app_id}/keys/{key_id}/rotate", app(s.handleConfirmKey(rotateKey)))
	mux.Handle("POST /portal/apps/{app_id}/keys/{key_id}/rotate", app(s.handleRotateKey))
	mux.Handle("GET /portal/apps/{app_id}/keys/{key_id}/revoke", app(s.handleConfirmKey(revokeKey)))
	mux.Handle("POST /portal/apps/{app_id}/keys/{key_id}/revoke", app(s.handleRevokeKey))
	mux.Handle("GET /portal/apps/{app_id}/accounts/{account_id}/disconnect", app(s.handleConfirmDisconnect))
	mux.Handle("POST /portal/apps/{app_id}/accounts/{account_id}/disconnect", app(s.handleUnlinkAccount))
	mux.Handle("POST /portal/apps/{app_id}/link", app(s.handleStartLink))
	mux.Handle("GET /portal/callback", portal(s.handleLinkCallback))

	// The developer's own account: the plan (and its change), the usage
	// of a month, and the invoices, each printable.
	mux.Handle("GET /portal/plan", portal(s.handlePlanPage))
	mux.Handle("POST /portal/plan", portal(s.handleChangePlan))
	mux.Handle("GET /portal/usage", portal(s.handleUsage))
	mux.Handle("GET /portal/invoices", portal(s.handleInvoices))
	mux.Handle("GET /portal/invoices/{number}", portal(s.handleInvoice))

	// The portal's webhook pages of an application, each of one mode, and
	// of one endpoint.
	sealed := s.pages(portalArea, s.sealing, s.signedIn, s.ownApp)
	hooks := s.pages(portalArea, s.sealing, s.signedIn, s.ownApp, s.hookMode)
	endpoint := s.pages(portalArea, s.sealing, s.signedIn, s.ownApp, s.hookMode, s.ownEndpoint)
	const mode, one = "/portal/apps/{app_id}/webhooks/{mode}", "/portal/apps/{app_id}/webhooks/{mode}/{endpoint_id}"
	mux.Handle("GET /portal/apps/{app_id}/webhooks", sealed(s.handleWebhooksHome))
	mux.Handle("GET "+mode, hooks(s.handleEndpoints))
	mux.Handle("POST "+mode, hooks(s.handleCreateEndpoint))
	mux.Handle("GET "+mode+"/new", hooks(s.handleNewEndpoint))
	mux.Handle("GET "+one, endpoint(s.handleEndpoint))
	mux.Handle("POST "+one, endpoint(s.handleUpdateEndpoint))
	mux.Handle("POST "+one+"/status", endpoint(s.handleEndpointStatus))
	mux.Handle("POST "+one+"/rotate", endpoint(s.handleRotateSecret))
	mux.Handle("GET "+one+"/secret", endpoint(s.handleEndpointSecret))
	mux.Handle("POST "+one+"/test", endpoint(s.handleTestEvent))
	mux.Handle("GET "+one+"/delete", endpoint(s.handleDeletePage))
	mux.Handle("POST "+one+"/delete", endpoint(s.handleDeleteEndpoint))
	mux.Handle("GET "+one+"/deliveries", endpoint(s.handleDeliveries))
	mux.Handle("POST "+one+"/deliveries/{delivery_id}/resend", endpoint(s.handleResend))
	// The Events page of an application, of one mode.
	mux.Handle("GET /portal/apps/{app_id}/events", sealed(s.handleEventsHome))
	mux.Handle("GET /portal/apps/{app_id}/events/{mode}", hooks(s.handleEvents))
	mux.Handle("POST /portal/apps/{app_id}/events/{mode}/{event_id}/send", hooks(s.handleSendEvent))
	mux.Handle("GET /portal/apps/{app_id}/sandbox/reset", sealed(s.handleSandboxReset))
	mux.Handle("POST /portal/apps/{app_id}/sandbox/reset", sealed(s.handleSandboxReset))
}
