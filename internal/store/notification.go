package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"rentapi/internal/rental"
)

const notificationColumns = `id, type, tenant_id, bill_id, text, status, attempts, failure_reason, sent_at, created_at, updated_at, triggered_by`

func scanNotification(sc *scanner, n *rental.Notification) error {
	*n = rental.Notification{Object: "notification", Channel: rental.ChannelLINE}
	var bill, text, reason sql.NullString
	var sent sql.NullInt64
	var created, updated int64
	err := sc.Scan(&n.ID, &n.Type, &n.TenantID, &bill, &text, &n.Status, &n.Attempts, &reason, &sent, &created, &updated, &n.Trigger)
	if bill.Valid {
		n.BillID = &bill.String
	}
	if text.Valid {
		n.Text = &text.String
	}
	if reason.Valid {
		n.FailureReason = &reason.String
	}
	n.SentAt, n.CreatedAt, n.UpdatedAt = optTime(sent), rental.UnixMilli(created), rental.UnixMilli(updated)
	return err
}

// GetNotification returns a notification of the account's landlord.
func (q *Queries) GetNotification(ctx context.Context, acct *rental.Account, id string) (*rental.Notification, error) {
	return one(ctx, q, "notification", id, `SELECT `+notificationColumns+` FROM notifications WHERE landlord_id = $1 AND id = $2`,
		[]any{acct.LandlordID, id}, scanNotification)
}

// NotificationFilter narrows a notification list.
type NotificationFilter struct {
	TenantID string
	BillID   string
	Status   string
}

// ListNotifications returns a page of the account's notifications.
func (q *Queries) ListNotifications(ctx context.Context, acct *rental.Account, f NotificationFilter, p Page) ([]rental.Notification, bool, error) {
	w := scoped(`SELECT `+notificationColumns+` FROM notifications WHERE landlord_id = $1`, acct.LandlordID).
		and("tenant_id = ?", f.TenantID).and("bill_id = ?", f.BillID).and("status = ?", f.Status)
	return list(ctx, q, w.sql, w.args, p, scanNotification)
}

// NotifySpec is what to send: a bill notice (Type and BillID) or a message
// (TenantID and Text).
type NotifySpec struct {
	Type     string
	BillID   string
	TenantID string
	Text     string
}

// CheckNotify runs every check of a send without writing anything, so the
// sending limit is only charged for a send that will be queued.
func (tx *Tx) CheckNotify(ctx context.Context, acct *rental.Account, spec NotifySpec) error {
	_, _, err := tx.notifyTarget(ctx, acct, spec)
	return err
}

// notifyTarget loads and checks the tenant (and bill) a send is for.
func (tx *Tx) notifyTarget(ctx context.Context, acct *rental.Account, spec NotifySpec) (*rental.Tenant, *rental.Bill, error) {
	tenantID := spec.TenantID
	var b *rental.Bill
	if spec.Type != rental.NotifyMessage {
		var err error
		if b, err = tx.GetBill(ctx, acct, spec.BillID); err != nil {
			return nil, nil, err
		}
		if _, err := rental.CheckNotification(spec.Type, b.Status); err != nil {
			return nil, nil, err
		}
		if tenantID, err = rental.NoticeTenant(b); err != nil {
			return nil, nil, err
		}
	}
	t, err := tx.GetTenant(ctx, acct, tenantID)
	if err != nil {
		return nil, nil, err
	}
	if err := rental.CheckReachable(t); err != nil {
		return nil, nil, err
	}
	return t, b, nil
}

// CreateNotification queues a notification and its send job in the
// transaction. A new bill notice of a draft bill issues the bill first; a
// bill notice carries the bill's active payment link when
// rental.Payee.NoticeLinks says so, made now at page when there is none.
func (tx *Tx) CreateNotification(ctx context.Context, acct *rental.Account, spec NotifySpec, page rental.PaymentPage) (*rental.Notification, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return nil, err
	}
	if spec.BillID != "" {
		if err := tx.lock(ctx, "bills", "bill", acct.LandlordID, spec.BillID); err != nil {
			return nil, err
		}
	}
	t, b, err := tx.notifyTarget(ctx, acct, spec)
	if err != nil {
		return nil, err
	}
	n := rental.Notification{ID: rental.NewID(rental.PrefixNotification), Object: "notification", Type: spec.Type, TenantID: t.ID,
		Channel: rental.ChannelLINE, Status: rental.NotificationQueued, CreatedAt: rental.Time{Time: tx.Now}, UpdatedAt: rental.Time{Time: tx.Now},
		Trigger: rental.TriggerAPI}
	notice := rental.Notice{Type: spec.Type}
	if b != nil {
		if issue, _ := rental.CheckNotification(spec.Type, b.Status); issue {
			if b, err = tx.IssueBill(ctx, acct, b.ID); err != nil {
				return nil, err
			}
		}
		n.BillID = &b.ID
		if notice, err = tx.billNotice(ctx, acct, spec.Type, b, page); err != nil {
			return nil, err
		}
	} else {
		n.Text, notice.Text = &spec.Text, spec.Text
	}
	body, err := json.Marshal(notice)
	if err != nil {
		return nil, fmt.Errorf("store: notice: %w", err)
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO notifications (id, landlord_id, tenant_id, bill_id, type, text, notice, status, retry_key,
			created_at, updated_at, send_at, triggered_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $10, $11)`,
		n.ID, acct.LandlordID, n.TenantID, n.BillID, n.Type, n.Text, tx.sealCopy(noticeText, n.ID, string(body)), n.Status, retryKey(), ms(tx.Now), n.Trigger)
	if err != nil {
		return nil, fmt.Errorf("store: create notification: %w", err)
	}
	tx.enqueue(river.InsertManyParams{Args: SendArgs{NotificationID: n.ID}})
	return &n, nil
}

// billNotice is the content of a bill notice (rental.BillNotice): the
// bill's lines with its property and room, and the payment link when
// rental.Payee.NoticeLinks says so.
func (tx *Tx) billNotice(ctx context.Context, acct *rental.Account, typ string, b *rental.Bill, page rental.PaymentPage) (rental.Notice, error) {
	p, err := tx.GetProperty(ctx, acct, b.PropertyID)
	if err != nil {
		return rental.Notice{}, err
	}
	r, err := tx.GetRoom(ctx, acct, b.RoomID)
	if err != nil {
		return rental.Notice{}, err
	}
	payee, err := tx.payee(ctx, acct.LandlordID)
	if err != nil {
		return rental.Notice{}, err
	}
	payURL := ""
	if payee.NoticeLinks(typ, b) {
		l, _, err := tx.CreatePaymentLink(ctx, acct, b.ID, page)
		if err != nil {
			return rental.Notice{}, err
		}
		payURL = l.URL
	}
	return rental.BillNotice(typ, b, p.Name, r.Number, payURL), nil
}

// Paced notices. A bill run's notices and the schedule's reminders are
// the service's own sends, not a client's: they are never refused for the
// sending limit but paced, each notice's first attempt at its slot
// (rental.PaceSends), SendInterval after the landlord's previous one.
// The landlord's next free slot is kept in its row (landlords.send_slot)
// and taken under its claim, so the pace holds across processes with no
// shared memory; the send job of each notice is scheduled at its slot.
// The API's own sends (POST /v1/notifications, /v1/messages) take no
// slot: they go at once, within their own 60 a minute (api's sending
// limit), so a bill run's queue never delays nor refuses them.

// pendingNotice is a bill notice to queue: its bill (with a tenant the
// chat reaches), and the property's name and room's number it shows.
type pendingNotice struct {
	bill           *rental.Bill
	property, room string
}

// queueBillNotices queues the notices of typ made by trigger (reminders
// of day, for the schedule), each with the bill's payment link when
// rental.Payee.NoticeLinks says so (made at page when the bill has none),
// paced from start (now; for reminders a sandbox's clock catches up on,
// the time they fell due), and returns how many it queued. A few
// statements, whatever their number.
func (tx *Tx) queueBillNotices(ctx context.Context, acct *rental.Account, typ, trigger, day string, notices []pendingNotice, start time.Time, page func() rental.PaymentPage) (int, error) {
	if len(notices) == 0 {
		return 0, nil
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return 0, err
	}
	urls, err := tx.noticeLinks(ctx, acct, typ, notices, page)
	if err != nil {
		return 0, err
	}
	var slot int64
	if err := tx.c.QueryRowContext(ctx, `SELECT send_slot FROM landlords WHERE id = $1`, acct.LandlordID).Scan(&slot); err != nil {
		return 0, fmt.Errorf("store: send slot: %w", err)
	}
	at, next := rental.PaceSends(time.UnixMilli(slot).UTC(), start, len(notices))
	var reminder any
	if day != "" {
		reminder = day
	}
	rows := make([][]any, len(notices))
	jobs := make([]river.InsertManyParams, len(notices))
	for i, n := range notices {
		id := rental.NewID(rental.PrefixNotification)
		body, err := json.Marshal(rental.BillNotice(typ, n.bill, n.property, n.room, urls[n.bill.ID]))
		if err != nil {
			return 0, fmt.Errorf("store: notice: %w", err)
		}
		rows[i] = []any{id, acct.LandlordID, *n.bill.TenantID, n.bill.ID, typ, tx.sealCopy(noticeText, id, string(body)), rental.NotificationQueued,
			retryKey(), ms(tx.Now), ms(tx.Now), ms(at[i]), trigger, reminder}
		jobs[i] = river.InsertManyParams{Args: SendArgs{NotificationID: id}}
		if at[i].After(tx.Now) {
			// The queue runs on real time: a sandbox's slot is that far
			// ahead of it.
			jobs[i].InsertOpts = &river.InsertOpts{ScheduledAt: at[i].Add(-tx.offset)}
		}
	}
	err = tx.ExecAll(ctx, tx.InsertRows(`INSERT INTO notifications (id, landlord_id, tenant_id, bill_id, type, notice, status, retry_key,
		created_at, updated_at, send_at, triggered_by, reminder_day) VALUES `, "store: queue notices", rows))
	if err != nil {
		return 0, err
	}
	if _, err := tx.c.ExecContext(ctx, `UPDATE landlords SET send_slot = $2 WHERE id = $1`, acct.LandlordID, ms(next)); err != nil {
		return 0, fmt.Errorf("store: send slot: %w", err)
	}
	tx.enqueue(jobs...)
	return len(notices), nil
}

// noticeLinks are the payment links' URLs of the notices' bills, by bill,
// for those rental.Payee.NoticeLinks gives one: each bill's active link,
// made at page for those without, a few statements for any number.
func (tx *Tx) noticeLinks(ctx context.Context, acct *rental.Account, typ string, notices []pendingNotice, page func() rental.PaymentPage) (map[string]string, error) {
	payee, err := tx.payee(ctx, acct.LandlordID)
	if err != nil {
		return nil, err
	}
	var ids []any
	for _, n := range notices {
		if payee.NoticeLinks(typ, n.bill) {
			ids = append(ids, n.bill.ID)
		}
	}
	urls := map[string]string{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 256)]
		ids = ids[len(chunk):]
		list, args := inList(2, chunk)
		rows, err := tx.c.QueryContext(ctx, `SELECT id, bill_id, url, url_sealed FROM payment_links WHERE landlord_id = $1 AND active AND bill_id IN (`+list+`)`,
			append([]any{acct.LandlordID}, args...)...)
		if err != nil {
			return nil, fmt.Errorf("store: payment links: %w", err)
		}
		for rows.Next() {
			var id, bill string
			var clear, sealed sql.NullString
			if err := rows.Scan(&id, &bill, &clear, &sealed); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: payment links: %w", err)
			}
			if urls[bill], err = tx.linkURL(id, clear, sealed); err != nil {
				rows.Close()
				return nil, err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("store: payment links: %w", err)
		}
		var made [][]any
		for _, b := range chunk {
			bill := b.(string)
			if _, ok := urls[bill]; ok {
				continue
			}
			id, p := rental.NewID(rental.PrefixPaymentLink), page()
			sealed, err := tx.sealLinkURL(id, p.URL)
			if err != nil {
				return nil, err
			}
			made = append(made, []any{id, acct.LandlordID, bill, linkTokenHash(p.Token), sealed, true, ms(tx.Now), ms(tx.Now)})
			urls[bill] = p.URL
		}
		err = tx.ExecAll(ctx, tx.InsertRows(`INSERT INTO payment_links (id, landlord_id, bill_id, token_hash, url_sealed, active, created_at, updated_at) VALUES `,
			"store: create payment links", made))
		if err != nil {
			return nil, err
		}
	}
	return urls, nil
}

// retryKey is a random UUID (version 4), the form LINE wants in
// X-Line-Retry-Key.
func retryKey() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// SendWork is what a send job needs to know of its notification.
type SendWork struct {
	rental.Notification
	LandlordID string
	Sandbox    bool
	Notice     rental.Notice
	RetryKey   string
	// LineUserID is the tenant's LINE user; Unreachable marks the sandbox's
	// tenant LINE never reaches.
	LineUserID  string
	Unreachable bool
}

// SendWork loads a notification for its send job.
func (q *Queries) SendWork(ctx context.Context, id string) (*SendWork, error) {
	var w SendWork
	var notice string
	var user sql.NullString
	row := q.c.QueryRowContext(ctx, `SELECT n.id, n.type, n.tenant_id, n.bill_id, n.text, n.status, n.attempts, n.failure_reason,
			n.sent_at, n.created_at, n.updated_at, n.triggered_by, n.landlord_id, l.sandbox, n.notice, n.retry_key, t.line_user_id, t.chat_unreachable
		FROM notifications n JOIN landlords l ON l.id = n.landlord_id JOIN tenants t ON t.id = n.tenant_id
		WHERE n.id = $1`, id)
	err := scanNotification(&scanner{src: row, more: []any{&w.LandlordID, &w.Sandbox, &notice, &w.RetryKey, &user, &w.Unreachable}}, &w.Notification)
	if err == sql.ErrNoRows {
		return nil, rental.NotFound("notification", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: send work: %w", err)
	}
	w.LineUserID = user.String
	opened, err := q.openCopy(noticeText, id, notice)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(opened, &w.Notice); err != nil {
		return nil, fmt.Errorf("store: notice of %s: %w", id, err)
	}
	return &w, nil
}

// SendResult is how one attempt of a send ended: Outcome, and for a
// failure that ends the notification (refused, or the last attempt) Final
// and the Reason.
type SendResult struct {
	Outcome rental.SendOutcome
	Final   bool
	Reason  string
}

// RecordSend records one attempt of a queued notification: sent (with
// notification.sent), failed (with notification.failed) or still queued.
// A notification no longer queued, or whose attempt of that number is
// recorded already, is left alone and moved is false, so a late run after
// a crash, or two runs of one attempt (the job's and a sandbox's clock
// catching up), record nothing twice.
func (tx *Tx) RecordSend(ctx context.Context, w *SendWork, r SendResult) (moved bool, err error) {
	acct, err := tx.landlordAccount(ctx, w.LandlordID)
	if err != nil {
		return false, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return false, err
	}
	status, sent, reason := rental.NotificationQueued, any(nil), any(nil)
	switch {
	case r.Outcome == rental.SendDone:
		status, sent = rental.NotificationSent, ms(tx.Now)
	case r.Outcome == rental.SendRefused || r.Final:
		status, reason = rental.NotificationFailed, r.Reason
	}
	res, err := tx.c.ExecContext(ctx, `UPDATE notifications SET status = $2, attempts = attempts + 1, sent_at = $3, failure_reason = $4,
			updated_at = $5 WHERE id = $1 AND status = 'queued' AND attempts = $6`, w.ID, status, sent, reason, ms(tx.Now), w.Attempts)
	if err != nil {
		return false, fmt.Errorf("store: record send: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if status == rental.NotificationQueued {
		return true, nil
	}
	n, err := tx.GetNotification(ctx, acct, w.ID)
	if err != nil {
		return false, err
	}
	return true, tx.RecordEvent(ctx, acct, "notification."+status, n)
}
