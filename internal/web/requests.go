package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// requestsPerPage is how many requests the Requests page lists at once.
const requestsPerPage = 50

// requestsView is the Requests page: an application's API requests of the
// last 7 days, newest first, filtered as its form asks.
type requestsView struct {
	App *rental.Application
	// The filters as asked, to fill the form again.
	Mode, Status, Path, RequestID string
	Rows                          []requestRow
	// Older is the query of the next page, "" on the last.
	Older string
	// Filtered says a filter narrows the list, for the empty list's words.
	Filtered bool
	// Classes are the status filter's choices.
	Classes []string
}

// requestRow is one request as the page shows it.
type requestRow struct {
	ID, When, Mode, Method, Path, Code, Latency, Last4 string
	Status                                             int
	// Class is 2 to 5, for the status's colour.
	Class int
}

// handleRequests lists the application's API requests: the last 7 days,
// newest first, filtered by mode, status class, path and request ID.
func (s *site) handleRequests(w http.ResponseWriter, r *http.Request, v *visit) error {
	q := r.URL.Query()
	f, err := rental.ParseRequestQuery(q.Get("mode"), q.Get("status"), q.Get("path"), q.Get("request_id"))
	if err != nil {
		return err
	}
	filter := store.RequestFilter{Mode: string(f.Mode), StatusClass: f.StatusClass, PathPrefix: f.PathPrefix, RequestID: f.RequestID}
	if q.Has("older") {
		p, err := rental.ParseRequestPosition(q.Get("older"))
		if err != nil {
			return err
		}
		filter.Before = &store.RequestPosition{At: time.UnixMilli(p.At), Seq: p.Seq, ID: p.ID}
	}
	list, more, err := s.db.Read().ListRequests(r.Context(), v.app.ID, filter, requestsPerPage, s.now())
	if err != nil {
		return err
	}
	rv := requestsView{App: v.app, Mode: string(f.Mode), Status: q.Get("status"), Path: f.PathPrefix, RequestID: f.RequestID,
		Filtered: f != rental.RequestQuery{}, Classes: []string{"2xx", "3xx", "4xx", "5xx"}}
	for _, l := range list {
		rv.Rows = append(rv.Rows, requestRow{ID: l.ID, When: l.At.In(rental.Bangkok).Format("2006-01-02 15:04:05"), Mode: l.Mode,
			Method: l.Method, Path: l.Path, Status: l.Status, Class: l.Status / 100, Code: l.Code, Last4: l.KeyLast4,
			Latency: latency(l.Latency.Microseconds())})
	}
	if more {
		last := list[len(list)-1]
		next := url.Values{}
		for _, k := range []string{"mode", "status", "path", "request_id"} {
			if q.Get(k) != "" {
				next.Set(k, q.Get(k))
			}
		}
		next.Set("older", strconv.FormatInt(last.At.UnixMilli(), 10)+"."+strconv.FormatInt(last.Seq, 10)+"_"+last.ID)
		rv.Older = "?" + next.Encode()
	}
	return s.render(w, r, http.StatusOK, "portal_requests", portalPage(v.person, rv))
}

// latency writes a duration in microseconds as people read it: 850 µs,
// 12.4 ms, 2.10 s.
func latency(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%d µs", us)
	case us < 1_000_000:
		return fmt.Sprintf("%.1f ms", float64(us)/1000)
	}
	return fmt.Sprintf("%.2f s", float64(us)/1e6)
}
