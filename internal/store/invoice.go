package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"rentapi/internal/rental"
)

// lockDeveloper takes the developer's row lock and reads its plan: every
// change of plan and every monthly close of a developer holds it, so they
// happen one after the other (and in the same lock order: developer, then
// the year's invoice counter).
func (tx *Tx) lockDeveloper(ctx context.Context, id string) (rental.PlanState, time.Time, error) {
	var st rental.PlanState
	var plan string
	var pending sql.NullString
	var from sql.NullInt64
	var created int64
	err := tx.c.QueryRowContext(ctx, `UPDATE developers SET plan = plan WHERE id = $1 RETURNING plan, pending_plan, pending_from, created_at`, id).
		Scan(&plan, &pending, &from, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return st, time.Time{}, rental.NotFound("developer", id)
	}
	if err != nil {
		return st, time.Time{}, fmt.Errorf("store: lock developer: %w", err)
	}
	st.Plan, st.Pending, st.PendingFrom = rental.DeveloperPlan(plan), rental.DeveloperPlan(pending.String), optTime(from)
	return st, time.UnixMilli(created), nil
}

// DeveloperPlan returns a developer's plan as stored, the waiting change
// included.
func (q *Queries) DeveloperPlan(ctx context.Context, id string) (rental.PlanState, error) {
	var st rental.PlanState
	var plan string
	var pending sql.NullString
	var from sql.NullInt64
	err := q.c.QueryRowContext(ctx, `SELECT plan, pending_plan, pending_from FROM developers WHERE id = $1`, id).Scan(&plan, &pending, &from)
	if errors.Is(err, sql.ErrNoRows) {
		return st, rental.NotFound("developer", id)
	}
	if err != nil {
		return st, fmt.Errorf("store: developer plan: %w", err)
	}
	st.Plan, st.Pending, st.PendingFrom = rental.DeveloperPlan(plan), rental.DeveloperPlan(pending.String), optTime(from)
	return st, nil
}

// ChangeDeveloperPlan applies the developer's choice of plan by
// rental.PlanState.Change: an upgrade at once, a downgrade from the 1st of
// next month. The month that has ended is closed first (if the job has not
// yet), so its invoice bills the plan that was in effect at its end, not
// the one chosen now.
func (tx *Tx) ChangeDeveloperPlan(ctx context.Context, id string, to rental.DeveloperPlan) (rental.PlanState, error) {
	st, _, err := tx.lockDeveloper(ctx, id)
	if err != nil {
		return st, err
	}
	next, err := st.Change(to, tx.Now)
	if err != nil {
		return st, err
	}
	if _, err := tx.CloseMonth(ctx, id, rental.MonthBefore(tx.Now)); err != nil {
		return st, err
	}
	var from *time.Time
	if next.PendingFrom != nil {
		from = &next.PendingFrom.Time
	}
	_, err = tx.c.ExecContext(ctx, `UPDATE developers SET plan = $2, pending_plan = $3, pending_from = $4 WHERE id = $1`,
		id, string(next.Plan), nullString(string(next.Pending)), nullMs(from))
	if err != nil {
		return st, fmt.Errorf("store: change plan: %w", err)
	}
	return next, nil
}

// SetDeveloperPlan puts a developer on a plan at once, a waiting change
// dropped: the operator's tool (Enterprise is agreed, not chosen).
func (tx *Tx) SetDeveloperPlan(ctx context.Context, id string, plan rental.DeveloperPlan) error {
	if err := plan.Check(); err != nil {
		return err
	}
	if _, _, err := tx.lockDeveloper(ctx, id); err != nil {
		return err
	}
	if _, err := tx.CloseMonth(ctx, id, rental.MonthBefore(tx.Now)); err != nil {
		return err
	}
	return tx.execOne(ctx, "developer", id, `UPDATE developers SET plan = $2, pending_plan = NULL, pending_from = NULL WHERE id = $1`, id, string(plan))
}

