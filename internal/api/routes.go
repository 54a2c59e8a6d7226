package api

import (
	"net/http"
	"slices"

	"rentapi/internal/rental"
)

// readyRoute is the readiness probe, whose 503 is no client's refusal.
const readyRoute = "GET /readyz"

// routes registers every route of the service on one screen.
func (s *Server) routes() {
	s.handle("GET /healthz", s.handleHealth())
	s.handle(readyRoute, s.handleReady())
	s.handle("GET /openapi.json", s.handleOpenAPI("json"))
	s.handle("GET /openapi.yaml", s.handleOpenAPI("yaml"))

	s.handle("GET /v1/account", s.freshEndpoint("", nil, s.getAccount))

	s.handle("GET /v1/properties", s.endpoint(rental.ScopePropertiesRead, listQuery(), s.listProperties))
	s.handle("POST /v1/properties", s.endpoint(rental.ScopePropertiesWrite, nil, s.createProperty))
	s.handle("GET /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesRead, nil, s.getProperty))
	s.handle("PATCH /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesWrite, nil, s.updateProperty))
	s.handle("DELETE /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesWrite, nil, s.deleteProperty))

	s.handle("GET /v1/rooms", s.endpoint(rental.ScopeRoomsRead, listQuery("property_id", "status"), s.listRooms))
	s.handle("GET /v1/properties/{property_id}/rooms", s.endpoint(rental.ScopeRoomsRead, listQuery("status"), s.listRooms))
	s.handle("POST /v1/properties/{property_id}/rooms", s.endpoint(rental.ScopeRoomsWrite, nil, s.createRoom))
	s.handle("GET /v1/rooms/{room_id}", s.endpoint(rental.ScopeRoomsRead, nil, s.getRoom))
	s.handle("PATCH /v1/rooms/{room_id}", s.endpoint(rental.ScopeRoomsWrite, nil, s.updateRoom))
	s.handle("DELETE /v1/rooms/{room_id}", s.endpoint(rental.ScopeRoomsWrite, nil, s.deleteRoom))

	s.handle("POST /v1/rooms/{room_id}/tenant", s.endpoint(rental.ScopeTenantsWrite, nil, s.moveIn))
	s.handle("DELETE /v1/rooms/{room_id}/tenant", s.endpoint(rental.ScopeTenantsWrite, nil, s.moveOut))
	s.handle("POST /v1/rooms/{room_id}/tenant/move-out", s.endpoint(rental.ScopeTenantsWrite, nil, s.settleMoveOut))
	s.handle("GET /v1/settlements", s.endpoint(rental.ScopeTenantsRead, listQuery("property_id", "room_id", "status"), s.listSettlements))
	s.handle("GET /v1/settlements/{settlement_id}", s.endpoint(rental.ScopeTenantsRead, nil, s.getSettlement))
	s.handle("POST /v1/settlements/{settlement_id}/close", s.endpoint(rental.ScopeTenantsWrite, nil, s.closeSettlement))
	s.handle("GET /v1/tenants", s.endpoint(rental.ScopeTenantsRead, listQuery("property_id", "room_id", "include_moved_out"), s.listTenants))
	s.handle("GET /v1/tenants/{tenant_id}", s.endpoint(rental.ScopeTenantsRead, nil, s.getTenant))
	s.handle("PATCH /v1/tenants/{tenant_id}", s.endpoint(rental.ScopeTenantsWrite, nil, s.updateTenant))

	s.handle("GET /v1/meters", s.endpoint(rental.ScopeMetersRead, listQuery("property_id", "room_id", "kind"), s.listMeters))
	s.handle("GET /v1/meters/{meter_id}", s.endpoint(rental.ScopeMetersRead, nil, s.getMeter))
	s.handle("POST /v1/meter-readings", s.prepared(rental.ScopeMetersWrite, decoded(decodeReading, s.createReading)))
	s.handle("POST /v1/meter-readings/batch", s.prepared(rental.ScopeMetersWrite, decoded(s.decodeReadings, s.createReadings)))
	s.handle("GET /v1/meter-readings", s.endpoint(rental.ScopeMetersRead,
		listQuery("property_id", "room_id", "month", "from_month", "to_month", "flagged"), s.listReadings))
	s.handle("GET /v1/meter-readings/{reading_id}", s.endpoint(rental.ScopeMetersRead, nil, s.getReading))
	s.handle("PATCH /v1/meter-readings/{reading_id}", s.endpoint(rental.ScopeMetersWrite, nil, s.correctReading))

	s.handle("POST /v1/bills", s.prepared(rental.ScopeBillsWrite, decoded(decodeBill, s.createBill)))
	s.handle("GET /v1/bills", s.endpoint(rental.ScopeBillsRead, listQuery("property_id", "room_id", "tenant_id", "status",
		"month", "from_month", "to_month", "created_after", "created_before"), s.listBills))
	s.handle("GET /v1/bills/{bill_id}", s.endpoint(rental.ScopeBillsRead, nil, s.getBill))
	s.handle("POST /v1/bills/{bill_id}/issue", s.endpoint(rental.ScopeBillsWrite, nil, s.issueBill))
	s.handle("DELETE /v1/bills/{bill_id}", s.endpoint(rental.ScopeBillsWrite, nil, s.deleteBill))
	s.handle("POST /v1/properties/{property_id}/bills", s.endpoint(rental.ScopeBillsWrite, nil, s.createBillRun))

	s.handle("POST /v1/rooms/{room_id}/charges", s.endpoint(rental.ScopeBillsWrite, nil, s.createCharge))
	s.handle("GET /v1/charges", s.endpoint(rental.ScopeBillsRead, listQuery("property_id", "room_id", "month"), s.listCharges))
	s.handle("GET /v1/charges/{charge_id}", s.endpoint(rental.ScopeBillsRead, nil, s.getCharge))
	s.handle("DELETE /v1/charges/{charge_id}", s.endpoint(rental.ScopeBillsWrite, nil, s.deleteCharge))

	s.handle("POST /v1/bills/{bill_id}/payment-link", s.endpoint(rental.ScopePaymentsWrite, nil, s.createPaymentLink))
	s.handle("GET /v1/payment-links", s.endpoint(rental.ScopePaymentsRead, listQuery("bill_id", "active"), s.listPaymentLinks))
	s.handle("GET /v1/payment-links/{payment_link_id}", s.endpoint(rental.ScopePaymentsRead, nil, s.getPaymentLink))
	s.handle("GET /v1/payments", s.endpoint(rental.ScopePaymentsRead, listQuery("bill_id", "status", "created_after", "created_before"), s.listPayments))
	s.handle("GET /v1/payments/{payment_id}", s.endpoint(rental.ScopePaymentsRead, nil, s.getPayment))

	s.handle("POST /v1/bills/{bill_id}/slips", s.endpoint(rental.ScopePaymentsWrite, nil, s.createSlip))
	s.handle("GET /v1/slips", s.endpoint(rental.ScopePaymentsRead, listQuery("bill_id", "status"), s.listSlips))
	s.handle("GET /v1/slips/{slip_id}", s.endpoint(rental.ScopePaymentsRead, nil, s.getSlip))

	s.handle("POST /v1/notifications", s.endpoint(rental.ScopeNotificationsWrite, nil, s.createNotification))
	s.handle("GET /v1/notifications", s.endpoint(rental.ScopeNotificationsRead, listQuery("tenant_id", "bill_id", "status"), s.listNotifications))
	s.handle("GET /v1/notifications/{notification_id}", s.endpoint(rental.ScopeNotificationsRead, nil, s.getNotification))
	s.handle("POST /v1/messages", s.endpoint(rental.ScopeNotificationsWrite, nil, s.createMessage))

	// Events need no particular scope: each reader sees the types it can read.
	s.handle("GET /v1/events", s.freshEndpoint("", listQuery("type", "created_after"), s.listEvents))
	s.handle("GET /v1/events/stream", s.freshEndpoint("", []string{"type*"}, s.streamEvents))
	s.handle("GET /v1/events/{event_id}", s.freshEndpoint("", nil, s.getEvent))

	// Webhook endpoints are the application's own, per mode.
	s.handle("GET /v1/webhook-endpoints", s.appEndpoint(rental.ScopeWebhooksManage, listQuery(), s.listEndpoints))
	s.handle("POST /v1/webhook-endpoints", s.appWrite(rental.ScopeWebhooksManage, decoded(s.endpointCreate, s.createEndpoint)))
	s.handle("GET /v1/webhook-endpoints/{endpoint_id}", s.appEndpoint(rental.ScopeWebhooksManage, nil, s.getEndpoint))
	s.handle("PATCH /v1/webhook-endpoints/{endpoint_id}", s.appWrite(rental.ScopeWebhooksManage, decoded(s.endpointUpdate, s.updateEndpoint)))
	s.handle("DELETE /v1/webhook-endpoints/{endpoint_id}", s.appEndpoint(rental.ScopeWebhooksManage, nil, s.deleteEndpoint))
	s.handle("POST /v1/webhook-endpoints/{endpoint_id}/rotate-secret", s.appEndpoint(rental.ScopeWebhooksManage, nil, s.rotateSecret))
	s.handle("POST /v1/webhook-endpoints/{endpoint_id}/test", s.appEndpoint(rental.ScopeWebhooksManage, nil, s.testEndpoint))
	s.handle("GET /v1/webhook-endpoints/{endpoint_id}/deliveries", s.appEndpoint(rental.ScopeWebhooksManage, listQuery("status", "event_id"), s.listDeliveries))
	s.handle("GET /v1/webhook-deliveries/{delivery_id}", s.appEndpoint(rental.ScopeWebhooksManage, nil, s.getDelivery))
	s.handle("POST /v1/webhook-deliveries/{delivery_id}/resend", s.appEndpoint(rental.ScopeWebhooksManage, nil, s.resendDelivery))

	s.handle("POST /v1/test-helpers/sandbox/reset", s.endpoint(rental.ScopePropertiesWrite, nil, s.resetSandbox))
	s.handle("POST /v1/test-helpers/payments", s.endpoint(rental.ScopePaymentsWrite, nil, s.simulatePayment))
	s.handle("POST /v1/test-helpers/slips", s.endpoint(rental.ScopePaymentsWrite, nil, s.simulateSlip))
	s.handle("POST /v1/test-helpers/tenants/{tenant_id}/line-register", s.endpoint(rental.ScopeTenantsWrite, nil, s.lineRegister))
	s.handle("GET /v1/test-helpers/clock", s.freshEndpoint("", nil, s.getClock))
	s.handle("POST /v1/test-helpers/clock/advance", s.endpoint("", nil, s.advanceClock))

	// The payment provider's confirmations: signed by the provider, not
	// an API key, and no part of the developers' API (see the README).
	s.handleUnlisted("POST /provider/v1/confirmations/{provider}", s.handleConfirmation())
	// The service's LINE Official Account's events: signed by LINE with
	// the channel secret, and no part of the developers' API either.
	s.handleUnlisted("POST /line/v1/webhook", s.handleLineWebhook())
	// The version's root is no route, but the API's: its envelope's
	// route_not_found answers it, for browsers too.
	s.mux.Claim("/v1")
}

// handle registers a route and remembers its pattern for Routes.
func (s *Server) handle(pattern string, h http.Handler) {
	s.patterns = append(s.patterns, pattern)
	s.handleUnlisted(pattern, h)
}

// handleUnlisted registers a route that is no part of the API's document.
func (s *Server) handleUnlisted(pattern string, h http.Handler) {
	s.known[pattern] = true
	s.mux.Handle(pattern, h)
}

// Routes lists every registered "METHOD /path" pattern, so tests can hold
// the OpenAPI document and the router to each other.
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }
