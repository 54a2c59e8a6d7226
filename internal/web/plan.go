package web

import (
	"net/http"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

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

// newDevPlanView shows a developer plan's limits and price.
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

// planView gathers the developer's plan page.
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
func (s *site) handlePlanPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	pv, err := s.planView(r, v.person)
	if err != nil {
		return err
	}
	pg := portalPage(v.person, pv)
	pg.Flash = done[r.URL.Query().Get("done")]
	return s.render(w, r, http.StatusOK, "portal_plan", pg)
}

// handleChangePlan applies the choice: an upgrade from the next request
// on, on every process; a downgrade from 00:00 on the 1st (Thailand time).
func (s *site) handleChangePlan(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	if err := form(w, r); err != nil {
		return err
	}
	to := rental.DeveloperPlan(r.PostForm.Get("plan"))
	var st rental.PlanState
	err := s.db.InTx(r.Context(), func(tx *store.Tx) (err error) {
		st, err = tx.ChangeDeveloperPlan(r.Context(), p.DeveloperID, to)
		return err
	})
	if msg, status, ok := formError(err, portalWords); ok {
		pv, err := s.planView(r, p)
		if err != nil {
			return err
		}
		pg := portalPage(p, pv)
		pg.Error = msg
		return s.render(w, r, status, "portal_plan", pg)
	}
	if err != nil {
		return err
	}
	flash := "plan_now"
	if st.Pending != "" {
		flash = "plan_later"
	}
	http.Redirect(w, r, "/portal/plan?done="+flash, http.StatusSeeOther)
	return nil
}
