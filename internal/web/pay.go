package web

import (
	"bytes"
	"net/http"
	"strings"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// payArea is the tenant's payment page: no one signs in (the token in the
// path is its only credential), and its errors are short bilingual pages
// in its own look (page.html), not the signed-in areas' layout.
var payArea = area{Base: "/pay"}

// handlePay is a tenant opening the payment page: it opens (or reopens)
// the payment, and shows the bill with the QR or why there is none, the
// slip form below it while the bill is unpaid, and the state of its newest
// slip.
func (s *site) handlePay(w http.ResponseWriter, r *http.Request, _ *visit) error {
	var co *store.Checkout
	err := s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
		co, err = tx.OpenPayment(r.Context(), r.PathValue("token"))
		return err
	})
	if err != nil {
		return err
	}
	v := newView(co)
	if s.takesSlip(co) {
		v.Upload = "/pay/" + r.PathValue("token") + "/slip"
	}
	var buf bytes.Buffer
	if err := s.pay.Execute(&buf, v); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
	return nil
}

// handlePayHead answers a HEAD of a payment page with the page's status
// and type but opens no payment: only a tenant's GET starts a QR's 15
// minutes.
func (s *site) handlePayHead(w http.ResponseWriter, r *http.Request, _ *visit) error {
	if err := s.db.Read().PaymentLinkExists(r.Context(), r.PathValue("token")); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return nil
}

// handleQR serves the QR image of a pending payment of the link.
func (s *site) handleQR(w http.ResponseWriter, r *http.Request, _ *visit) error {
	payment, ok := strings.CutSuffix(r.PathValue("payment"), ".png")
	if !ok {
		return rental.NotFound("payment", "")
	}
	payload, err := s.db.Read().PendingQR(r.Context(), r.PathValue("token"), payment, s.db.Now())
	if err != nil {
		return err
	}
	png, err := promptpay.PNG(payload, 320)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	w.Write(png)
	return nil
}
