package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"rentapi/internal/chat"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// eventsPerPage is how many events the Events page lists at once.
const eventsPerPage = 20

// eventsView is the Events page: an account's events of the last 30 days
// as the application reads them, newest first, each with its payload and
// what was sent of it to the application's endpoints.
type eventsView struct {
	App  *rental.Application
	Mode rental.Mode
	// Base is the page's path, of its mode.
	Base string
	// Accounts are live mode's linked accounts to choose from; Account is
	// the one shown.
	Accounts []accountChoice
	Account  string
	Type     string
	Events   []eventRow
	// Endpoints are the application's enabled endpoints of the mode, to
	// send an event to.
	Endpoints []rental.WebhookEndpoint
	// Older is the query of the next page, "" on the last.
	Older string
}

type accountChoice struct {
	ID, Name string
}

// eventRow is one event as the page shows it.
type eventRow struct {
	ID, Type, When string
	// Payload is the event as a webhook delivery carries it.
	Payload    string
	Deliveries []eventDelivery
	// Chat is a notice as the tenant's LINE showed it (test mode).
	Chat *chatPreview
}

type eventDelivery struct {
	rental.Delivery
	URL string
}

// chatPreview is a notice as LINE shows it: the line of the phone's
// notification, then the message.
type chatPreview struct {
	AltText string
	// A bill notice or reminder: its title, place, month, lines, total and
	// due date, and the pay button's label.
	Title, Place, Month, Total, Paid, Due, Button string
	Lines                                         []chatLine
	// Text is a text message's (a receipt, the landlord's message).
	Text string
}

type chatLine struct{ Label, Amount string }

// eventsPath is the Events page of the application in a mode.
func eventsPath(appID string, mode rental.Mode) string {
	return "/portal/apps/" + appID + "/events/" + string(mode)
}

// handleEventsHome opens the Events page in test mode.
func (s *site) handleEventsHome(w http.ResponseWriter, r *http.Request, v *visit) error {
	http.Redirect(w, r, eventsPath(v.app.ID, rental.ModeTest), http.StatusSeeOther)
	return nil
}

// handleEvents lists an account's events: the sandbox's in test mode, a
// linked account's (?account=) in live mode; ?type= narrows them as the
// API's type filter does.
func (s *site) handleEvents(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk := v.hooks
	q := r.URL.Query()
	ev := eventsView{App: v.app, Mode: hk.Mode, Base: eventsPath(v.app.ID, hk.Mode), Type: q.Get("type")}
	acct, err := s.eventAccount(r, v, q.Get("account"), &ev)
	if err != nil || acct == nil {
		if err == nil {
			return s.render(w, r, http.StatusOK, "portal_events", portalPage(v.person, ev))
		}
		return err
	}
	f := store.EventFilter{Prefixes: acct.Granted.Intersect(v.app.Scopes).EventPrefixes()}
	if ev.Type != "" {
		if f.Type, err = rental.EventTypeFilter(ev.Type); err != nil {
			return err
		}
	}
	p := store.Page{Limit: eventsPerPage}
	if q.Has("older") {
		ms, id, err := rental.ParsePosition("older", q.Get("older"))
		if err != nil {
			return err
		}
		p.After = &store.Position{CreatedAt: ms, ID: id}
	}
	rd := s.db.Read()
	list, more, err := rd.ListEvents(r.Context(), acct, f, s.now(), p)
	if err != nil {
		return err
	}
	ids := make([]string, len(list))
	for i, e := range list {
		ids[i] = e.ID
	}
	sent, err := rd.EventDeliveries(r.Context(), v.app.ID, hk.Mode, ids)
	if err != nil {
		return err
	}
	endpoints, _, err := rd.ListEndpoints(r.Context(), v.app.ID, hk.Mode, store.Page{Limit: 100})
	if err != nil {
		return err
	}
	urls := map[string]string{}
	for _, e := range endpoints {
		urls[e.ID] = e.URL
		if e.CheckSendable() == nil {
			ev.Endpoints = append(ev.Endpoints, e)
		}
	}
	for _, e := range list {
		payload, _ := json.MarshalIndent(rental.NewEvent(e.ID, e.Type, e.Mode, acct.ID, e.CreatedAt, e.Data), "", "  ")
		row := eventRow{ID: e.ID, Type: e.Type, When: when(e.CreatedAt), Payload: string(payload)}
		for _, d := range sent[e.ID] {
			row.Deliveries = append(row.Deliveries, eventDelivery{Delivery: d, URL: urls[d.EndpointID]})
		}
		if hk.Mode == rental.ModeTest && strings.HasPrefix(e.Type, "notification.") {
			var obj struct{ ID string }
			if json.Unmarshal(e.Data, &obj) == nil && obj.ID != "" {
				if n, err := rd.NotificationNotice(r.Context(), acct.LandlordID, obj.ID); err == nil {
					row.Chat = newChatPreview(*n)
				} else if !rental.IsNotFound(err) {
					return err
				}
			}
		}
		ev.Events = append(ev.Events, row)
	}
	if more {
		last := list[len(list)-1]
		next := url.Values{}
		for _, k := range []string{"account", "type"} {
			if q.Get(k) != "" {
				next.Set(k, q.Get(k))
			}
		}
		next.Set("older", strconv.FormatInt(last.CreatedAt.UnixMilli(), 10)+"."+last.ID)
		ev.Older = "?" + next.Encode()
	}
	pg := portalPage(v.person, ev)
	pg.Flash = done[q.Get("done")]
	return s.render(w, r, http.StatusOK, "portal_events", pg)
}

