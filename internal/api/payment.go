package api

import (
	"net/http"
	"strings"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var paymentPosition = position(func(p rental.Payment) rental.Time { return p.CreatedAt }, func(p rental.Payment) string { return p.ID })

func (s *Server) createPaymentLink(c *call) (int, any, error) {
	if _, err := parseObject(c.body); err != nil {
		return 0, nil, err
	}
	l, created, err := c.tx.CreatePaymentLink(c.ctx, c.acct(), c.r.PathValue("bill_id"), rental.NewPaymentPage(s.publicURL))
	if err != nil {
		return 0, nil, err
	}
	if created {
		return http.StatusCreated, data{l}, nil
	}
	return http.StatusOK, data{l}, nil
}

var linkPosition = position(func(l rental.PaymentLink) rental.Time { return l.CreatedAt }, func(l rental.PaymentLink) string { return l.ID })

func (s *Server) listPaymentLinks(c *call) (int, any, error) {
	q := c.params
	var f store.PaymentLinkFilter
	var err error
	if f.BillID, err = queryID(q, "bill_id"); err != nil {
		return 0, nil, err
	}
	if f.Active, err = queryBool(q, "active"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "bill_id", "active")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListPaymentLinks(c.ctx, c.acct(), f, p.page)
	return listed(s, p, linkPosition, items, more, err)
}

func (s *Server) getPaymentLink(c *call) (int, any, error) {
	return found(c.q.GetPaymentLink(c.ctx, c.acct(), c.r.PathValue("payment_link_id")))
}

func (s *Server) listPayments(c *call) (int, any, error) {
	q := c.params
	var f store.PaymentFilter
	var err error
	if f.BillID, err = queryID(q, "bill_id"); err != nil {
		return 0, nil, err
	}
	if f.Status, err = queryEnum(q, "status", rental.PaymentStatuses...); err != nil {
		return 0, nil, err
	}
	if f.CreatedAfter, err = queryTime(q, "created_after"); err != nil {
		return 0, nil, err
	}
	if f.CreatedBefore, err = queryTime(q, "created_before"); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "bill_id", "status", "created_after", "created_before")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListPayments(c.ctx, c.acct(), f, p.page)
	return listed(s, p, paymentPosition, items, more, err)
}

func (s *Server) getPayment(c *call) (int, any, error) {
	return found(c.q.GetPayment(c.ctx, c.acct(), c.r.PathValue("payment_id")))
}

// simulatePayment is the sandbox's tenant and provider in one request: it
// takes the bill's payment link, opens the page as a tenant would
// (payment.pending), and ends the payment as the provider's confirmation
// (payment.paid, bill.updated) or the expiry would, through the very store
// operations those use.
func (s *Server) simulatePayment(c *call) (int, any, error) {
	if err := rental.CheckTestHelper(c.caller.mode); err != nil {
		return 0, nil, err
	}
	f, err := parseObject(c.body, "bill_id", "outcome", "amount_paid")
	if err != nil {
		return 0, nil, err
	}
	billID, err := requiredID(f, "bill_id", "bill")
	if err != nil {
		return 0, nil, err
	}
	outcome, err := required(f, "outcome")
	if err != nil {
		return 0, nil, err
	}
	if err := rental.CheckOutcome(outcome); err != nil {
		return 0, nil, err
	}
	amount, err := f.int("amount_paid")
	if err != nil {
		return 0, nil, err
	}
	if err := rental.CheckAmountPaid(outcome, amount); err != nil {
		return 0, nil, err
	}
	link, _, err := c.tx.CreatePaymentLink(c.ctx, c.acct(), billID, rental.NewPaymentPage(s.publicURL))
	if err != nil {
		return 0, nil, err
	}
	co, err := c.tx.OpenPayment(c.ctx, link.URL[strings.LastIndex(link.URL, "/")+1:])
	if err != nil {
		return 0, nil, err
	}
	if co.Payment == nil {
		return 0, nil, rental.NoQRToSimulate(co.NoQR)
	}
	p := co.Payment
	switch outcome {
	case rental.PaymentPaid:
		conf := rental.Confirmation{Provider: rental.SandboxProvider, TransactionID: rental.NewID("sbtxn"), PaymentID: p.ID,
			Amount: p.Amount, PaidAt: c.tx.Now}
		if amount.Set {
			conf.Amount = amount.Value
		}
		p, _, err = c.tx.ConfirmPayment(c.ctx, conf)
	case rental.PaymentExpired:
		p, err = c.tx.EndPayment(c.ctx, c.acct(), p.ID, rental.PaymentExpired, rental.FailureExpired)
	case rental.PaymentCanceled:
		p, err = c.tx.EndPayment(c.ctx, c.acct(), p.ID, rental.PaymentCanceled, rental.FailureTestCancel)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{p}, nil
}
