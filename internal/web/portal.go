package web

import "rentapi/internal/rental"

// The developer portal (/portal): a developer's applications
// (applications.go), their keys (keys.go) and linked accounts
// (accounts.go), the webhook pages (webhook.go), and the developer's own
// plan, usage and invoices (plan.go, usage.go, invoices.go). This file
// holds what those pages share.

// portalPage is a page of the portal for the developer, wide enough on a
// desktop for lists of keys.
func portalPage(p *rental.Person, data any) page {
	return page{Area: portalArea, Person: p, Wide: true, Data: data}
}

// whenOpt writes an optional instant, or dash for none.
func whenOpt(t *rental.Time) string {
	if t == nil {
		return "—"
	}
	return when(*t)
}

// scopeChoice is one checkbox of a list of scopes, with what it allows.
type scopeChoice struct {
	Scope   rental.Scope
	TH, EN  string
	Checked bool
}

// scopeChoices are checkboxes for each of offered, checked when in chosen.
func scopeChoices(offered, chosen rental.Scopes) []scopeChoice {
	out := make([]scopeChoice, 0, len(offered))
	for _, sc := range offered {
		th, en := ScopeText(sc)
		out = append(out, scopeChoice{Scope: sc, TH: th, EN: en, Checked: chosen.Has(sc)})
	}
	return out
}

// scopeLabel is a scope shown with what it allows.
type scopeLabel struct {
	Scope  rental.Scope
	TH, EN string
}

// scopeLabels are scopes shown with what each allows.
func scopeLabels(scopes rental.Scopes) []scopeLabel {
	out := make([]scopeLabel, 0, len(scopes))
	for _, sc := range scopes {
		th, en := ScopeText(sc)
		out = append(out, scopeLabel{sc, th, en})
	}
	return out
}

// portalWords say in Thai what a refusal shown on a form of the portal
// (an application's settings, a new key, the plan) is about; the English
// beside it is the domain's own message.
var portalWords = formWords{
	byCode: map[string]string{
		"no_linked_account": "สร้างคีย์ live ได้หลังจากมีเจ้าของหอพักเชื่อมต่อบัญชีกับแอปพลิเคชันนี้แล้วอย่างน้อยหนึ่งบัญชี",
		"invalid_state":     "คีย์นี้ถูกเพิกถอนหรือหมดอายุแล้ว",
	},
	byParam: map[string]string{
		"name":          "ตรวจสอบชื่อ",
		"company":       "ตรวจสอบชื่อบริษัท",
		"description":   "ตรวจสอบคำอธิบาย",
		"scopes":        "ตรวจสอบสิทธิ์ (scopes) ที่เลือก",
		"redirect_uris": "ตรวจสอบ redirect URI",
		"expires":       "ตรวจสอบวันหมดอายุ",
		"account":       "ตรวจสอบบัญชีที่ผูกกับคีย์",
		"mode":          "เลือกโหมด test หรือ live",
	},
	other: "ทำรายการนี้ไม่ได้",
}

// confirmation is the page that asks before a change that cannot be
// undone (or, for a rotation, that starts a clock).
type confirmation struct {
	Path             string // the last segment of its address
	TitleTH, TitleEN string
	TextTH, TextEN   string
	ButtonTH         string
	ButtonEN         string
	Danger           bool
}

// confirmView is a page that asks before a change.
type confirmView struct {
	App    *rental.Application
	Action confirmation
	Key    *keyRow
	// Account is the link to end, for a disconnection.
	Account *accountRow
	Post    string
}
