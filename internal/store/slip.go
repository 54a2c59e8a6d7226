package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// SlipProvider is the provider name a live slip's payment is confirmed
// under (its transaction ID the slip's reference). The colon keeps it apart
// from every provider an operator configures for signed confirmations;
// sandbox slips are confirmed under rental.SandboxProvider, as every sandbox
// payment is.
const SlipProvider = "slip:easyslip"

// SlipInput is a slip as one of the three ways in hands it over: the bill
// it pays, where it came from (rental.SlipFromPage, SlipFromLINE or
// SlipFromAPI), and exactly one of the slip QR's text (checked by
// rental.CheckSlipInput) or its image, already sniffed and capped by
// rental.SniffSlipImage (ImageType is what it returned).
type SlipInput struct {
	BillID    string
	Source    string
	QRPayload string
	Image     []byte
	ImageType string
}

const slipColumns = `id, bill_id, payment_id, status, rejection_reason, amount, trans_ref, sending_bank, transferred_at, source, created_at, updated_at`

func scanSlip(sc *scanner, s *rental.Slip) error {
	*s = rental.Slip{Object: "slip", Currency: rental.Currency}
	var payment, reason, ref, bank sql.NullString
	var amount, transferred nullInteger
	var created, updated integer
	err := sc.Scan(&s.ID, &s.BillID, &payment, &s.Status, &reason, &amount, &ref, &bank, &transferred, &s.Source, &created, &updated)
	if payment.Valid {
		s.PaymentID = &payment.String
	}
	if reason.Valid {
		s.RejectionReason = &reason.String
	}
	if amount.Valid {
		s.Amount = &amount.Int64
	}
	if ref.Valid {
		s.TransRef = &ref.String
	}
	if bank.Valid {
		s.SendingBank = &bank.String
	}
	s.TransferredAt = optTime(sql.NullInt64(transferred))
	s.CreatedAt, s.UpdatedAt = rental.UnixMilli(int64(created)), rental.UnixMilli(int64(updated))
	return err
}

// GetSlip returns a slip of the account's landlord.
func (q *Queries) GetSlip(ctx context.Context, acct *rental.Account, id string) (*rental.Slip, error) {
	return one(ctx, q, "slip", id, `SELECT `+slipColumns+` FROM slips WHERE landlord_id = $1 AND id = $2`,
		[]any{acct.LandlordID, id}, scanSlip)
}

// SlipFilter narrows a slip list.
type SlipFilter struct {
	BillID string
	Status string
}

// ListSlips returns a page of the account's slips.
func (q *Queries) ListSlips(ctx context.Context, acct *rental.Account, f SlipFilter, p Page) ([]rental.Slip, bool, error) {
	w := scoped(`SELECT `+slipColumns+` FROM slips WHERE landlord_id = $1`, acct.LandlordID).
		and("bill_id = ?", f.BillID).and("status = ?", f.Status)
	return list(ctx, q, w.sql, w.args, p, scanSlip)
}

// FileSlip files a tenant's slip against one of the account's bills and
// queues its verification job in the same transaction: the one entry
// point of the payment page, LINE and the API. The bill must be issued,
// overdue or paid (rental.CheckSlipBill). Nothing is verified here: the
// job asks the provider, never the request.
func (tx *Tx) FileSlip(ctx context.Context, acct *rental.Account, in SlipInput) (*rental.Slip, error) {
	s, err := tx.fileSlip(ctx, acct, in)
	if err != nil {
		return nil, err
	}
	tx.enqueue(river.InsertManyParams{Args: SlipArgs{SlipID: s.ID}})
	return s, nil
}

