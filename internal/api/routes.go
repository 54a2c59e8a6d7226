package api

import (
	"net/http"
	"slices"

	"rentapi/internal/rental"
)

// routes registers every route of the service on one screen.
func (s *Server) routes() {
	s.handle("GET /healthz", s.handleHealth())
	s.handle("GET /readyz", s.handleReady())
	s.handle("GET /openapi.json", s.handleOpenAPI("json"))
	s.handle("GET /openapi.yaml", s.handleOpenAPI("yaml"))

	s.handle("GET /v1/account", s.endpoint("", nil, s.getAccount))

	s.handle("GET /v1/properties", s.endpoint(rental.ScopePropertiesRead, listQuery, s.listProperties))
	s.handle("POST /v1/properties", s.endpoint(rental.ScopePropertiesWrite, nil, s.createProperty))
	s.handle("GET /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesRead, nil, s.getProperty))
	s.handle("PATCH /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesWrite, nil, s.updateProperty))
	s.handle("DELETE /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesWrite, nil, s.deleteProperty))
}

// handle registers a route and remembers its pattern for Routes.
func (s *Server) handle(pattern string, h http.Handler) {
	s.patterns = append(s.patterns, pattern)
	s.mux.Handle(pattern, h)
}

// Routes lists every registered "METHOD /path" pattern, so tests can hold
// the OpenAPI document and the router to each other.
func (s *Server) Routes() []string { return slices.Clone(s.patterns) }
