package web

import (
	"errors"
	"io"
	"mime/multipart"
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// A tenant who paid the QR (or transferred by hand) sends the bank app's
// slip from the payment page: a plain multipart form below the QR, which
// works without JavaScript. The slip is filed as the API and LINE file
// theirs (store.FileSlip: one rule, one state machine, the same
// verification job) and the page, reloaded by the redirect, shows its
// state. The picture is personal data: it is capped before it is read,
// sniffed by its bytes, and never logged.

// slipField is the form's file field.
const slipField = "slip"

// maxSlipForm is the most a slip form's body may be: the picture's cap
// and room for the multipart framing around it.
const maxSlipForm = rental.MaxPageSlipImage + 16<<10

// slipRefusal is an upload the payment page refuses: its status and what
// the page says, in Thai and English, with the way back to the form.
type slipRefusal struct {
	status int
	th, en string
	back   string
}

func (e *slipRefusal) Error() string   { return "slip upload refused: " + e.en }
func (e *slipRefusal) HTTPStatus() int { return e.status }

// handleSlip takes a slip picture uploaded on the payment page of the
// token, then sends the browser back to the page (POST-redirect-GET),
// where the slip's state shows. Nothing is stored for a refused upload.
func (s *site) handleSlip(w http.ResponseWriter, r *http.Request, _ *visit) error {
	token := r.PathValue("token")
	back := "/pay/" + token
	// A forged token is the payment pages' 404, before any picture is read.
	if err := s.db.Read().PaymentLinkExists(r.Context(), token); err != nil {
		return err
	}
	image, err := readSlip(w, r)
	if err != nil {
		if rf, ok := errors.AsType[*slipRefusal](err); ok {
			rf.back = back
		}
		return err
	}
	typ, err := rental.SniffSlipImage(slipField, image, rental.MaxPageSlipImage)
	if err != nil {
		return &slipRefusal{status: http.StatusBadRequest, back: back,
			th: "ไฟล์นี้ไม่ใช่รูปภาพ JPEG หรือ PNG กรุณาส่งภาพหน้าจอสลิปจากแอปธนาคาร",
			en: "This file is not a JPEG or PNG picture. Send the screenshot of the slip from your bank app."}
	}
	err = s.db.InTx(r.Context(), func(tx *store.Tx) error {
		_, err := tx.FilePageSlip(r.Context(), token, image, typ, s.slipsLive)
		return err
	})
	if e, ok := rental.AsError(err); ok && e.Kind == rental.KindConflict {
		th, known := slipConflictWords[e.Code]
		if !known {
			th = slipConflictWords["bill_not_payable"]
		}
		return &slipRefusal{status: http.StatusConflict, back: back, th: th, en: e.Message}
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, back+"#slip", http.StatusSeeOther)
	return nil
}

// slipConflictWords say in Thai why a bill takes no slip now, by the
// refusal's code; the English is the domain's message.
var slipConflictWords = map[string]string{
	"slips_not_available": "ขณะนี้ยังไม่รับสลิปทางหน้านี้ กรุณาติดต่อเจ้าของหอพัก",
	"bill_not_payable":    "บิลนี้ยังรับสลิปไม่ได้ กรุณาติดต่อเจ้าของหอพัก",
}

// readSlip reads the form's slip picture: a body over the cap is refused
// before it is read (by its Content-Length, else as it arrives), a form
// without a picture is refused too.
func readSlip(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	tooLarge := &slipRefusal{status: http.StatusRequestEntityTooLarge,
		th: "ไฟล์ใหญ่เกิน 2 MB กรุณาส่งภาพหน้าจอสลิปแทนภาพถ่าย",
		en: "The picture is larger than 2 MB. Send a screenshot of the slip rather than a photo."}
	empty := &slipRefusal{status: http.StatusBadRequest,
		th: "ยังไม่ได้เลือกไฟล์ กรุณาเลือกภาพสลิปก่อนกดส่ง",
		en: "No picture was chosen. Choose the slip's picture, then send it."}
	if r.ContentLength > maxSlipForm {
		w.Header().Set("Connection", "close")
		return nil, tooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxSlipForm)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, empty
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, empty
		}
		if err != nil {
			return nil, uploadError(err, tooLarge, empty)
		}
		if part.FormName() != slipField {
			continue
		}
		b, err := readPart(part)
		switch {
		case err != nil:
			return nil, uploadError(err, tooLarge, empty)
		case len(b) > rental.MaxPageSlipImage:
			return nil, tooLarge
		case len(b) == 0:
			return nil, empty
		}
		return b, nil
	}
}

// readPart reads a form part up to one byte past the picture's cap.
func readPart(p *multipart.Part) ([]byte, error) {
	defer p.Close()
	return io.ReadAll(io.LimitReader(p, rental.MaxPageSlipImage+1))
}

// uploadError is the refusal of a body that broke off: too large when it
// passed the cap, else a form that is not one.
func uploadError(err error, tooLarge, bad *slipRefusal) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return tooLarge
	}
	return bad
}

// slipView is the state of the bill's newest slip on the payment page.
type slipView struct {
	Status string
	// ReasonTH and ReasonEN say why a rejected slip was not taken.
	ReasonTH, ReasonEN string
	// Amount is what a verified slip paid.
	Amount int64
}

// newSlipView shows a slip's state; nil without a slip.
func newSlipView(sl *rental.Slip) *slipView {
	if sl == nil {
		return nil
	}
	v := &slipView{Status: sl.Status}
	if sl.Amount != nil && sl.Status == rental.SlipVerified {
		v.Amount = *sl.Amount
	}
	if sl.RejectionReason != nil {
		v.ReasonTH, v.ReasonEN = rental.SlipReason(*sl.RejectionReason)
	}
	return v
}

// takesSlip tells whether the payment page shows the slip form: while the
// bill is unpaid, its link is the active one and its slip can be verified
// (FilePageSlip's rules).
func (s *site) takesSlip(co *store.Checkout) bool {
	unpaid := co.Bill.Status == rental.BillIssued || co.Bill.Status == rental.BillOverdue
	return unpaid && co.NoQR != rental.NoQRInactive && rental.CheckSlipsAvailable(co.Sandbox, s.slipsLive) == nil
}
