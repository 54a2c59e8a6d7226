package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var notificationPosition = position(func(n rental.Notification) rental.Time { return n.CreatedAt }, func(n rental.Notification) string { return n.ID })

func (s *Server) createNotification(c *call) (int, any, error) {
	f, err := parseObject(c.body, "type", "bill_id")
	if err != nil {
		return 0, nil, err
	}
	var typ, bill rental.Optional[string]
	if err := read(into(&typ, f.string, "type"), into(&bill, f.string, "bill_id")); err != nil {
		return 0, nil, err
	}
	if !typ.Set || typ.Null {
		return 0, nil, rental.Missing("type")
	}
	if !bill.Set || bill.Null || bill.Value == "" {
		return 0, nil, rental.Missing("bill_id")
	}
	if err := rental.CheckNotificationType(typ.Value); err != nil {
		return 0, nil, err
	}
	return s.send(c, store.NotifySpec{Type: typ.Value, BillID: bill.Value})
}

func (s *Server) createMessage(c *call) (int, any, error) {
	f, err := parseObject(c.body, "tenant_id", "text")
	if err != nil {
		return 0, nil, err
	}
	var tenant, text rental.Optional[string]
	if err := read(into(&tenant, f.string, "tenant_id"), into(&text, f.string, "text")); err != nil {
		return 0, nil, err
	}
	if !tenant.Set || tenant.Null || tenant.Value == "" {
		return 0, nil, rental.Missing("tenant_id")
	}
	if !text.Set || text.Null {
		return 0, nil, rental.Missing("text")
	}
	if err := rental.CheckMessageText(text.Value); err != nil {
		return 0, nil, err
	}
	return s.send(c, store.NotifySpec{Type: rental.NotifyMessage, TenantID: tenant.Value, Text: text.Value})
}

// send queues a notification: with an Idempotency-Key only (the spec says
// always send one: a send has no natural key), through a LINE channel in
// live mode, and within the account's sending limit, charged only once
// every check has passed (a replay never reaches here).
func (s *Server) send(c *call, spec store.NotifySpec) (int, any, error) {
	if c.r.Header.Get("Idempotency-Key") == "" {
		return 0, nil, rental.Missing("Idempotency-Key")
	}
	if !c.acct().Sandbox && !s.chatLive {
		return 0, nil, rental.ChatUnavailable()
	}
	if err := c.tx.CheckNotify(c.ctx, c.acct(), spec); err != nil {
		return 0, nil, err
	}
	if err := s.limits.sending(c.ctx, c.acct(), s.now()); err != nil {
		return 0, nil, err
	}
	n, err := c.tx.CreateNotification(c.ctx, c.acct(), spec, rental.NewPaymentPage(s.publicURL))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, data{n}, nil
}

func (s *Server) listNotifications(c *call) (int, any, error) {
	q := c.params
	var f store.NotificationFilter
	var err error
	if f.TenantID, err = queryID(q, "tenant_id"); err != nil {
		return 0, nil, err
	}
	if f.BillID, err = queryID(q, "bill_id"); err != nil {
		return 0, nil, err
	}
	if f.Status, err = queryEnum(q, "status", rental.NotificationStatuses...); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "tenant_id", "bill_id", "status")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListNotifications(c.ctx, c.acct(), f, p.page)
	return listed(s, p, notificationPosition, items, more, err)
}

func (s *Server) getNotification(c *call) (int, any, error) {
	return found(c.q.GetNotification(c.ctx, c.acct(), c.r.PathValue("notification_id")))
}
