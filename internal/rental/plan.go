package rental

import (
	"slices"
	"time"
)

// The rules of developer plans over time: which plan is in effect when and
// how a change takes effect (the calendar they count in is calendar.go's).

// planOrder ranks the plans from the smallest up: moving up is an upgrade.
var planOrder = []DeveloperPlan{PlanFree, PlanDeveloper, PlanPro, PlanBusiness, PlanEnterprise}

// DeveloperPlans lists every developer plan, the smallest first, as the
// portal offers them.
func DeveloperPlans() []DeveloperPlan { return slices.Clone(planOrder) }

// rank is the plan's place in planOrder.
func (p DeveloperPlan) rank() int { return slices.Index(planOrder, p) }

// PlanState is a developer's plan as stored: the plan, and a downgrade
// waiting for the 1st of a month (Pending from PendingFrom on).
type PlanState struct {
	Plan        DeveloperPlan
	Pending     DeveloperPlan // "" when no change waits
	PendingFrom *Time
}

// At is the plan in effect at t: the pending plan once its month has come,
// whether or not anything has written it down yet. So every process sees a
// scheduled downgrade at its first request on the 1st, no job needed.
func (s PlanState) At(t time.Time) DeveloperPlan {
	if s.Pending != "" && s.PendingFrom != nil && !t.Before(s.PendingFrom.Time) {
		return s.Pending
	}
	return s.Plan
}

// ForMonth is the plan a month starting at start is counted under, seen at
// now: the plan in effect now while the month runs, and the plan it ended
// on once it is over (a downgrade that took effect on the 1st after it
// does not reach back).
func (s PlanState) ForMonth(start, now time.Time) DeveloperPlan {
	end := NextMonthStart(start)
	if end.After(now) {
		return s.At(now)
	}
	return s.At(end.Add(-time.Millisecond))
}

// Change is the state after the developer chooses plan to at now: an
// upgrade takes effect at once (and cancels a waiting downgrade); a
// downgrade waits for 00:00 on the 1st of the next month, Thailand time
// (the month already begun is the larger plan's, quota and fee); choosing
// the plan in effect cancels a waiting change. Enterprise is agreed with
// the service, not chosen: 403 plan_not_self_service (an operator sets it).
func (s PlanState) Change(to DeveloperPlan, now time.Time) (PlanState, error) {
	if err := to.Check(); err != nil {
		return s, err
	}
	if to == PlanEnterprise {
		return s, &Error{Kind: KindForbidden, Code: "plan_not_self_service",
			Message: "The Enterprise plan is agreed with the service: contact us to move to it."}
	}
	current := s.At(now)
	switch {
	case to.rank() >= current.rank():
		return PlanState{Plan: to}, nil
	default:
		from := Time{Time: NextMonthStart(now)}
		return PlanState{Plan: current, Pending: to, PendingFrom: &from}, nil
	}
}

// PlanPrice is what a plan costs: the monthly fee and the price of each
// started 1,000 requests past the included amount, in satang.
type PlanPrice struct {
	Fee         int64
	PerThousand int64
}

// Price is the plan's price from the plans table. Free costs nothing and
// stops at its included requests. Enterprise's fee is agreed with the
// service ("contact the service") and billed outside v1: its invoices carry
// the extra requests only.
func (p DeveloperPlan) Price() PlanPrice {
	switch p {
	case PlanDeveloper:
		return PlanPrice{Fee: 490_00, PerThousand: 15_00}
	case PlanPro:
		return PlanPrice{Fee: 1_990_00, PerThousand: 6_00}
	case PlanBusiness:
		return PlanPrice{Fee: 6_900_00, PerThousand: 4_00}
	case PlanEnterprise:
		return PlanPrice{Fee: 0, PerThousand: 3_00}
	default:
		return PlanPrice{}
	}
}

// Name is the plan as people read it.
func (p DeveloperPlan) Name() string {
	switch p {
	case PlanDeveloper:
		return "Developer"
	case PlanPro:
		return "Pro"
	case PlanBusiness:
		return "Business"
	case PlanEnterprise:
		return "Enterprise"
	default:
		return "Free"
	}
}

// ExtraRequests is how many of used requests are past the plan's included
// amount.
func (p DeveloperPlan) ExtraRequests(used int64) int64 {
	return max(0, used-p.Limits().MonthlyIncluded)
}