// DevelopersToClose lists the developers that existed before the month
// ended and have no invoice for it yet: the monthly close's work. Whether
// each is billed is for CloseMonth to say.
func (q *Queries) DevelopersToClose(ctx context.Context, month string) ([]string, error) {
	start, err := rental.MonthStartOf("month", month)
	if err != nil {
		return nil, err
	}
	end := start.AddDate(0, 1, 0)
	rows, err := q.c.QueryContext(ctx, `SELECT d.id FROM developers d
		WHERE d.created_at < $1 AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.developer_id = d.id AND i.month = $2)
		ORDER BY d.id`, ms(end), month)
	if err != nil {
		return nil, fmt.Errorf("store: developers to close: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("store: developers to close: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// CloseMonth makes the developer's invoice for a month that has ended,
// once: under the developer's lock, a month that has an invoice already is
// left alone, so however many processes close it at once and however
// often, one invoice results; and the year's number is taken in the same
// transaction, so numbers have no gaps. The plan billed is the one in
// effect at the month's end; the requests are the month's billable live
// requests. It returns nil when there is nothing to bill (rental.CloseMonth),
// the month has not ended, or the developer did not exist in it.
func (tx *Tx) CloseMonth(ctx context.Context, developerID, month string) (*rental.Invoice, error) {
	start, err := rental.MonthStartOf("month", month)
	if err != nil {
		return nil, err
	}
	end := start.AddDate(0, 1, 0)
	st, created, err := tx.lockDeveloper(ctx, developerID)
	if err != nil {
		return nil, err
	}
	if !rental.MonthClosable(start, created, tx.Now) {
		return nil, nil
	}
	var exists int
	err = tx.c.QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices WHERE developer_id = $1 AND month = $2`, developerID, month).Scan(&exists)
	if err != nil {
		return nil, fmt.Errorf("store: close month: %w", err)
	}
	if exists > 0 {
		return nil, nil
	}
	first, last := rental.MonthDays(start)
	used, err := tx.UsageTotal(ctx, UsagePeriod{Developer: developerID, Mode: rental.ModeLive, From: first, To: last})
	if err != nil {
		return nil, err
	}
	bill := rental.CloseMonth(st.At(end.Add(-time.Millisecond)), month, used)
	if !bill.Bill {
		return nil, nil
	}
	buyer, err := tx.buyer(ctx, developerID)
	if err != nil {
		return nil, err
	}
	issued, due := rental.IssueTimes(tx.Now)
	year := issued.In(rental.Bangkok).Year()
	var n int
	err = tx.c.QueryRowContext(ctx, `INSERT INTO invoice_numbers (year, last) VALUES ($1, 1)
		ON CONFLICT (year) DO UPDATE SET last = invoice_numbers.last + 1 RETURNING last`, year).Scan(&n)
	if err != nil {
		return nil, fmt.Errorf("store: invoice number: %w", err)
	}
	inv := &rental.Invoice{ID: rental.NewID(rental.PrefixInvoice), Number: rental.InvoiceNumber(year, n), DeveloperID: developerID,
		Month: month, Plan: bill.Plan, Lines: bill.Lines, Total: bill.Total, Currency: rental.Currency, Status: rental.InvoiceOpen,
		Buyer: buyer, IssuedAt: rental.Time{Time: issued}, DueAt: rental.Time{Time: due}}
	lines, err := json.Marshal(inv.Lines)
	if err != nil {
		return nil, fmt.Errorf("store: invoice lines: %w", err)
	}
	_, err = tx.c.ExecContext(ctx, `INSERT INTO invoices (id, number, developer_id, month, plan, lines, total, currency, status,
			buyer_name, buyer_email, buyer_company, issued_at, due_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		inv.ID, inv.Number, developerID, month, string(inv.Plan), string(lines), inv.Total, inv.Currency, string(inv.Status),
		buyer.Name, buyer.Email, buyer.Company, ms(issued), ms(due))
	if err != nil {
		return nil, fmt.Errorf("store: create invoice: %w", err)
	}
	return inv, nil
}

// buyer is who the developer's invoices are made out to: the developer's
// name, the email its person signed up with, and the company its earliest
// application names (if any does).
func (tx *Tx) buyer(ctx context.Context, developerID string) (rental.Buyer, error) {
	var b rental.Buyer
	err := tx.c.QueryRowContext(ctx, `SELECT d.name,
			COALESCE((SELECT p.email FROM people p WHERE p.developer_id = d.id ORDER BY p.created_at, p.id LIMIT 1), ''),
			COALESCE((SELECT a.company FROM applications a WHERE a.developer_id = d.id AND a.company <> '' ORDER BY a.created_at, a.id LIMIT 1), '')
		FROM developers d WHERE d.id = $1`, developerID).Scan(&b.Name, &b.Email, &b.Company)
	if err != nil {
		return b, fmt.Errorf("store: invoice buyer: %w", err)
	}
	return b, nil
}

// InvoiceFilter narrows a list of invoices; empty fields match all.
type InvoiceFilter struct {
	Developer string
	Status    rental.InvoiceStatus
}

const invoiceColumns = `id, number, developer_id, month, plan, lines, total, currency, status, buyer_name, buyer_email, buyer_company,
	issued_at, due_at, paid_at, voided_at`

func scanInvoice(sc interface{ Scan(...any) error }, inv *rental.Invoice) error {
	*inv = rental.Invoice{}
	var plan, lines, status string
	var issued, due int64
	var paid, voided sql.NullInt64
	err := sc.Scan(&inv.ID, &inv.Number, &inv.DeveloperID, &inv.Month, &plan, &lines, &inv.Total, &inv.Currency, &status,
		&inv.Buyer.Name, &inv.Buyer.Email, &inv.Buyer.Company, &issued, &due, &paid, &voided)
	if err != nil {
		return err
	}
	inv.Plan, inv.Status = rental.DeveloperPlan(plan), rental.InvoiceStatus(status)
	inv.IssuedAt, inv.DueAt, inv.PaidAt, inv.VoidedAt = rental.UnixMilli(issued), rental.UnixMilli(due), optTime(paid), optTime(voided)
	if err := json.Unmarshal([]byte(lines), &inv.Lines); err != nil {
		return fmt.Errorf("invoice %s lines: %w", inv.Number, err)
	}
	return nil
}

// Invoices lists invoices, the newest first.
func (q *Queries) Invoices(ctx context.Context, f InvoiceFilter) ([]rental.Invoice, error) {
	var where []string
	var args []any
	if f.Developer != "" {
		args = append(args, f.Developer)
		where = append(where, fmt.Sprintf("developer_id = $%d", len(args)))
	}
	if f.Status != "" {
		args = append(args, string(f.Status))
		where = append(where, fmt.Sprintf("status = $%d", len(args)))
	}
	query := `SELECT ` + invoiceColumns + ` FROM invoices`
	if len(where) > 0 {
		query += ` WHERE ` + strings.Join(where, " AND ")
	}
	rows, err := q.c.QueryContext(ctx, query+` ORDER BY issued_at DESC, number DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: invoices: %w", err)
	}
	defer rows.Close()
	out := []rental.Invoice{}
	for rows.Next() {
		var inv rental.Invoice
		if err := scanInvoice(rows, &inv); err != nil {
			return nil, fmt.Errorf("store: invoices: %w", err)
		}
		out = append(out, inv)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: invoices: %w", err)
	}
	return out, nil
}

// InvoiceByNumber returns one invoice; an unknown number is not found.
func (q *Queries) InvoiceByNumber(ctx context.Context, number string) (*rental.Invoice, error) {
	var inv rental.Invoice
	err := scanInvoice(q.c.QueryRowContext(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE number = $1`, number), &inv)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, rental.NotFound("invoice", number)
	}
	if err != nil {
		return nil, fmt.Errorf("store: invoice: %w", err)
	}
	return &inv, nil
}

// PayInvoice marks an open invoice paid: live requests are served again
// from the next one on every process (the key lookup asks for overdue
// invoices each time). A paid or voided invoice is 409 invalid_state.
func (tx *Tx) PayInvoice(ctx context.Context, number string) (*rental.Invoice, error) {
	return tx.settleInvoice(ctx, number, (*rental.Invoice).CheckPay, `UPDATE invoices SET status = 'paid', paid_at = $2 WHERE number = $1 AND status = 'open'`)
}

// VoidInvoice cancels an open invoice: it is no longer owed, overdue or not.
func (tx *Tx) VoidInvoice(ctx context.Context, number string) (*rental.Invoice, error) {
	return tx.settleInvoice(ctx, number, (*rental.Invoice).CheckVoid, `UPDATE invoices SET status = 'void', voided_at = $2 WHERE number = $1 AND status = 'open'`)
}

func (tx *Tx) settleInvoice(ctx context.Context, number string, check func(*rental.Invoice) error, update string) (*rental.Invoice, error) {
	if err := rental.CheckInvoiceNumber(number); err != nil {
		return nil, err
	}
	inv, err := tx.InvoiceByNumber(ctx, number)
	if err != nil {
		return nil, err
	}
	if err := check(inv); err != nil {
		return nil, err
	}
	res, err := tx.c.ExecContext(ctx, update, number, ms(tx.Now))
	if err != nil {
		return nil, fmt.Errorf("store: settle invoice: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		if inv, err = tx.InvoiceByNumber(ctx, number); err != nil {
			return nil, err
		}
		return nil, check(inv) // settled meanwhile by another transaction
	}
	return tx.InvoiceByNumber(ctx, number)
}