// eventAccount is the account whose events the page shows: the sandbox in
// test mode; in live mode the linked account named, or the first (nil
// when none is linked). It fills the page's choice of accounts. As the
// API, the page shows a live account's events only while it is linked.
func (s *site) eventAccount(r *http.Request, v *visit, id string, ev *eventsView) (*rental.Account, error) {
	rd := s.db.Read()
	if v.hooks.Mode == rental.ModeTest {
		return rd.GetAccount(r.Context(), v.app.ID, v.app.SandboxAccountID)
	}
	accounts, err := rd.LiveAccounts(r.Context(), v.app.ID)
	if err != nil {
		return nil, err
	}
	for _, a := range accounts {
		if !a.Revoked {
			ev.Accounts = append(ev.Accounts, accountChoice{ID: a.ID, Name: a.Name})
		}
	}
	if id == "" {
		if len(ev.Accounts) == 0 {
			return nil, nil
		}
		id = ev.Accounts[0].ID
	}
	ev.Account = id
	return linkedAccount(r.Context(), rd, v.app.ID, v.hooks.Mode, id)
}

// linkedAccount is the account whose events a page of the mode may show:
// the application's sandbox in test mode, or one of its landlords still
// linked in live mode; any other is not found.
func linkedAccount(ctx context.Context, q *store.Queries, appID string, mode rental.Mode, id string) (*rental.Account, error) {
	acct, err := q.GetAccount(ctx, appID, id)
	if err != nil {
		return nil, err
	}
	if acct.Sandbox != (mode == rental.ModeTest) || acct.Revoked {
		return nil, rental.NotFound("account", id)
	}
	return acct, nil
}

// handleSendEvent sends an event to the endpoint the form picks (see
// store.Tx.SendEvent), and shows the event's page again.
func (s *site) handleSendEvent(w http.ResponseWriter, r *http.Request, v *visit) error {
	hk := v.hooks
	if err := form(w, r); err != nil {
		return err
	}
	acctID := v.app.SandboxAccountID
	if hk.Mode == rental.ModeLive {
		acctID = r.PostForm.Get("account")
	}
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		acct, err := linkedAccount(r.Context(), &tx.Queries, v.app.ID, hk.Mode, acctID)
		if err != nil {
			return err
		}
		e, err := tx.GetEndpoint(r.Context(), v.app.ID, hk.Mode, r.PostForm.Get("endpoint_id"))
		if err != nil {
			return err
		}
		if err := e.CheckSendable(); err != nil {
			return err
		}
		f := store.EventFilter{Prefixes: acct.Granted.Intersect(v.app.Scopes).EventPrefixes()}
		_, err = tx.SendEvent(r.Context(), acct, r.PathValue("event_id"), f, e)
		return err
	})
	if err != nil {
		return err
	}
	back := url.Values{"done": {"sent"}}
	if hk.Mode == rental.ModeLive {
		back.Set("account", acctID)
	}
	http.Redirect(w, r, eventsPath(v.app.ID, hk.Mode)+"?"+back.Encode()+"#"+r.PathValue("event_id"), http.StatusSeeOther)
	return nil
}

// newChatPreview is a notice as the tenant's LINE shows it.
func newChatPreview(n rental.Notice) *chatPreview {
	if text := chat.Text(n); n.Type != rental.NotifyNewBill && n.Type != rental.NotifyPaymentReminder {
		return &chatPreview{AltText: text, Text: text}
	}
	p := &chatPreview{AltText: chat.AltText(n), Title: "ใบแจ้งค่าเช่า / Bill", Place: n.Property + " ห้อง " + n.Room,
		Month: "เดือน " + n.Month + " / Month " + n.Month, Total: rental.Baht(n.Total) + " บาท (THB)", Due: n.DueDate}
	if n.Type == rental.NotifyPaymentReminder {
		p.Title = "เตือนชำระค่าเช่า / Payment reminder"
	}
	if n.Paid > 0 {
		p.Paid = rental.Baht(n.Paid) + " ฿"
	}
	if n.PayURL != "" {
		p.Button = "จ่ายด้วยพร้อมเพย์ / PromptPay"
	}
	for _, l := range n.Lines {
		label := l.TH
		if l.EN != "" {
			label += " / " + l.EN
		}
		p.Lines = append(p.Lines, chatLine{Label: label, Amount: rental.Baht(l.Amount) + " ฿"})
	}
	return p
}
