package web

import (
	"strings"

	"rentapi/internal/rental"
)

// The words the pages use for scopes: what a landlord reads on the consent
// page and in the list of connected applications, and a developer in the
// portal. They are the pages' text, not a rule, so they live here.

// scopeText is each scope in plain words, Thai then English: a landlord
// deciding on a consent page reads what an application may do, not the
// scope's name.
var scopeText = map[rental.Scope][2]string{
	rental.ScopePropertiesRead:     {"ดูข้อมูลหอพักและอาคารของคุณ", "See your properties"},
	rental.ScopePropertiesWrite:    {"เพิ่มและแก้ไขหอพัก และลบหอพักที่ไม่มีห้อง", "Add and change properties, and delete properties that have no rooms"},
	rental.ScopeRoomsRead:          {"ดูห้องพัก ค่าเช่า และสถานะของห้อง", "See rooms, their rent and their status"},
	rental.ScopeRoomsWrite:         {"เพิ่มห้องพัก และเปลี่ยนค่าเช่าและสถานะของห้อง", "Add rooms, and change their rent and status"},
	rental.ScopeTenantsRead:        {"ดูข้อมูลผู้เช่า (ข้อมูลส่วนบุคคล)", "See your tenants (personal data)"},
	rental.ScopeTenantsWrite:       {"ย้ายผู้เช่าเข้าและออก และแก้ไขข้อมูลติดต่อ (ข้อมูลส่วนบุคคล)", "Move tenants in and out, and change their contact details (personal data)"},
	rental.ScopeMetersRead:         {"ดูมิเตอร์และค่ามิเตอร์รายเดือน", "See meters and monthly meter readings"},
	rental.ScopeMetersWrite:        {"บันทึกและแก้ไขค่ามิเตอร์ (บิลที่ยังไม่ชำระของเดือนนั้นจะคำนวณใหม่)", "Record and correct meter readings (an unpaid bill of that month is recalculated)"},
	rental.ScopeBillsRead:          {"ดูบิลค่าเช่า", "See bills"},
	rental.ScopeBillsWrite:         {"ออกบิลจากค่ามิเตอร์ที่บันทึกไว้", "Create bills from recorded readings"},
	rental.ScopePaymentsRead:       {"ดูการชำระเงินด้วย QR ของผู้เช่า (ข้อมูลการเงิน)", "See tenants' QR payments (financial data)"},
	rental.ScopePaymentsWrite:      {"สร้างลิงก์ชำระเงินด้วย QR ให้บิล (ไม่สามารถทำให้บิลเป็น 'ชำระแล้ว' เองได้)", "Create pay-by-QR links for bills (it can never mark anything paid)"},
	rental.ScopeNotificationsRead:  {"ดูสถานะข้อความแชทที่ส่งถึงผู้เช่า", "See the status of chat messages to tenants"},
	rental.ScopeNotificationsWrite: {"ส่งใบแจ้งหนี้และข้อความแชทถึงผู้เช่า", "Send bill notices and chat messages to tenants"},
	rental.ScopeWebhooksManage:     {"ตั้งค่าการแจ้งเหตุการณ์อัตโนมัติ (webhook) ของแอปพลิเคชัน", "Set up the application's webhook endpoints (automatic event notices)"},
}

// ScopeText is what a scope allows, in plain Thai and English, for people
// who grant it (the consent page) and who review it later (the landlord's
// list of connected applications). A name that is not a scope is shown as
// it is.
func ScopeText(scope rental.Scope) (th, en string) {
	if t, ok := scopeText[scope]; ok {
		return t[0], t[1]
	}
	return string(scope), string(scope)
}

// resourceText is each resource scopes reach, in plain words, Thai then
// English.
var resourceText = map[string][2]string{
	"properties":    {"หอพัก", "Properties"},
	"rooms":         {"ห้องพัก", "Rooms"},
	"tenants":       {"ผู้เช่า", "Tenants"},
	"meters":        {"มิเตอร์", "Meters"},
	"bills":         {"บิล", "Bills"},
	"payments":      {"การชำระเงิน", "Payments"},
	"notifications": {"ข้อความถึงผู้เช่า", "Messages to tenants"},
	"webhooks":      {"การแจ้งเหตุการณ์ (webhook)", "Event notices (webhooks)"},
}

// ScopeGroup is what an application asks of one resource, for a landlord
// to take in at a glance on a phone: the resource in plain words, whether
// the access reads, writes or both (a manage scope writes), and the scopes
// themselves, each of which keeps its own words (ScopeText).
type ScopeGroup struct {
	Resource    string
	TH, EN      string
	Read, Write bool
	Scopes      rental.Scopes
}

// GroupScopes groups scopes by resource, in the order of rental.AllScopes;
// a scope of no known resource is a group of its own, named as it is.
func GroupScopes(scopes rental.Scopes) []ScopeGroup {
	var out []ScopeGroup
	at := map[string]int{}
	for _, sc := range scopes {
		resource, access, _ := strings.Cut(string(sc), ":")
		i, ok := at[resource]
		if !ok {
			g := ScopeGroup{Resource: resource, TH: resource, EN: resource}
			if t, known := resourceText[resource]; known {
				g.TH, g.EN = t[0], t[1]
			}
			i, at[resource] = len(out), len(out)
			out = append(out, g)
		}
		g := &out[i]
		if access == "read" {
			g.Read = true
		} else {
			g.Write = true
		}
		g.Scopes = append(g.Scopes, sc)
	}
	return out
}
