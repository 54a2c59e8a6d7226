package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"rentapi/internal/rental"
)

// Scheduled reminders: every day at rental.ReminderHour (Thailand time,
// on the landlord's clock) each bill rental.RemindsOn names gets a
// payment_reminder (trigger schedule) for its tenant, when the chat
// reaches them, paced like a bill run's notices. Exactly once per bill and
// day: the landlord's claim serializes its sweeps, which pass over the
// bills reminded that day already, and the notifications' unique
// (bill_id, reminder_day) stops any second one. landlords.reminders_day,
// the last day queued, spares the every-minute sweep the landlords done
// for the day.

// ReminderLandlords lists who the reminder sweep has work for at now (real
// time): the landlords with a property's schedule whose day's reminders
// are due (rental.RemindersDue) and not queued yet, and the sandboxes
// running ahead of real time with a schedule (their day is their clock's:
// SendReminders judges).
func (q *Queries) ReminderLandlords(ctx context.Context, now time.Time) ([]string, error) {
	const scheduled = `EXISTS (SELECT 1 FROM properties p WHERE p.landlord_id = l.id AND p.reminders IS NOT NULL)`
	moved := `SELECT l.id FROM landlords l WHERE l.clock_offset <> 0 AND ` + scheduled
	day, ok := rental.RemindersDue("", now)
	if !ok {
		return q.landlordsWhere(ctx, moved)
	}
	return q.landlordsWhere(ctx, `SELECT l.id FROM landlords l WHERE (l.reminders_day IS NULL OR l.reminders_day < $1) AND `+scheduled+
		` UNION `+moved, day)
}

// SendReminders queues the landlord's reminders of its today, once its
// ReminderHour has passed, unless they are queued already
// (rental.RemindersDue on the landlord's clock), paced from now; it
// returns how many it queued.
func (tx *Tx) SendReminders(ctx context.Context, landlordID string) (int, error) {
	acct, err := tx.landlordAccount(ctx, landlordID)
	if err != nil {
		return 0, err
	}
	if err := tx.Claim(ctx, acct); err != nil {
		return 0, err
	}
	var last sql.NullString
	if err := tx.c.QueryRowContext(ctx, `SELECT reminders_day FROM landlords WHERE id = $1`, landlordID).Scan(&last); err != nil {
		return 0, fmt.Errorf("store: reminders day: %w", err)
	}
	day, ok := rental.RemindersDue(last.String, tx.Now)
	if !ok {
		return 0, nil
	}
	return tx.queueReminders(ctx, acct, day, tx.Now)
}

// CatchUpReminders queues the landlord's reminders of day as if queued at
// its ReminderHour, paced from then: what a sandbox's clock moved past
// that morning catches up on (see jobs.Steps). Those of day queued
// already are left as they are.
func (tx *Tx) CatchUpReminders(ctx context.Context, acct *rental.Account, day string) (int, error) {
	if err := tx.Claim(ctx, acct); err != nil {
		return 0, err
	}
	return tx.queueReminders(ctx, acct, day, rental.ReminderTime(day))
}

// queueReminders queues the reminders of day not queued yet, paced from
// start, and records day as queued.
func (tx *Tx) queueReminders(ctx context.Context, acct *rental.Account, day string, start time.Time) (int, error) {
	rows, err := tx.c.QueryContext(ctx, `SELECT id, name, reminders FROM properties WHERE landlord_id = $1 AND reminders IS NOT NULL`, acct.LandlordID)
	if err != nil {
		return 0, fmt.Errorf("store: reminder schedules: %w", err)
	}
	props, err := scanAll(rows, "reminder schedules", func(sc *scanner, p *rental.Property) error {
		var raw string
		if err := sc.Scan(&p.ID, &p.Name, &raw); err != nil {
			return err
		}
		p.Reminders, err = decodeReminders(raw)
		return err
	})
	if err != nil {
		return 0, err
	}
	byID := map[string]*rental.Property{}
	seen := map[string]bool{}
	var dates []any
	for i := range props {
		byID[props[i].ID] = &props[i]
		for _, d := range props[i].Reminders.DueDates(day) {
			if !seen[d] {
				seen[d] = true
				dates = append(dates, d)
			}
		}
	}
	var notices []pendingNotice
	if len(dates) > 0 {
		if notices, err = tx.reminderNotices(ctx, acct, day, dates, byID); err != nil {
			return 0, err
		}
	}
	page := func() rental.PaymentPage { return rental.NewPaymentPage(tx.db.publicURL) }
	n, err := tx.queueBillNotices(ctx, acct, rental.NotifyPaymentReminder, rental.TriggerSchedule, day, notices, start, page)
	if err != nil {
		return 0, err
	}
	_, err = tx.c.ExecContext(ctx, `UPDATE landlords SET reminders_day = $2 WHERE id = $1 AND (reminders_day IS NULL OR reminders_day < $2)`,
		acct.LandlordID, day)
	if err != nil {
		return 0, fmt.Errorf("store: reminders day: %w", err)
	}
	return n, nil
}

