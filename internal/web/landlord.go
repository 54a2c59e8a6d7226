package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"rentapi/internal/promptpay"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// appPage is what /app shows: the landlord's account, its plan against the
// others, the PromptPay receiver (or the form sent with what was wrong),
// and the connected applications.
type appPage struct {
	Landlord    *rental.Landlord
	PlanTH      string
	PlanEN      string
	Limits      capacityView
	Usage       capacityView
	Plans       []planView
	PlanError   string
	Receiver    receiverView
	Kinds       []kindView
	Form        receiverForm
	FormError   string
	Connections []connectionView
}

// capacityView is a count of properties and rooms, written for people.
type capacityView struct {
	Properties, Rooms       int
	PropertiesS, RoomsS     string
	PropertiesMax, RoomsMax int
}

func newCapacity(c, limit rental.Capacity) capacityView {
	return capacityView{Properties: c.Properties, Rooms: c.Rooms, PropertiesS: count(c.Properties), RoomsS: count(c.Rooms),
		PropertiesMax: limit.Properties, RoomsMax: limit.Rooms}
}

// planView is one landlord plan offered on the form.
type planView struct {
	Plan       rental.LandlordPlan
	TH, EN     string
	Limits     capacityView
	QRPayments bool
	Current    bool
}

var planNames = map[rental.LandlordPlan][2]string{
	rental.LandlordFree:     {"ฟรี", "Free"},
	rental.LandlordStandard: {"มาตรฐาน", "Standard"},
	rental.LandlordPro:      {"โปร", "Pro"},
}

// receiverView is the PromptPay receiver as set.
type receiverView struct {
	Set            bool
	KindTH, KindEN string
	ID, Ref2       string
	// Name is the account holder's, as the landlord gave it.
	Name string
}

// kindView is one kind of PromptPay receiver on the form.
type kindView struct {
	Kind, TH, EN string
	Selected     bool
}

var receiverKinds = []kindView{
	{Kind: promptpay.Mobile, TH: "เบอร์มือถือ", EN: "Mobile number"},
	{Kind: promptpay.NationalID, TH: "เลขประจำตัวประชาชน", EN: "National ID"},
	{Kind: promptpay.TaxID, TH: "เลขประจำตัวผู้เสียภาษี", EN: "Tax ID"},
	{Kind: promptpay.EWallet, TH: "อีวอลเล็ต", EN: "e-Wallet ID"},
	{Kind: promptpay.Biller, TH: "Biller ID (บัญชีร้านค้า)", EN: "Biller ID"},
}

// receiverForm is what the landlord typed, kept for the form shown again.
type receiverForm struct{ Kind, ID, Ref2, Name string }

// connectionView is one connected application.
type connectionView struct {
	AccountID, Application, Company string
	Scopes                          []scopeView
	ApprovedTH, ApprovedEN          string
}

// scopeView is a scope in plain words; New marks one the landlord has not
// granted before.
type scopeView struct {
	Name, TH, EN string
	New          bool
}

// grantView is what an application asks of one resource on the consent
// page: the resource, how far the access goes in words, and each scope in
// its own words; New says some of them the landlord has not granted before.
type grantView struct {
	TH, EN             string
	AccessTH, AccessEN string
	Scopes             []scopeView
	New                bool
}

// grantViews groups scopes by resource (GroupScopes), marking those
// in fresh new.
func grantViews(scopes, fresh rental.Scopes) []grantView {
	groups := GroupScopes(scopes)
	out := make([]grantView, 0, len(groups))
	for _, g := range groups {
		v := grantView{TH: g.TH, EN: g.EN, Scopes: scopeViews(g.Scopes, fresh)}
		switch {
		case g.Read && g.Write:
			v.AccessTH, v.AccessEN = "ดูและแก้ไข", "read and write"
		case g.Read:
			v.AccessTH, v.AccessEN = "ดูอย่างเดียว", "read only"
		default:
			v.AccessTH, v.AccessEN = "แก้ไข", "write"
		}
		for _, sc := range v.Scopes {
			v.New = v.New || sc.New
		}
		out = append(out, v)
	}
	return out
}

