package api

import (
	"net/http"

	"rentapi/internal/rental"
)

// createBillRun bills a property's month in one request (store.RunBills):
// the fast path of a whole building's month, and with notify its new-bill
// notices, paced rather than refused. A run that notifies in live mode
// needs the LINE channel, as a send does.
func (s *Server) createBillRun(c *call) (int, any, error) {
	f, err := parseObject(c.body, "month", "issue", "notify")
	if err != nil {
		return 0, nil, err
	}
	month, err := required(f, "month")
	if err != nil {
		return 0, nil, err
	}
	if month, err = rental.ParseMonth("month", month); err != nil {
		return 0, nil, err
	}
	var issue, notify rental.Optional[bool]
	if err := read(into(&issue, f.bool, "issue"), into(&notify, f.bool, "notify")); err != nil {
		return 0, nil, err
	}
	if issue.Null {
		return 0, nil, rental.FieldType("issue", "true or false")
	}
	if notify.Null {
		return 0, nil, rental.FieldType("notify", "true or false")
	}
	issued, notified := !issue.Set || issue.Value, notify.Value
	if err := rental.CheckBillRun(issued, notified); err != nil {
		return 0, nil, err
	}
	prop := c.r.PathValue("property_id")
	if notified && !c.acct().Sandbox && !s.chatLive {
		return 0, nil, rental.ChatUnavailable()
	}
	run, err := c.tx.RunBills(c.ctx, c.acct(), prop, month, issued, notified, func() rental.PaymentPage { return rental.NewPaymentPage(s.publicURL) })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, data{run}, nil
}
