package api

import (
	"context"
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var endpointPosition = position(func(e rental.WebhookEndpoint) rental.Time { return e.CreatedAt }, func(e rental.WebhookEndpoint) string { return e.ID })

var deliveryPosition = position(func(d rental.Delivery) rental.Time { return d.CreatedAt }, func(d rental.Delivery) string { return d.ID })

// endpointChange reads a create or update body and checks it with the
// rules the portal's forms share, the guard's lookup of the URL's host
// name included.
func (s *Server) endpointChange(ctx context.Context, body []byte, create bool) (rental.EndpointSpec, error) {
	var ch rental.EndpointChange
	allowed := []string{"url", "enabled_events", "description"}
	if !create {
		allowed = append(allowed, "status")
	}
	f, err := parseObject(body, allowed...)
	if err != nil {
		return rental.EndpointSpec{}, err
	}
	err = read(
		into(&ch.URL, f.string, "url"),
		into(&ch.EnabledEvents, func(name string) (rental.Optional[[]string], error) {
			return decode[[]string](f, name, "a list of event types, or [\"*\"]")
		}, "enabled_events"),
		into(&ch.Description, f.string, "description"),
		into(&ch.Status, f.string, "status"),
	)
	if err != nil {
		return rental.EndpointSpec{}, err
	}
	return ch.Check(create, s.guard.CheckFunc(ctx))
}

// endpointCreate and endpointUpdate read a create or an update body (see
// endpointChange) before the transaction, the URL's DNS lookup included.
func (s *Server) endpointCreate(c *call) (rental.EndpointSpec, error) {
	return s.endpointChange(c.ctx, c.body, true)
}

func (s *Server) endpointUpdate(c *call) (rental.EndpointSpec, error) {
	return s.endpointChange(c.ctx, c.body, false)
}

func (s *Server) createEndpoint(c *call, spec rental.EndpointSpec) (int, any, error) {
	e, err := c.tx.CreateEndpoint(c.ctx, &c.caller.key.App, c.caller.mode, spec, s.secret)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, data{e}, nil
}

func (s *Server) listEndpoints(c *call) (int, any, error) {
	p, err := s.newPager(c)
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListEndpoints(c.ctx, c.caller.key.App.ID, c.caller.mode, p.page)
	return listed(s, p, endpointPosition, items, more, err)
}

func (s *Server) getEndpoint(c *call) (int, any, error) {
	return found(c.q.GetEndpoint(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("endpoint_id")))
}

func (s *Server) updateEndpoint(c *call, spec rental.EndpointSpec) (int, any, error) {
	spec.DisabledReason = "Disabled through the API."
	return found(c.tx.UpdateEndpoint(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("endpoint_id"), spec))
}

func (s *Server) deleteEndpoint(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	if err := c.tx.DeleteEndpoint(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("endpoint_id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) rotateSecret(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	e, err := c.tx.RotateSecret(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("endpoint_id"), s.secret)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{e}, nil
}

// testEndpoint sends a webhook.test event to the endpoint. The event belongs
// to an account (the sandbox for a test key), so an unbound live key names
// one in the header.
func (s *Server) testEndpoint(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	e, err := c.tx.GetEndpoint(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("endpoint_id"))
	if err != nil {
		return 0, nil, err
	}
	if err := e.CheckTestEvent(c.acct()); err != nil {
		return 0, nil, err
	}
	d, err := c.tx.RecordTestEvent(c.ctx, c.acct(), e)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, data{d}, nil
}

func (s *Server) listDeliveries(c *call) (int, any, error) {
	q := c.params
	var f store.DeliveryFilter
	var err error
	if f.Status, err = queryEnum(q, "status", rental.DeliveryPending, rental.DeliverySucceeded, rental.DeliveryFailed); err != nil {
		return 0, nil, err
	}
	if f.EventID, err = queryID(q, "event_id"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "status", "event_id")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListDeliveries(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("endpoint_id"), f, p.page)
	return listed(s, p, deliveryPosition, items, more, err)
}

func (s *Server) getDelivery(c *call) (int, any, error) {
	return found(c.q.GetDelivery(c.ctx, c.caller.key.App.ID, c.caller.mode, c.r.PathValue("delivery_id")))
}

func (s *Server) resendDelivery(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	app, mode := c.caller.key.App.ID, c.caller.mode
	d, err := c.tx.GetDelivery(c.ctx, app, mode, c.r.PathValue("delivery_id"))
	if err != nil {
		return 0, nil, err
	}
	if e, err := c.tx.GetEndpoint(c.ctx, app, mode, d.EndpointID); err != nil {
		return 0, nil, err
	} else if err := e.CheckSendable(); err != nil {
		return 0, nil, err
	}
	d, err = c.tx.Resend(c.ctx, app, mode, d.ID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, data{d}, nil
}
