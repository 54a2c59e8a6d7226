package api

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

var slipPosition = position(func(s rental.Slip) rental.Time { return s.CreatedAt }, func(s rental.Slip) string { return s.ID })

// createSlip files a tenant app's slip against a bill: a scanned slip QR's
// text or a base64 image, checked here (type sniffed, size capped) before
// anything is stored, and verified later by the job (202).
func (s *Server) createSlip(c *call) (int, any, error) {
	if c.r.Header.Get("Idempotency-Key") == "" {
		return 0, nil, rental.Missing("Idempotency-Key")
	}
	f, err := parseObject(c.body, "qr_payload", "image")
	if err != nil {
		return 0, nil, err
	}
	var qr, image rental.Optional[string]
	if err := read(into(&qr, f.string, "qr_payload"), into(&image, f.string, "image")); err != nil {
		return 0, nil, err
	}
	if err := rental.CheckSlipInput(qr, image); err != nil {
		return 0, nil, err
	}
	in := store.SlipInput{BillID: c.r.PathValue("bill_id"), Source: rental.SlipFromAPI, QRPayload: qr.Value}
	if image.Set && !image.Null {
		if in.Image, in.ImageType, err = rental.DecodeSlipImage(image.Value); err != nil {
			return 0, nil, err
		}
	}
	if err := rental.CheckSlipsAvailable(c.acct().Sandbox, s.slipsLive); err != nil {
		return 0, nil, err
	}
	sl, err := c.tx.FileSlip(c.ctx, c.acct(), in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusAccepted, data{sl}, nil
}

func (s *Server) listSlips(c *call) (int, any, error) {
	q := c.params
	var f store.SlipFilter
	var err error
	if f.BillID, err = queryID(q, "bill_id"); err != nil {
		return 0, nil, err
	}
	if f.Status, err = queryEnum(q, "status", rental.SlipStatuses...); err != nil {
		return 0, nil, err
	}
	p, err := s.newPager(c, "bill_id", "status")
	if err != nil {
		return 0, nil, err
	}
	items, more, err := c.q.ListSlips(c.ctx, c.acct(), f, p.page)
	return listed(s, p, slipPosition, items, more, err)
}

func (s *Server) getSlip(c *call) (int, any, error) {
	return found(c.q.GetSlip(c.ctx, c.acct(), c.r.PathValue("slip_id")))
}

// simulateSlip is the sandbox's tenant app and provider in one request: a
// slip filed as the API files one, settled at once with the outcome.
func (s *Server) simulateSlip(c *call) (int, any, error) {
	if err := rental.CheckTestHelper(c.caller.mode); err != nil {
		return 0, nil, err
	}
	f, err := parseObject(c.body, "bill_id", "outcome", "amount")
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
	amount, err := f.int("amount")
	if err != nil {
		return 0, nil, err
	}
	if err := rental.CheckSlipOutcome(outcome, amount); err != nil {
		return 0, nil, err
	}
	sl, err := c.tx.SimulateSlip(c.ctx, c.acct(), billID, outcome, amount.Value)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{sl}, nil
}
