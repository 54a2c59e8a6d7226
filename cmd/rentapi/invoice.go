package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"rentapi/internal/jobs"
	"rentapi/internal/rental"
	"rentapi/internal/secret"
	"rentapi/internal/store"
)

// The operator's tools for developers' plans and invoices. Payment of
// invoices is an operator action in v1: the money arrives outside the
// service, and `invoice pay` records it.

// invoiceListDetails is invoice list's help beyond its summary.
const invoiceListDetails = `One invoice a line, newest first, tab-separated: number, developer,
month, plan, total in baht, currency, status, issued, due (UTC).`

func setupInvoiceList(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	dev := fs.String("developer", "", "only this developer's invoices (dev_...)")
	status := fs.String("status", "", "only invoices in this status: open, paid or void")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		if *dev != "" {
			if err := checkID("developer", rental.PrefixDeveloper, *dev); err != nil {
				return "", err
			}
		}
		if *status != "" && !rental.InvoiceStatus(*status).Valid() {
			return "", fmt.Errorf("--status must be open, paid or void, not %q", *status)
		}
		invs, err := db.Read().Invoices(ctx, store.InvoiceFilter{Developer: *dev, Status: rental.InvoiceStatus(*status)})
		if err != nil {
			return "", err
		}
		lines := make([]string, len(invs))
		for i, inv := range invs {
			lines[i] = strings.Join([]string{inv.Number, inv.DeveloperID, inv.Month, string(inv.Plan),
				fmt.Sprintf("%d.%02d", inv.Total/100, inv.Total%100), inv.Currency, string(inv.Status),
				inv.IssuedAt.UTC().Format(rental.TimeLayout), inv.DueAt.UTC().Format(rental.TimeLayout)}, "\t")
		}
		return strings.Join(lines, "\n"), nil
	}
}

// setupInvoiceSettle makes invoice pay (pay true) and invoice void: the
// invoice is named by its number, the one argument (or --number).
func setupInvoiceSettle(pay bool) func(context.Context, environment, *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	return func(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
		num := fs.String("number", "", "the invoice's number, INV-YYYY-NNNNNN (or give it as the argument)")
		return func(db *store.DB, _ *secret.Secret) (string, error) {
			number := *num
			if number == "" {
				return "", fmt.Errorf("name one invoice by its number, as INV-2026-000123")
			}
			if !rental.ValidInvoiceNumber(number) {
				return "", fmt.Errorf("%q is not an invoice number: they look like INV-2026-000123", number)
			}
			var inv *rental.Invoice
			err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				if pay {
					inv, err = tx.PayInvoice(ctx, number)
				} else {
					inv, err = tx.VoidInvoice(ctx, number)
				}
				return err
			})
			if rental.IsNotFound(err) {
				return "", fmt.Errorf("no invoice %s", number)
			}
			if err != nil {
				return "", err
			}
			return inv.Number + " " + string(inv.Status), nil
		}
	}
}

// invoiceCloseDetails is invoice close's help beyond its summary.
const invoiceCloseDetails = `The job does this at 00:00 on the 1st (Thailand time); run it by hand to
catch up. A developer whose month has an invoice already is left alone, so
running it again, or beside the job, makes no second invoice.`

func setupInvoiceClose(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	month := fs.String("month", "", "the month to close, YYYY-MM (default: last month)")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		m := *month
		if m == "" {
			m = rental.MonthBefore(db.Now())
		}
		start, err := rental.MonthStartOf("month", m)
		if err != nil {
			return "", fmt.Errorf("--month %q: write YYYY-MM, as 2026-10", m)
		}
		if db.Now().Before(start.AddDate(0, 1, 0)) {
			return "", fmt.Errorf("--month %s has not ended yet (Thailand time)", m)
		}
		n, err := jobs.CloseMonth(ctx, db, m)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d invoices made for %s", n, m), nil
	}
}

func setupSetPlan(ctx context.Context, _ environment, fs *flag.FlagSet) func(*store.DB, *secret.Secret) (string, error) {
	id := fs.String("developer", "", "developer ID (dev_...)")
	plan := fs.String("plan", "", "free, developer, pro, business or enterprise")
	return func(db *store.DB, _ *secret.Secret) (string, error) {
		if err := checkID("developer", rental.PrefixDeveloper, *id); err != nil {
			return "", err
		}
		p := rental.DeveloperPlan(*plan)
		if !p.Valid() {
			return "", fmt.Errorf("--plan must be free, developer, pro, business or enterprise, not %q", *plan)
		}
		if err := db.InTx(ctx, func(tx *store.Tx) error { return tx.SetDeveloperPlan(ctx, *id, p) }); err != nil {
			return "", err
		}
		return *id + " " + string(p), nil
	}
}