// fileSlip stores a pending slip and its image, without its job.
func (tx *Tx) fileSlip(ctx context.Context, acct *rental.Account, in SlipInput) (*rental.Slip, error) {
	if (in.QRPayload == "") == (in.Image == nil) {
		return nil, errors.New("store: a slip needs exactly one of a QR payload or an image")
	}
	if in.Image != nil && in.ImageType != rental.ImageJPEG && in.ImageType != rental.ImagePNG {
		return nil, fmt.Errorf("store: a slip image of type %q was not sniffed", in.ImageType)
	}
	if in.Source != rental.SlipFromPage && in.Source != rental.SlipFromLINE && in.Source != rental.SlipFromAPI {
		return nil, fmt.Errorf("store: unknown slip source %q", in.Source)
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "bills", "bill", acct.LandlordID, in.BillID); err != nil {
		return nil, err
	}
	b, err := tx.GetBill(ctx, acct, in.BillID)
	if err != nil {
		return nil, err
	}
	if err := rental.CheckSlipBill(b.Status); err != nil {
		return nil, err
	}
	now := rental.Time{Time: tx.Now}
	s := &rental.Slip{ID: rental.NewID(rental.PrefixSlip), Object: "slip", BillID: b.ID, Status: rental.SlipPending,
		Currency: rental.Currency, Source: in.Source, CreatedAt: now, UpdatedAt: now}
	var qr sql.NullString
	if in.QRPayload != "" {
		qr = sql.NullString{String: in.QRPayload, Valid: true}
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO slips (id, landlord_id, bill_id, status, source, qr_payload, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`, s.ID, acct.LandlordID, s.BillID, s.Status, s.Source, qr, ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: file slip: %w", err)
	}
	if in.Image != nil {
		_, err = tx.c.ExecContext(ctx, `INSERT INTO slip_images (slip_id, landlord_id, content_type, data, created_at) VALUES ($1, $2, $3, $4, $5)`,
			s.ID, acct.LandlordID, in.ImageType, in.Image, ms(tx.Now))
		if err != nil {
			return nil, fmt.Errorf("store: file slip image: %w", err)
		}
	}
	return s, nil
}

// SlipWork is what a verification attempt needs: the slip's state, its
// landlord's mode, and what to send the provider (the QR text or the
// image; both empty once the retention sweep deleted them).
type SlipWork struct {
	ID         string
	LandlordID string
	Sandbox    bool
	Status     string
	QRPayload  string
	Image      []byte
}

// SlipWork reads a slip for its job, whatever its landlord.
func (q *Queries) SlipWork(ctx context.Context, id string) (*SlipWork, error) {
	w := &SlipWork{ID: id}
	var qr sql.NullString
	err := q.c.QueryRowContext(ctx, `SELECT s.landlord_id, l.sandbox, s.status, s.qr_payload, i.data
		FROM slips s JOIN landlords l ON l.id = s.landlord_id LEFT JOIN slip_images i ON i.slip_id = s.id WHERE s.id = $1`, id).
		Scan(&w.LandlordID, &w.Sandbox, &w.Status, &qr, &w.Image)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("slip", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: slip %s: %w", id, err)
	}
	w.QRPayload = qr.String
	return w, nil
}

// SlipVerdict is what a verification attempt found: the provider's reading
// of the slip (to be judged by rental.JudgeSlip), or a rejection the
// provider's answer decided (Reason: unreadable, duplicate_slip,
// provider_unavailable). In the sandbox, Simulated reads the slip as
// paying the landlord's receiver rental.SandboxAmount of the bill.
type SlipVerdict struct {
	Reading   *rental.SlipReading
	Reason    string
	Simulated bool
}

// SettleSlip applies a verification's verdict to a pending slip, once: a
// slip settled before (the job ran again) is returned as it is. A slip
// the rule verifies gets its payment recorded exactly as a provider's
// confirmation is (ConfirmPayment: payment.paid once, bill.updated, the
// bill paid once covered), then slip.verified; a rejected one gets
// slip.rejected. The tenant is answered over LINE when the chat reaches
// them (answerSlip). When another landlord's slip of the same transfer was
// verified at the same moment, the unique index refuses this one, and it
// is judged again, as the duplicate it is.
func (db *DB) SettleSlip(ctx context.Context, id string, v SlipVerdict) (*rental.Slip, error) {
	var s *rental.Slip
	settle := func(tx *Tx) (err error) {
		s, err = tx.settleSlip(ctx, id, v)
		return err
	}
	err := db.InTx(ctx, settle)
	if database.IsUniqueViolation(err) {
		err = db.InTx(ctx, settle)
	}
	return s, err
}

func (tx *Tx) settleSlip(ctx context.Context, id string, v SlipVerdict) (*rental.Slip, error) {
	var landlordID string
	if err := tx.c.QueryRowContext(ctx, `SELECT landlord_id FROM slips WHERE id = $1`, id).Scan(&landlordID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, rental.NotFound("slip", id)
		}
		return nil, fmt.Errorf("store: slip %s: %w", id, err)
	}
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if err := tx.lock(ctx, "slips", "slip", landlordID, id); err != nil {
		return nil, err
	}
	s, err := tx.GetSlip(ctx, acct, id)
	if err != nil || s.Status != rental.SlipPending {
		return s, err
	}
	if err := tx.judgeSlip(ctx, acct, s, v); err != nil {
		return nil, err
	}
	return s, tx.answerSlip(ctx, acct, s)
}

// judgeSlip decides a pending slip by the rule and records the outcome.
func (tx *Tx) judgeSlip(ctx context.Context, acct *rental.Account, s *rental.Slip, v SlipVerdict) error {
	reason, reading := v.Reason, v.Reading
	if v.Simulated && reason == "" {
		r, err := tx.simulatedReading(ctx, acct, s.BillID, 0)
		if err != nil {
			return err
		}
		reading = &r
	}
	if reason == "" && reading == nil {
		reason = rental.RejectUnreadable
	}
	if reason == "" {
		var seen string
		err := tx.c.QueryRowContext(ctx, `SELECT id FROM slips WHERE trans_ref = $1 AND status = $2`, reading.TransRef, rental.SlipVerified).Scan(&seen)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: slip reference: %w", err)
		}
		payee, err := tx.payee(ctx, acct.LandlordID)
		if err != nil {
			return err
		}
		reason = rental.JudgeSlip(*reading, payee.Receiver, seen != "")
	}
	if reason != "" {
		if err := s.Reject(reason, reading, tx.Now); err != nil {
			return err
		}
		if err := tx.saveSlip(ctx, acct, s); err != nil {
			return err
		}
		return tx.RecordEvent(ctx, acct, "slip.rejected", s)
	}
	return tx.verifySlip(ctx, acct, s, *reading)
}

// verifySlip records the payment of a verified slip: a payment of the
// slip's amount made for it and confirmed through ConfirmPayment, the very
// path of a provider's confirmation, with the slip's reference as the
// transaction ID.
func (tx *Tx) verifySlip(ctx context.Context, acct *rental.Account, s *rental.Slip, r rental.SlipReading) error {
	payID := rental.NewID(rental.PrefixPayment)
	if err := s.Verify(r, payID, tx.Now); err != nil {
		return err
	}
	// The slip first: its reference takes the unique index before anything
	// else is written.
	if err := tx.saveSlip(ctx, acct, s); err != nil {
		return err
	}
	_, err := tx.c.ExecContext(ctx, `INSERT INTO payments (id, landlord_id, bill_id, status, amount, qr_payload, expires_at, slip_id, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, '', $6, $7, $6, $6)`, payID, acct.LandlordID, s.BillID, rental.PaymentPending, r.Amount, ms(tx.Now), s.ID)
	if err != nil {
		return fmt.Errorf("store: slip payment: %w", err)
	}
	provider := SlipProvider
	if acct.Sandbox {
		provider = rental.SandboxProvider
	}
	if _, _, err := tx.ConfirmPayment(ctx, rental.Confirmation{Provider: provider, TransactionID: r.TransRef, PaymentID: payID,
		Amount: r.Amount, PaidAt: r.TransferredAt}); err != nil {
		return err
	}
	return tx.RecordEvent(ctx, acct, "slip.verified", s)
}

// saveSlip writes a slip's state.
func (tx *Tx) saveSlip(ctx context.Context, acct *rental.Account, s *rental.Slip) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE slips SET status = $3, rejection_reason = $4, payment_id = $5, amount = $6, trans_ref = $7,
			sending_bank = $8, transferred_at = $9, updated_at = $10
		WHERE landlord_id = $1 AND id = $2`,
		acct.LandlordID, s.ID, s.Status, s.RejectionReason, s.PaymentID, s.Amount, s.TransRef, s.SendingBank, nullTime(s.TransferredAt), ms(tx.Now))
	if err != nil {
		return fmt.Errorf("store: save slip: %w", err)
	}
	return nil
}

// simulatedReading is the sandbox provider's reading of a slip of the
// bill: amount (rental.SandboxAmount when 0) to the landlord's own
// receiver, under a fresh reference.
func (tx *Tx) simulatedReading(ctx context.Context, acct *rental.Account, billID string, amount int64) (rental.SlipReading, error) {
	b, err := tx.GetBill(ctx, acct, billID)
	if err != nil {
		return rental.SlipReading{}, err
	}
	payee, err := tx.payee(ctx, acct.LandlordID)
	if err != nil {
		return rental.SlipReading{}, err
	}
	if amount == 0 {
		amount = rental.SandboxAmount(b)
	}
	r := rental.SlipReading{TransRef: "SBX" + strings.ToUpper(strings.TrimPrefix(rental.NewID("x"), "x_")), Amount: amount,
		SendingBank: "KBANK", TransferredAt: tx.Now.Add(-2 * time.Minute)}
	if payee.Receiver != nil {
		r.Receivers = []string{payee.Receiver.ID}
	}
	return r, nil
}

// SimulateSlip is the sandbox's tenant app and provider in one: it files a
// slip against the bill (source api) and settles it at once with the
// outcome, verified (for amount, or what is still owed when 0) or
// rejected with the outcome as its reason. No job is queued.
func (tx *Tx) SimulateSlip(ctx context.Context, acct *rental.Account, billID, outcome string, amount int64) (*rental.Slip, error) {
	s, err := tx.fileSlip(ctx, acct, SlipInput{BillID: billID, Source: rental.SlipFromAPI, QRPayload: "test_helper_" + outcome})
	if err != nil {
		return nil, err
	}
	v := SlipVerdict{Reason: outcome}
	if outcome == rental.SlipVerified {
		r, err := tx.simulatedReading(ctx, acct, billID, amount)
		if err != nil {
			return nil, err
		}
		v = SlipVerdict{Reading: &r}
	}
	if err := tx.judgeSlip(ctx, acct, s, v); err != nil {
		return nil, err
	}
	return tx.GetSlip(ctx, acct, s.ID)
}

// PurgeSlipImages deletes slips' images and QR texts past
// rental.SlipImageRetention on the store's clock; the slips themselves
// stay as the landlord's record.
func (db *DB) PurgeSlipImages(ctx context.Context) (int64, error) {
	cutoff := ms(db.now().Add(-rental.SlipImageRetention))
	n, err := db.purge(ctx, "slip images", "slip_images", "created_at < $1", cutoff)
	if err != nil {
		return 0, err
	}
	if _, err := db.WritePool().ExecContext(ctx, `UPDATE slips SET qr_payload = NULL WHERE qr_payload IS NOT NULL AND created_at < $1`, cutoff); err != nil {
		return n, fmt.Errorf("store: purge slip QR texts: %w", err)
	}
	return n, nil
}

// seedSlips gives a sandbox's sample data a verified slip (the one its
// earliest paid bill was paid with) and a rejected one (a transfer to
// someone else, against its earliest unpaid bill).
func (tx *Tx) seedSlips(ctx context.Context, acct *rental.Account) error {
	var billID, payID string
	var amount, paidAt int64
	err := tx.c.QueryRowContext(ctx, `SELECT bill_id, id, amount, paid_at FROM payments WHERE landlord_id = $1 AND status = $2
		ORDER BY created_at, id LIMIT 1`, acct.LandlordID, rental.PaymentPaid).Scan(&billID, &payID, &amount, &paidAt)
	if err != nil {
		return fmt.Errorf("store: sandbox slips: %w", err)
	}
	ref := "SBX" + strings.ToUpper(strings.TrimPrefix(rental.NewID("x"), "x_"))
	slipID := rental.NewID(rental.PrefixSlip)
	_, err = tx.c.ExecContext(ctx, `INSERT INTO slips (id, landlord_id, bill_id, payment_id, status, amount, trans_ref, sending_bank,
			transferred_at, source, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, 'KBANK', $8, $9, $8, $8)`,
		slipID, acct.LandlordID, billID, payID, rental.SlipVerified, amount, ref, paidAt, rental.SlipFromPage)
	if err != nil {
		return fmt.Errorf("store: sandbox slips: %w", err)
	}
	if _, err := tx.c.ExecContext(ctx, `UPDATE payments SET slip_id = $2 WHERE id = $1`, payID, slipID); err != nil {
		return fmt.Errorf("store: sandbox slips: %w", err)
	}
	err = tx.c.QueryRowContext(ctx, `SELECT id FROM bills WHERE landlord_id = $1 AND status IN ($2, $3) ORDER BY created_at, id LIMIT 1`,
		acct.LandlordID, rental.BillIssued, rental.BillOverdue).Scan(&billID)
	if err != nil {
		return fmt.Errorf("store: sandbox slips: %w", err)
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO slips (id, landlord_id, bill_id, status, rejection_reason, amount, trans_ref, sending_bank,
			transferred_at, source, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 150000, $6, 'SCB', $7, $8, $7, $7)`,
		rental.NewID(rental.PrefixSlip), acct.LandlordID, billID, rental.SlipRejected, rental.RejectReceiver,
		"SBX"+strings.ToUpper(strings.TrimPrefix(rental.NewID("x"), "x_")), ms(tx.Now.Add(-time.Hour)), rental.SlipFromLINE)
	if err != nil {
		return fmt.Errorf("store: sandbox slips: %w", err)
	}
	return nil
}

// FilePageSlip files the slip image a tenant uploaded on the payment page
// of token against the link's bill (source payment_page), as FileSlip
// does. An unknown token is not found; a link a newer one replaced takes
// no slip (409 bill_not_payable); live, without a provider (live false),
// 409 slips_not_available.
func (tx *Tx) FilePageSlip(ctx context.Context, token string, image []byte, imageType string, live bool) (*rental.Slip, error) {
	var landlordID, billID string
	var active bool
	err := tx.c.QueryRowContext(ctx, `SELECT landlord_id, bill_id, active FROM payment_links WHERE token_hash = $1`, linkTokenHash(token)).
		Scan(&landlordID, &billID, &active)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("payment_link", "")
	}
	if err != nil {
		return nil, fmt.Errorf("store: page slip: %w", err)
	}
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return nil, err
	}
	if err := rental.CheckSlipsAvailable(acct.Sandbox, live); err != nil {
		return nil, err
	}
	if !active {
		return nil, rental.Conflict("bill_not_payable", "This payment link was replaced by a newer one: ask your landlord for the link to your bill.")
	}
	return tx.FileSlip(ctx, acct, SlipInput{BillID: billID, Source: rental.SlipFromPage, Image: image, ImageType: imageType})
}

// LineSlipBill is the bill a slip a LINE user sends pays: the oldest unpaid
// (issued or overdue) bill of the current tenants registered to the user,
// whatever their landlords, with its account. tenant is false for a user
// who is no registered tenant; billID is empty for a tenant with nothing to
// pay.
func (q *Queries) LineSlipBill(ctx context.Context, lineUserID string) (acct *rental.Account, billID string, tenant bool, err error) {
	var tenants int
	if err := q.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM tenants WHERE line_user_id = $1 AND chat_registered AND moved_out_at IS NULL`,
		lineUserID).Scan(&tenants); err != nil {
		return nil, "", false, fmt.Errorf("store: LINE tenant: %w", err)
	}
	if tenants == 0 {
		return nil, "", false, nil
	}
	var landlordID string
	err = q.c.QueryRowContext(ctx, `SELECT b.landlord_id, b.id FROM bills b JOIN tenants t ON t.id = b.tenant_id
		WHERE t.line_user_id = $1 AND t.chat_registered AND t.moved_out_at IS NULL AND b.status IN ($2, $3)
		ORDER BY b.month, b.created_at, b.id LIMIT 1`, lineUserID, rental.BillIssued, rental.BillOverdue).Scan(&landlordID, &billID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", true, nil
	}
	if err != nil {
		return nil, "", true, fmt.Errorf("store: LINE tenant's bill: %w", err)
	}
	acct, err = q.landlordAccount(ctx, landlordID)
	return acct, billID, true, err
}

// latestSlip is the newest slip of a bill, whichever way it came in: the
// one its payment page shows; nil when it has none.
func (q *Queries) latestSlip(ctx context.Context, acct *rental.Account, billID string) (*rental.Slip, error) {
	s, err := one(ctx, q, "slip", "", `SELECT `+slipColumns+` FROM slips WHERE landlord_id = $1 AND bill_id = $2
		ORDER BY created_at DESC, id DESC LIMIT 1`, []any{acct.LandlordID, billID}, scanSlip)
	if rental.IsNotFound(err) {
		return nil, nil
	}
	return s, err
}

// answerSlip queues what the tenant is sent over LINE about a slip just
// settled (rental.SlipAnswer), in the settling transaction, so a crash
// loses neither: nothing when the bill has no tenant the chat reaches.
func (tx *Tx) answerSlip(ctx context.Context, acct *rental.Account, s *rental.Slip) error {
	b, err := tx.GetBill(ctx, acct, s.BillID)
	if err != nil {
		return err
	}
	typ := rental.SlipAnswer(s, b.Status)
	if typ == "" || b.TenantID == nil {
		return nil
	}
	t, err := tx.GetTenant(ctx, acct, *b.TenantID)
	if err != nil {
		return err
	}
	if rental.CheckReachable(t) != nil {
		return nil
	}
	spec := NotifySpec{Type: typ, BillID: b.ID}
	if typ == rental.NotifyMessage {
		spec = NotifySpec{Type: typ, TenantID: t.ID, Text: rental.SlipResultText(s, max(b.Total-b.AmountPaid, 0))}
	}
	_, err = tx.CreateNotification(ctx, acct, spec, rental.PaymentPage{})
	return err
}
