package web

import (
	"net/http"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// Seller is who the service's invoices come from, as printed on them.
type Seller struct {
	Name, Address, TaxID string
}

// invoiceRow is an invoice as listed.
type invoiceRow struct {
	Number, MonthEN, MonthTH string
	Total, Issued, Due       string
	Status                   rental.InvoiceStatus
	Overdue                  bool
}

// newInvoiceRow lists an invoice as it stands at now.
func newInvoiceRow(inv rental.Invoice, now time.Time) invoiceRow {
	row := invoiceRow{Number: inv.Number, Total: baht(inv.Total), Issued: when(inv.IssuedAt), Due: when(inv.DueAt),
		Status: inv.Status, Overdue: inv.Overdue(now)}
	row.MonthEN, row.MonthTH = months(inv.Month)
	return row
}

// handleInvoices lists the developer's invoices, the newest first.
func (s *site) handleInvoices(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	invs, err := s.db.Read().Invoices(r.Context(), store.InvoiceFilter{Developer: p.DeveloperID})
	if err != nil {
		return err
	}
	now := s.now()
	rows := make([]invoiceRow, 0, len(invs))
	for _, inv := range invs {
		rows = append(rows, newInvoiceRow(inv, now))
	}
	return s.render(w, r, http.StatusOK, "portal_invoices", portalPage(p, rows))
}

// invoicePage is one invoice laid out as a tax invoice.
type invoicePage struct {
	invoiceRow
	Seller           Seller
	Buyer            rental.Buyer
	Lines            []invoiceLine
	BeforeVAT, VAT   string
	VATRate          int
	Paid, Voided     string
	PlanName         string
	Currency, Period string
}

// invoiceLine is a line of an invoice, its amounts written for people.
type invoiceLine struct {
	Description string
	Quantity    string
	UnitPrice   string
	Amount      string
}

// handleInvoice shows one of the developer's invoices, ready to print;
// another developer's is not found, exactly as one that does not exist.
func (s *site) handleInvoice(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	number := r.PathValue("number")
	var inv *rental.Invoice
	var err error = rental.NotFound("invoice", "")
	if rental.ValidInvoiceNumber(number) {
		inv, err = s.db.Read().InvoiceByNumber(r.Context(), number)
	}
	if err == nil {
		err = inv.CheckOwner(p.DeveloperID)
	}
	if err != nil {
		return err
	}
	vat := rental.VATIncluded(inv.Total)
	iv := invoicePage{invoiceRow: newInvoiceRow(*inv, s.now()), Seller: s.seller, Buyer: inv.Buyer, VAT: baht(vat),
		BeforeVAT: baht(inv.Total - vat), VATRate: rental.VATRate, PlanName: inv.Plan.Name(), Currency: inv.Currency,
		Paid: whenOpt(inv.PaidAt), Voided: whenOpt(inv.VoidedAt)}
	for _, l := range inv.Lines {
		iv.Lines = append(iv.Lines, invoiceLine{Description: l.Description, Quantity: rental.Thousands(l.Quantity),
			UnitPrice: baht(l.UnitPrice), Amount: baht(l.Amount)})
	}
	return s.render(w, r, http.StatusOK, "portal_invoice", portalPage(p, iv))
}
