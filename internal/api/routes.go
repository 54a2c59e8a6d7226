package api

import "rentapi/internal/rental"

// routes registers every route of the service on one screen.
func (s *Server) routes() {
	s.mux.Handle("GET /healthz", s.handleHealth())
	s.mux.Handle("GET /readyz", s.handleReady())
	s.mux.Handle("GET /openapi.json", s.handleOpenAPI("json"))
	s.mux.Handle("GET /openapi.yaml", s.handleOpenAPI("yaml"))

	s.mux.Handle("GET /v1/account", s.endpoint("", nil, s.getAccount))

	s.mux.Handle("GET /v1/properties", s.endpoint(rental.ScopePropertiesRead, listQuery, s.listProperties))
	s.mux.Handle("POST /v1/properties", s.endpoint(rental.ScopePropertiesWrite, nil, s.createProperty))
	s.mux.Handle("GET /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesRead, nil, s.getProperty))
	s.mux.Handle("PATCH /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesWrite, nil, s.updateProperty))
	s.mux.Handle("DELETE /v1/properties/{property_id}", s.endpoint(rental.ScopePropertiesWrite, nil, s.deleteProperty))
}
