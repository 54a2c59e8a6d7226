package api

import "slices"

// ErrorCode documents one error code the service can answer with: its
// status, when it happens and what a client should do about it. The list
// below is the one source of the error page (/docs/errors), which every
// doc_url points into; a test scans the Go source for the codes the service
// can emit and fails when one is missing here.
type ErrorCode struct {
	Code   string
	Status int
	// Where are the surfaces that answer with the code (WhereAPI and so
	// on): a developer reading the page knows which codes reach their client.
	Where []string
	When  string
	Do    string
}

// The surfaces an error code is answered on.
const (
	// WhereAPI is the JSON API: the error envelope with doc_url.
	WhereAPI = "api"
	// WhereProvider is the payment providers' confirmation endpoint
	// (/provider/v1/confirmations), in the same envelope.
	WhereProvider = "provider"
	// WhereConnect is the redirect of the connect flow back to the
	// application's redirect_uri, as error=<code>.
	WhereConnect = "connect"
	// WherePages is the service's own pages (sign-up, portal, landlord's
	// app), which show the message, not the code.
	WherePages = "pages"
)

// Shared advice, so that the same situation reads the same everywhere.
const (
	doFix         = "Fix the request; sending it again unchanged gets the same answer."
	doRetryAfter  = "Wait the number of seconds in `Retry-After`, then retry; a write with the same `Idempotency-Key`."
	doBackoff     = "Retry with exponential backoff and jitter (about 1 s, 2 s, 4 s, 8 s, … up to a minute); a write with the same `Idempotency-Key`, so it is done at most once. Quote `request_id` if it persists."
	doStateChange = "Read the object's current state; do what the message says first (or give up). Retrying unchanged gets the same answer."
)