func scopeViews(scopes, fresh rental.Scopes) []scopeView {
	out := make([]scopeView, 0, len(scopes))
	for _, sc := range scopes {
		th, en := ScopeText(sc)
		out = append(out, scopeView{Name: string(sc), TH: th, EN: en, New: fresh.Has(sc)})
	}
	return out
}

// appData loads what /app shows for the landlord.
func (s *site) appData(r *http.Request, landlordID string) (*appPage, error) {
	q := s.db.Read()
	l, err := q.Landlord(r.Context(), landlordID)
	if err != nil {
		return nil, err
	}
	conns, err := q.Connections(r.Context(), landlordID)
	if err != nil {
		return nil, err
	}
	d := &appPage{Landlord: l, Limits: newCapacity(l.Plan.Capacity(), l.Plan.Capacity()), Usage: newCapacity(l.Usage, l.Plan.Capacity())}
	d.PlanTH, d.PlanEN = planNames[l.Plan][0], planNames[l.Plan][1]
	for _, p := range rental.LandlordPlans {
		d.Plans = append(d.Plans, planView{Plan: p, TH: planNames[p][0], EN: planNames[p][1], Limits: newCapacity(p.Capacity(), p.Capacity()),
			QRPayments: p.QRPayments(), Current: p == l.Plan})
	}
	if rv := l.Receiver; rv != nil {
		d.Receiver = receiverView{Set: true, ID: rv.ID, Ref2: rv.Ref2, Name: l.ReceiverName}
		d.Form = receiverForm{Kind: rv.Kind, ID: rv.ID, Ref2: rv.Ref2, Name: l.ReceiverName}
		for _, k := range receiverKinds {
			if k.Kind == rv.Kind {
				d.Receiver.KindTH, d.Receiver.KindEN = k.TH, k.EN
			}
		}
	}
	for _, c := range conns {
		v := connectionView{AccountID: c.AccountID, Application: c.Application, Company: c.Company, Scopes: scopeViews(c.Granted, nil)}
		v.ApprovedTH, v.ApprovedEN = dates(c.ApprovedAt.Time)
		d.Connections = append(d.Connections, v)
	}
	return d, nil
}

// showApp renders /app with d, its kinds marked for the form's choice.
func (s *site) showApp(w http.ResponseWriter, r *http.Request, p *rental.Person, status int, d *appPage, flash string) error {
	d.Kinds = make([]kindView, len(receiverKinds))
	for i, k := range receiverKinds {
		k.Selected = k.Kind == d.Form.Kind
		d.Kinds[i] = k
	}
	return s.render(w, r, status, "app", page{Area: landlordArea, Person: p, Flash: flash, Data: d})
}

// handleApp shows the landlord's account.
func (s *site) handleApp(w http.ResponseWriter, r *http.Request, v *visit) error {
	d, err := s.appData(r, v.person.LandlordID)
	if err != nil {
		return err
	}
	return s.showApp(w, r, v.person, http.StatusOK, d, done[r.URL.Query().Get("done")])
}

// handlePlan moves the landlord to the chosen plan. A plan the data does
// not fit is the page again saying what is over; moving to free turns QR
// payments off from the next request on.
func (s *site) handlePlan(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	if err := form(w, r); err != nil {
		return err
	}
	plan := rental.LandlordPlan(r.PostForm.Get("plan"))
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error { return tx.ChangeLandlordPlan(r.Context(), p.LandlordID, plan) })
	if msg, status, ok := formError(err, planWords); ok {
		d, err := s.appData(r, p.LandlordID)
		if err != nil {
			return err
		}
		d.PlanError = msg
		return s.showApp(w, r, p, status, d, "")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/app?done=plan", http.StatusSeeOther)
	return nil
}

// planWords say in Thai why the landlord's plan cannot change.
var planWords = formWords{
	byCode: map[string]string{"plan_too_small": "แพ็กเกจนี้รองรับหอพักหรือห้องได้น้อยกว่าที่คุณมีอยู่ ลบบางส่วนก่อน หรือเลือกแพ็กเกจที่ใหญ่กว่า"},
	other:  "เปลี่ยนเป็นแพ็กเกจนี้ไม่ได้",
}

