package web

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// Seller is who the service's invoices come from, as printed on them.
type Seller struct {
	Name, Address, TaxID string
}

// --- Plan ---------------------------------------------------------------

// devPlanView is one developer plan as the plan page offers it.
type devPlanView struct {
	Plan                  rental.DeveloperPlan
	Name                  string
	Rate, Burst           int
	Included              string
	Fee, PerThousand      string // baht, "" when none
	Stops                 bool
	Endpoints             int
	Current, Pending      bool
	Choosable, SelfServed bool
}

// planPage is the plan page: the plan in effect, a change waiting for the
// 1st, and every plan to choose from.
type planPage struct {
	Current     devPlanView
	Pending     *devPlanView
	PendingFrom string
	Plans       []devPlanView
}

func newDevPlanView(p rental.DeveloperPlan) devPlanView {
	l, price := p.Limits(), p.Price()
	v := devPlanView{Plan: p, Name: p.Name(), Rate: l.RatePerSecond, Burst: l.Burst, Included: rental.Thousands(l.MonthlyIncluded),
		Stops: l.StopsAtIncluded, Endpoints: l.WebhookEndpoints, SelfServed: p != rental.PlanEnterprise}
	if price.Fee > 0 {
		v.Fee = baht(price.Fee)
	}
	if price.PerThousand > 0 {
		v.PerThousand = baht(price.PerThousand)
	}
	return v
}

func (s *site) planView(r *http.Request, p *rental.Person) (planPage, error) {
	st, err := s.db.Read().DeveloperPlan(r.Context(), p.DeveloperID)
	if err != nil {
		return planPage{}, err
	}
	now := s.now()
	current := st.At(now)
	v := planPage{Current: newDevPlanView(current)}
	pending := rental.DeveloperPlan("")
	if st.Pending != "" && st.At(now) == st.Plan {
		pv := newDevPlanView(st.Pending)
		v.Pending, v.PendingFrom, pending = &pv, when(*st.PendingFrom), st.Pending
	}
	for _, pl := range rental.DeveloperPlans() {
		pv := newDevPlanView(pl)
		pv.Current, pv.Pending = pl == current, pl == pending
		pv.Choosable = pv.SelfServed
		v.Plans = append(v.Plans, pv)
	}
	return v, nil
}

// handlePlanPage shows the developer's plan and the others.
func (s *site) handlePlanPage(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
	v, err := s.planView(r, p)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	pg := portalPage(p, v)
	pg.Flash = done[r.URL.Query().Get("done")]
	s.render(w, r, http.StatusOK, "portal_plan", pg)
}

// handleChangePlan applies the choice: an upgrade from the next request
// on, on every process; a downgrade from 00:00 on the 1st (Thailand time).
func (s *site) handleChangePlan(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
	if err := form(w, r); err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	to := rental.DeveloperPlan(r.PostForm.Get("plan"))
	var st rental.PlanState
	err := s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
		st, err = tx.ChangeDeveloperPlan(r.Context(), p.DeveloperID, to)
		return err
	})
	if msg, status, ok := formError(err); ok {
		v, verr := s.planView(r, p)
		if verr != nil {
			s.fail(w, r, portalArea, verr)
			return
		}
		pg := portalPage(p, v)
		pg.Error = msg
		s.render(w, r, status, "portal_plan", pg)
		return
	}
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	flash := "plan_now"
	if st.Pending != "" {
		flash = "plan_later"
	}
	http.Redirect(w, r, "/portal/plan?done="+flash, http.StatusSeeOther)
}

// --- Usage --------------------------------------------------------------

// usagePage is a month of the developer's billable requests.
type usagePage struct {
	Month, MonthEN, MonthTH string
	Current                 bool   // the month under way
	This, Last              string // the months the tabs link to
	Plan                    devPlanView
	Used, Included          string
	Remaining, Extra        string
	UsedPct                 int
	Stops                   bool
	Reset                   string
	Days                    []usageDay
	Apps                    []usageApp
	Chart                   chart
}