// errorCodes is every error code of the service, in the order the error
// page shows them: by status, then by code.
var errorCodes = []ErrorCode{
	{"api_key_in_query", 400, on(WhereAPI), "An API key was sent in the URL (`api_key`, `key` and the like in the query).",
		"Treat the key as exposed: roll it in the portal. Send keys only as `Authorization: Bearer <key>`."},
	{"invalid_cursor", 400, on(WhereAPI), "The `cursor` was edited, is from another list or another `order`, or is over 200 characters.",
		"Page with the `next_cursor` of the previous page unchanged, with the same filters and order; start again without `cursor` if it is lost."},
	{"invalid_form", 400, on(WherePages), "A page's form could not be read (too large or malformed).",
		"Reload the page and send the form again."},
	{"invalid_idempotency_key", 400, on(WhereAPI), "The `Idempotency-Key` is longer than 255 characters or not printable ASCII.",
		"Use a key of 1-255 printable ASCII characters, such as a UUID. " + doFix},
	{"invalid_json", 400, on(WhereAPI, WhereProvider), "The body does not parse as a JSON object.",
		"Send one JSON object, UTF-8, with `Content-Type: application/json`. " + doFix},
	{"invalid_parameter", 400, on(WhereAPI, WhereProvider), "A query parameter or body field has a value out of range or of the wrong type, or the body has a field the operation does not take; `param` names it.",
		"Correct the field named in `param` (see the operation in /docs). " + doFix},
	{"invalid_url", 400, on(WhereAPI, WherePages), "A webhook URL is not `https://` or not on the public internet (private, loopback and other internal addresses are refused, and so is a host name that resolves to one, or to no address, when the URL is registered); `param` is `url`.",
		"Register a public `https://` URL. To try a receiver on your own machine, run the service with `--webhook-allow-loopback`."},
	{"parameter_missing", 400, on(WhereAPI, WhereProvider), "A required field or parameter was not sent; `param` names it.",
		"Send the field named in `param`. " + doFix},
	{"unknown_parameter", 400, on(WhereAPI), "A query parameter the operation does not accept; `param` names it.",
		"Remove it; /docs lists each operation's parameters."},
	{"invalid_api_key", 401, on(WhereAPI), "The key is missing, malformed, unknown, expired or revoked.",
		"Check the `Authorization: Bearer` header; make a new key in the portal if this one was revoked or expired. Do not retry in a loop: 30 failures a minute from one address are 429 `too_many_failed_attempts`."},
	{"invalid_signature", 401, on(WhereProvider), "A payment provider's confirmation is not signed by that provider's secret over `X-Provider-Timestamp` and the raw body.",
		"Sign `<timestamp>.<raw body>` with HMAC-SHA256 and the provider's secret, as `X-Provider-Signature: sha256=<hex>`."},
	{"timestamp_out_of_tolerance", 401, on(WhereProvider), "A payment provider's confirmation has an `X-Provider-Timestamp` more than 5 minutes from the service's clock.",
		"Sign each confirmation when it is sent, with the current Unix time; check the sender's clock."},
	{"payment_required", 402, on(WhereAPI), "Live mode, when the developer's invoice is overdue.",
		"Pay the invoice in the portal; test mode keeps working meanwhile."},
	{"account_access_revoked", 403, on(WhereAPI), "The landlord or the developer disconnected this account from the application.",
		"Stop calling for this account; the landlord must approve the application's connect link again to relink it (it keeps the same `acct_` ID)."},
	{"account_mismatch", 403, on(WhereAPI), "`SERVICE-Account` names another account than the one the key is bound to (for a test key, its sandbox).",
		"Leave `SERVICE-Account` out for a bound or test key, or use an unbound live key."},
	{"account_not_connected", 403, on(WhereAPI), "`SERVICE-Account` names an account that is not linked to the application or does not exist.",
		"Use an `acct_` ID your application received from the connect flow."},
	{"account_required", 403, on(WhereAPI), "An unbound live key without a `SERVICE-Account` header.",
		"Send `SERVICE-Account: acct_…` with the landlord's account, or use a key bound to it."},
	{"application_disabled", 403, on(WhereAPI), "The application was disabled by the operator.",
		"Contact support; no request of the application is served until it is enabled."},
	{"developer_suspended", 403, on(WhereAPI), "The developer account was suspended by the operator.",
		"Contact support; no key of the developer works until it is unsuspended."},
	{"insufficient_scope", 403, on(WhereAPI), "The operation needs a scope (named in `scope`) that the key, the application or the landlord's grant lacks.",
		"Use a key with the scope; if the landlord's grant lacks it, add the scope to the application and have the landlord approve the connect link again."},
	{"plan_limit_reached", 403, on(WhereAPI, WherePages), "The landlord's plan is full for properties or rooms, or the developer's plan for webhook endpoints.",
		"Delete something first, or ask the landlord (or, for endpoints, change your plan) for a larger plan. Retrying does not help."},
	{"plan_not_self_service", 403, on(WherePages), "A developer choosing the Enterprise plan in the portal: it is agreed with the service, not chosen.",
		"Contact the service; an operator moves the account to Enterprise."},
	{"test_mode_only", 403, on(WhereAPI), "A test helper called with a live key.",
		"Use a test key (`svc_test_…`): test helpers work only on sandboxes."},
	{"resource_not_found", 404, on(WhereAPI, WhereProvider, WherePages), "No object with this ID in the account (an ID of another account gets the same answer).",
		"Check the ID and the account the key reaches; the object may have been deleted."},
	{"route_not_found", 404, on(WhereAPI), "No such route: the path is not one of the API's, or has empty or dot segments (never redirected).",
		"Check the path against /docs."},
	{"method_not_allowed", 405, on(WhereAPI), "The route exists, but not with this method; `Allow` lists the methods it has.",
		"Use a method from the `Allow` header."},
	{"request_timeout", 408, on(WhereAPI), "The body of a write did not arrive within 10 seconds.",
		"Send the body promptly; retry with the same `Idempotency-Key`."},
	{"bill_already_paid", 409, on(WhereAPI), "Correcting a meter reading whose month's bill is already paid.",
		doStateChange},
	{"bill_not_payable", 409, on(WhereAPI), "A payment link for a bill that cannot be paid by QR: not issued, already paid, or the landlord's plan has no QR payments or no PromptPay receiver; or a slip for a draft bill.",
		doStateChange},
	{"charge_billed", 409, on(WhereAPI), "Deleting a one-off charge or discount that is on a bill past draft (issued, overdue or paid): the tenant has seen it.",
		"Leave it: the bill keeps it. To give the amount back, add a discount to a later month."},
	{"email_taken", 409, on(WherePages), "Signing up with an email that already has an account.",
		"Sign in instead, or reset the password."},
	{"idempotency_in_progress", 409, on(WhereAPI), "A request with the same `Idempotency-Key` is still running.",
		"Retry after a second with the same key and body: the answer is the first request's once it is done."},
	{"invalid_state", 409, on(WhereAPI, WhereProvider, WherePages), "The object's state forbids the change: issuing or deleting a bill that is not a draft, setting a room occupied or vacant by hand, ending a payment that is not pending, rotating a revoked key.",
		doStateChange},
	{"no_linked_account", 409, on(WherePages), "Creating a live key before any landlord has linked an account to the application.",
		"Have a landlord approve the application's connect link first."},
	{"plan_too_small", 409, on(WherePages), "A landlord choosing a plan smaller than the properties or rooms already kept.",
		"Delete some first, or choose a larger plan."},
	{"property_not_empty", 409, on(WhereAPI), "Deleting a property that still has rooms.",
		"Delete the property's rooms first."},
	{"reading_required", 409, on(WhereAPI), "Creating a bill for a room and month without a meter reading.",
		"Record the month's reading (`POST /v1/meter-readings`), then create the bill."},
	{"resource_exists", 409, on(WhereAPI), "A reading or bill already exists for the room and month; `resource_id` names it.",
		"Use the existing object named in `resource_id` (or correct it) instead of creating another."},
	{"room_has_bills", 409, on(WhereAPI), "Deleting a room with issued, overdue or paid bills.",
		"Keep the room (set its status) instead of deleting it."},
	{"room_number_taken", 409, on(WhereAPI), "The room number is already used in the property.",
		"Choose another number, or update the existing room."},
	{"room_occupied", 409, on(WhereAPI), "Moving a tenant into a room that already has one, or deleting an occupied room.",
		"Move the current tenant out first."},
	{"slips_not_available", 409, on(WhereAPI), "A live slip (`POST /v1/bills/{bill_id}/slips`) while the service has no slip-verification provider configured (an operator's setting); test mode always works.",
		"Ask the operator to configure the provider, or check the transfer another way; retrying as is gets the same answer."},
	{"tenant_not_reachable", 409, on(WhereAPI), "A chat notice or message to a tenant who has not linked LINE (chat_registered false), has chat turned off (chat_enabled false), or has moved out.",
		"Ask the tenant to add the service's LINE account and send their chat_registration_code, or reach them another way; do not retry as is."},
	{"transaction_conflict", 409, on(WhereProvider), "A provider's transaction ID already confirmed another payment or another amount.",
		"Do not reuse transaction IDs; a repeat of the same confirmation is answered 200, not this."},
	{"webhook_endpoint_disabled", 409, on(WhereAPI, WherePages), "Sending a test event to, or resending a delivery through, a disabled endpoint.",
		"Enable the endpoint first (PATCH with `status: enabled`)."},
	{"request_too_large", 413, on(WhereAPI, WhereProvider), "The body is over 1 MB.",
		"Send a smaller body; lists are created one object at a time."},
	{"unsupported_media_type", 415, on(WhereAPI), "A write whose `Content-Type` is not `application/json`.",
		"Send `Content-Type: application/json` with a JSON body."},
	{"idempotency_key_reused", 422, on(WhereAPI), "The `Idempotency-Key` was used before with a different body, method or path (keys are remembered 24 hours).",
		"Use a new key for each different write; reuse a key only to retry the very same request."},
	{"monthly_quota_exceeded", 429, on(WhereAPI), "Live mode on the free plan: the month's included requests are used up. `Retry-After` is the seconds until the 1st, 00:00 Thailand time.",
		"Change to a paid plan in the portal, or wait `Retry-After` seconds."},
	{"rate_limited", 429, on(WhereAPI), "Over the developer account's per-second limit (test and live are counted apart).",
		doRetryAfter + " Spread requests out; `X-RateLimit-Remaining` shows what is left."},
	{"sandbox_limit", 429, on(WhereAPI), "Test mode: over 20,000 requests a day, or the sandbox's size (20 properties, 500 rooms) is full.",
		"For the daily limit, wait `Retry-After` seconds; for the size, delete sandbox data or reset the sandbox (`POST /v1/test-helpers/sandbox/reset`)."},
	{"sending_limit", 429, on(WhereAPI), "Over 60 chat sends (notifications and messages together) in a minute for one account (a landlord as linked to one application).",
		doRetryAfter},
	{"too_many_failed_attempts", 429, on(WhereAPI), "Over 30 requests with invalid keys in a minute from one address: its further invalid keys are refused so, its valid keys still served.",
		"Fix the key before retrying; then " + doRetryAfter},
	{"request_header_too_large", 431, on(WhereAPI), "The request line and headers are over 64 KB.",
		"Send smaller headers (cookies meant for other services, say)."},
	{"internal_error", 500, on(WhereAPI, WhereProvider), "Something failed on the service's side; the message says nothing more, the log has the detail.",
		doBackoff},
	{"chat_unavailable", 503, on(WhereAPI), "A live chat send while the service has no LINE channel configured (an operator's setting); test mode always works.",
		"Retry later, with the same Idempotency-Key; tell the service's operator if it lasts."},
	{"service_unavailable", 503, on(WhereAPI, WhereProvider), "The service is overloaded (no place within 10 seconds) or its database is unreachable; `Retry-After` is present.",
		doRetryAfter},
	{"access_denied", 0, on(WhereConnect), "The landlord pressed Deny on the consent page: the browser comes back to your `redirect_uri` with `error=access_denied&state=…` instead of `account_id`.",
		"Check `state`, tell your user the landlord declined, and offer the connect link again later."},
}

// on lists the surfaces of a code.
func on(where ...string) []string { return where }

// ErrorCodes lists every error code of the service with its status, when
// it happens and what to do, in the error page's order. A status of 0 is
// a code that is no HTTP answer (a redirect's error parameter).
func ErrorCodes() []ErrorCode {
	out := slices.Clone(errorCodes)
	for i := range out {
		out[i].Where = slices.Clone(out[i].Where)
	}
	return out
}