// reminderNotices are the reminders of day: the bills due on one of dates
// and not reminded that day, that rental.RemindsOn names under their
// property's schedule, whose tenant the chat reaches; a query for the
// bills, then a few for their tenants and rooms.
func (tx *Tx) reminderNotices(ctx context.Context, acct *rental.Account, day string, dates []any, props map[string]*rental.Property) ([]pendingNotice, error) {
	list, args := inList(5, dates)
	rows, err := tx.c.QueryContext(ctx, `SELECT `+billColumns+` FROM bills WHERE landlord_id = $1 AND status IN ($2, $3)
			AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.bill_id = bills.id AND n.reminder_day = $4)
			AND due_date IN (`+list+`) ORDER BY created_at, id`,
		append([]any{acct.LandlordID, rental.BillIssued, rental.BillOverdue, day}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("store: bills to remind: %w", err)
	}
	bills, err := scanAll(rows, "bills to remind", tx.scanBill)
	if err != nil {
		return nil, err
	}
	var due []*rental.Bill
	var tenantIDs, roomIDs []any
	for i := range bills {
		b := &bills[i]
		if p := props[b.PropertyID]; p != nil && b.TenantID != nil && rental.RemindsOn(p.Reminders, b, day) {
			due = append(due, b)
			tenantIDs, roomIDs = append(tenantIDs, *b.TenantID), append(roomIDs, b.RoomID)
		}
	}
	tenants := map[string]*rental.Tenant{}
	err = inChunks(tenantIDs, func(list string, args []any) error {
		rows, err := tx.c.QueryContext(ctx, `SELECT `+tenantColumns+` FROM tenants WHERE landlord_id = $1 AND id IN (`+list+`)`,
			append([]any{acct.LandlordID}, args...)...)
		if err != nil {
			return fmt.Errorf("store: tenants to remind: %w", err)
		}
		ts, err := scanAll(rows, "tenants to remind", tx.scanTenant)
		for i := range ts {
			tenants[ts[i].ID] = &ts[i]
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	numbers := map[string]string{}
	err = inChunks(roomIDs, func(list string, args []any) error {
		rows, err := tx.c.QueryContext(ctx, `SELECT id, number FROM rooms WHERE landlord_id = $1 AND id IN (`+list+`)`,
			append([]any{acct.LandlordID}, args...)...)
		if err != nil {
			return fmt.Errorf("store: rooms to remind: %w", err)
		}
		_, err = scanAll(rows, "rooms to remind", func(sc *scanner, _ *struct{}) error {
			var id, number string
			err := sc.Scan(&id, &number)
			numbers[id] = number
			return err
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []pendingNotice
	for _, b := range due {
		if t := tenants[*b.TenantID]; t != nil && rental.CheckReachable(t) == nil {
			out = append(out, pendingNotice{bill: b, property: props[b.PropertyID].Name, room: numbers[b.RoomID]})
		}
	}
	return out, nil
}

// inChunks runs query over vals, distinct, 256 at a time, with the
// placeholders of each chunk from $2 ($1 is the landlord).
func inChunks(vals []any, query func(list string, args []any) error) error {
	seen := map[any]bool{}
	var distinct []any
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			distinct = append(distinct, v)
		}
	}
	for len(distinct) > 0 {
		chunk := distinct[:min(len(distinct), 256)]
		distinct = distinct[len(chunk):]
		if err := query(inList(2, chunk)); err != nil {
			return err
		}
	}
	return nil
}