// usageDay is a day's count, with each application's.
type usageDay struct {
	Day   string
	Total string
	Apps  []usageApp
}

// usageApp is an application's count.
type usageApp struct {
	ID, Name string
	Count    string
	n        int64
}

// chart is the page's bar chart, drawn server-side as SVG: one bar per day,
// a guide line at the highest day with its count.
type chart struct {
	Width, Height       int
	AxisY, TickY, PeakY float64
	Bars                []bar
	Max                 string
	Ticks               []tick
}

type bar struct {
	X, Y, W, H float64
	Label      string
}

type tick struct {
	X     float64
	Label string
}

// handleUsage shows a month's billable live requests, by day and by
// application, read from the counts the quota enforces; ?month=YYYY-MM
// picks a month (the current one by default).
func (s *site) handleUsage(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
	now := s.now()
	this := rental.MonthStart(now)
	start := this
	if m := r.URL.Query().Get("month"); m != "" {
		var err error
		if start, err = rental.BegunMonthStart("month", m, now); err != nil {
			s.fail(w, r, portalArea, err)
			return
		}
	}
	st, err := s.db.Read().DeveloperPlan(r.Context(), p.DeveloperID)
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	end := start.AddDate(0, 1, 0)
	plan := st.ForMonth(start, now)
	first, last := rental.MonthDays(start)
	rows, err := s.db.Read().UsageDays(r.Context(), store.UsagePeriod{Developer: p.DeveloperID, Mode: rental.ModeLive, From: first, To: last})
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	v := usagePage{Month: rental.MonthOf(start), Current: start.Equal(this), This: rental.MonthOf(this),
		Last: rental.MonthOf(this.AddDate(0, -1, 0)), Plan: newDevPlanView(plan)}
	v.MonthEN, v.MonthTH = months(v.Month)
	var used int64
	byDay := map[string]*usageDay{}
	byApp := map[string]*usageApp{}
	dayTotals := map[string]int64{}
	for _, row := range rows {
		used += row.Count
		name := row.Name
		if name == "" {
			name = "—"
		}
		d := byDay[row.Day]
		if d == nil {
			d = &usageDay{Day: row.Day}
			byDay[row.Day] = d
		}
		d.Apps = append(d.Apps, usageApp{ID: row.Application, Name: name, Count: rental.Thousands(row.Count), n: row.Count})
		dayTotals[row.Day] += row.Count
		a := byApp[row.Application]
		if a == nil {
			a = &usageApp{ID: row.Application, Name: name}
			byApp[row.Application] = a
		}
		a.n += row.Count
	}
	for day := start; day.Before(end); day = day.AddDate(0, 0, 1) {
		if d := byDay[rental.DayOf(day)]; d != nil {
			d.Total = rental.Thousands(dayTotals[d.Day])
			v.Days = append(v.Days, *d)
		}
	}
	for _, a := range byApp {
		a.Count = rental.Thousands(a.n)
		v.Apps = append(v.Apps, *a)
	}
	sort.Slice(v.Apps, func(i, j int) bool {
		return v.Apps[i].n > v.Apps[j].n || v.Apps[i].n == v.Apps[j].n && v.Apps[i].Name < v.Apps[j].Name
	})
	limits := plan.Limits()
	v.Used, v.Included, v.Stops = rental.Thousands(used), rental.Thousands(limits.MonthlyIncluded), limits.StopsAtIncluded
	v.Remaining, v.Extra = rental.Thousands(max(0, limits.MonthlyIncluded-used)), rental.Thousands(plan.ExtraRequests(used))
	v.UsedPct = int(min(100, used*100/max(1, limits.MonthlyIncluded)))
	v.Reset = when(rental.Time{Time: end})
	v.Chart = dayChart(start, end, dayTotals)
	s.render(w, r, http.StatusOK, "portal_usage", portalPage(p, v))
}

