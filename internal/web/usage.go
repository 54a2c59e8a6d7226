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

// bar is a day's bar of the chart.
type bar struct {
	X, Y, W, H float64
	Label      string
}

// tick is a day's label under the chart.
type tick struct {
	X     float64
	Label string
}

// handleUsage shows a month's billable live requests, by day and by
// application, read from the counts the quota enforces; ?month=YYYY-MM
// picks a month (the current one by default).
func (s *site) handleUsage(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	now := s.now()
	this := rental.MonthStart(now)
	start := this
	if m := r.URL.Query().Get("month"); m != "" {
		var err error
		if start, err = rental.BegunMonthStart("month", m, now); err != nil {
			return err
		}
	}
	st, err := s.db.Read().DeveloperPlan(r.Context(), p.DeveloperID)
	if err != nil {
		return err
	}
	end := start.AddDate(0, 1, 0)
	plan := st.ForMonth(start, now)
	first, last := rental.MonthDays(start)
	rows, err := s.db.Read().UsageDays(r.Context(), store.UsagePeriod{Developer: p.DeveloperID, Mode: rental.ModeLive, From: first, To: last})
	if err != nil {
		return err
	}
	u := usagePage{Month: rental.MonthOf(start), Current: start.Equal(this), This: rental.MonthOf(this),
		Last: rental.MonthOf(this.AddDate(0, -1, 0)), Plan: newDevPlanView(plan)}
	u.MonthEN, u.MonthTH = months(u.Month)
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
			u.Days = append(u.Days, *d)
		}
	}
	for _, a := range byApp {
		a.Count = rental.Thousands(a.n)
		u.Apps = append(u.Apps, *a)
	}
	sort.Slice(u.Apps, func(i, j int) bool {
		return u.Apps[i].n > u.Apps[j].n || u.Apps[i].n == u.Apps[j].n && u.Apps[i].Name < u.Apps[j].Name
	})
	limits := plan.Limits()
	u.Used, u.Included, u.Stops = rental.Thousands(used), rental.Thousands(limits.MonthlyIncluded), limits.StopsAtIncluded
	u.Remaining, u.Extra = rental.Thousands(max(0, limits.MonthlyIncluded-used)), rental.Thousands(plan.ExtraRequests(used))
	u.UsedPct = int(min(100, used*100/max(1, limits.MonthlyIncluded)))
	u.Reset = when(rental.Time{Time: end})
	u.Chart = dayChart(start, end, dayTotals)
	return s.render(w, r, http.StatusOK, "portal_usage", portalPage(p, u))
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