// receiverFieldTH says in Thai which field of the receiver to fix; the
// check's own English message follows it.
var receiverFieldTH = map[string]string{
	"kind": "เลือกประเภทบัญชีพร้อมเพย์",
	"id":   "ตรวจสอบหมายเลขพร้อมเพย์อีกครั้ง",
	"ref2": "Ref2 ใช้ได้เฉพาะตัวอักษร A-Z และตัวเลข ไม่เกิน 20 ตัว",
	"name": "ใส่ชื่อเจ้าของบัญชีพร้อมเพย์ ตามที่แอปธนาคารแสดงก่อนโอน",
}

// handlePromptPay sets where the landlord's QRs pay into, and the account
// holder's name, which the payment page shows tenants as their bank app
// shows it before a transfer (so here it is required). A value that is no
// PromptPay receiver, or no name, is the form again, as typed, with what
// to fix. Ref2 belongs to a biller only and is left out for any other kind.
func (s *site) handlePromptPay(w http.ResponseWriter, r *http.Request, v *visit) error {
	p := v.person
	if err := form(w, r); err != nil {
		return err
	}
	in := receiverForm{Kind: r.PostForm.Get("kind"), ID: strings.TrimSpace(r.PostForm.Get("id")), Ref2: strings.TrimSpace(r.PostForm.Get("ref2")),
		Name: strings.TrimSpace(r.PostForm.Get("name"))}
	rv := promptpay.Receiver{Kind: in.Kind, ID: in.ID}
	if in.Kind == promptpay.Biller {
		rv.Ref2 = in.Ref2
	}
	err := rental.CheckReceiverName(in.Name)
	if err == nil {
		err = s.db.InTx(r.Context(), func(tx *store.Tx) error {
			_, err := tx.SetPromptPay(r.Context(), p.LandlordID, rv, in.Name)
			return err
		})
	}
	field, msg := "", ""
	var fe *promptpay.FieldError
	if errors.As(err, &fe) {
		field, msg = fe.Field, sentence(fe.Message)
	} else if e, ok := rental.AsError(err); ok && e.Kind == rental.KindInvalid {
		field, msg = e.Param, "The account holder's name: "+e.Message
	}
	if field != "" {
		d, err := s.appData(r, p.LandlordID)
		if err != nil {
			return err
		}
		d.Form = in
		d.FormError = receiverFieldTH[field] + " · " + msg
		return s.showApp(w, r, p, http.StatusBadRequest, d, "")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/app?done=promptpay", http.StatusSeeOther)
	return nil
}

// sentence starts a message with a capital and ends it with a full stop.
func sentence(m string) string {
	if m == "" {
		return m
	}
	m = strings.ToUpper(m[:1]) + m[1:]
	if !strings.HasSuffix(m, ".") {
		m += "."
	}
	return m
}

// handleDisconnectPage asks the landlord to confirm a disconnection.
func (s *site) handleDisconnectPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	c, err := s.db.Read().Connection(r.Context(), v.person.LandlordID, r.PathValue("account_id"))
	if err != nil {
		return err
	}
	return s.render(w, r, http.StatusOK, "disconnect", page{Area: landlordArea, Person: v.person, Data: c})
}

// handleDisconnect ends the link between the landlord and one application:
// from the next request on, every key of the application is refused on this
// account (403 account_access_revoked); the data stays, and linking again
// needs a new approval.
func (s *site) handleDisconnect(w http.ResponseWriter, r *http.Request, v *visit) error {
	err := s.db.InTx(r.Context(), func(tx *store.Tx) error {
		c, err := tx.Connection(r.Context(), v.person.LandlordID, r.PathValue("account_id"))
		if err != nil {
			return err
		}
		return tx.RevokeAccount(r.Context(), c.ApplicationID, c.AccountID)
	})
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/app?done=disconnected", http.StatusSeeOther)
	return nil
}

// count writes a number with thousands separators: 20000 → 20,000.
func count(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// dates writes a day in Thai (Buddhist era) and in English, in Thailand's
// time.
func dates(t time.Time) (th, en string) {
	t = t.In(rental.Bangkok)
	return strconv.Itoa(t.Day()) + " " + thaiMonths[t.Month()-1] + " " + strconv.Itoa(t.Year()+543), t.Format("2 January 2006")
}