// dayChart draws a month's daily counts as bars in a 600×240 box (the
// page scales it to its width), with the highest count on a guide line and
// a tick every five days.
func dayChart(start, end time.Time, totals map[string]int64) chart {
	const width, height, top, bottom, left = 600, 240, 40, 32, 4
	c := chart{Width: width, Height: height, AxisY: height - bottom, TickY: height - 6, PeakY: top}
	var peak int64
	for _, n := range totals {
		peak = max(peak, n)
	}
	c.Max = rental.Thousands(peak)
	days := int(end.Sub(start).Hours()/24 + 0.5)
	slot := float64(width-left) / float64(days)
	i := 0
	for day := start; day.Before(end); day = day.AddDate(0, 0, 1) {
		d := rental.DayOf(day)
		n := totals[d]
		h := 0.0
		if peak > 0 {
			h = float64(height-top-bottom) * float64(n) / float64(peak)
		}
		if n > 0 && h < 1 {
			h = 1
		}
		x := left + float64(i)*slot
		c.Bars = append(c.Bars, bar{X: x + slot*0.15, Y: float64(height-bottom) - h, W: slot * 0.7, H: h,
			Label: fmt.Sprintf("%s: %s", d, rental.Thousands(n))})
		if day.Day() == 1 || day.Day()%5 == 0 {
			c.Ticks = append(c.Ticks, tick{X: x + slot/2, Label: strconv.Itoa(day.Day())})
		}
		i++
	}
	return c
}

// --- Invoices -----------------------------------------------------------

// invoiceRow is an invoice as listed.
type invoiceRow struct {
	Number, MonthEN, MonthTH string
	Total, Issued, Due       string
	Status                   rental.InvoiceStatus
	Overdue                  bool
}

func newInvoiceRow(inv rental.Invoice, now time.Time) invoiceRow {
	row := invoiceRow{Number: inv.Number, Total: baht(inv.Total), Issued: when(inv.IssuedAt), Due: when(inv.DueAt),
		Status: inv.Status, Overdue: inv.Overdue(now)}
	row.MonthEN, row.MonthTH = months(inv.Month)
	return row
}

// handleInvoices lists the developer's invoices, the newest first.
func (s *site) handleInvoices(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
	invs, err := s.db.Read().Invoices(r.Context(), store.InvoiceFilter{Developer: p.DeveloperID})
	if err != nil {
		s.fail(w, r, portalArea, err)
		return
	}
	now := s.now()
	rows := make([]invoiceRow, 0, len(invs))
	for _, inv := range invs {
		rows = append(rows, newInvoiceRow(inv, now))
	}
	s.render(w, r, http.StatusOK, "portal_invoices", portalPage(p, rows))
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

type invoiceLine struct {
	Description string
	Quantity    string
	UnitPrice   string
	Amount      string
}

// handleInvoice shows one of the developer's invoices, ready to print;
// another developer's is not found, exactly as one that does not exist.
func (s *site) handleInvoice(w http.ResponseWriter, r *http.Request, p *rental.Person, _ string) {
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
		s.fail(w, r, portalArea, err)
		return
	}
	vat := rental.VATIncluded(inv.Total)
	v := invoicePage{invoiceRow: newInvoiceRow(*inv, s.now()), Seller: s.seller, Buyer: inv.Buyer, VAT: baht(vat),
		BeforeVAT: baht(inv.Total - vat), VATRate: rental.VATRate, PlanName: inv.Plan.Name(), Currency: inv.Currency,
		Paid: whenOpt(inv.PaidAt), Voided: whenOpt(inv.VoidedAt)}
	for _, l := range inv.Lines {
		v.Lines = append(v.Lines, invoiceLine{Description: l.Description, Quantity: rental.Thousands(l.Quantity),
			UnitPrice: baht(l.UnitPrice), Amount: baht(l.Amount)})
	}
	s.render(w, r, http.StatusOK, "portal_invoice", portalPage(p, v))
}
