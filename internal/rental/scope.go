package rental

// scopeText says what each scope lets an application do, in Thai and in
// English: one table for every page that shows scopes, so the developer who
// asks for a scope and the landlord who grants it read the same words.
var scopeText = map[Scope][2]string{
	ScopePropertiesRead:     {"ดูข้อมูลอาคารและหอพัก", "Read properties"},
	ScopePropertiesWrite:    {"เพิ่มและแก้ไขอาคาร ลบอาคารที่ไม่มีห้อง", "Create and update properties; delete properties without rooms"},
	ScopeRoomsRead:          {"ดูข้อมูลห้อง", "Read rooms"},
	ScopeRoomsWrite:         {"เพิ่มห้อง เปลี่ยนค่าเช่าและสถานะห้อง", "Create rooms; change their rent and status"},
	ScopeTenantsRead:        {"ดูข้อมูลผู้เช่า (ข้อมูลส่วนบุคคล)", "Read tenants (personal data)"},
	ScopeTenantsWrite:       {"ย้ายผู้เช่าเข้าและออก แก้ไขข้อมูลติดต่อ (ข้อมูลส่วนบุคคล)", "Move tenants in and out; update contact details (personal data)"},
	ScopeMetersRead:         {"ดูมิเตอร์และเลขมิเตอร์รายเดือน", "Read meters and monthly readings"},
	ScopeMetersWrite:        {"บันทึกและแก้ไขเลขมิเตอร์ (บิลเดือนนั้นที่ยังไม่ชำระจะคำนวณใหม่)", "Record and correct readings (an unpaid bill for the month is recalculated)"},
	ScopeBillsRead:          {"ดูบิล", "Read bills"},
	ScopeBillsWrite:         {"ออกบิลจากเลขมิเตอร์ที่บันทึกไว้", "Create bills from recorded readings"},
	ScopePaymentsRead:       {"ดูการชำระเงินผ่าน QR ของผู้เช่า (ข้อมูลการเงิน)", "Read tenants' QR payments (financial data)"},
	ScopePaymentsWrite:      {"สร้างลิงก์ชำระเงินด้วย QR ให้บิล ไม่สามารถบันทึกว่าชำระแล้วเอง", "Create pay-by-QR links for bills; never marks anything paid"},
	ScopeNotificationsRead:  {"ดูสถานะข้อความแชต", "Read the status of chat messages"},
	ScopeNotificationsWrite: {"ส่งแจ้งบิลและข้อความถึงผู้เช่า", "Send bill notices and messages to tenants"},
	ScopeWebhooksManage:     {"สร้าง แก้ไข และลบ webhook ของแอปพลิเคชัน", "Create, change and delete the application's webhook endpoints"},
}

// ScopeText says in plain words, Thai and English, what a scope allows:
// what the portal shows a developer choosing scopes and what the consent
// page shows a landlord granting them. An unknown scope is its own name in
// both, so a page never shows a blank.
func ScopeText(s Scope) (th, en string) {
	if t, ok := scopeText[s]; ok {
		return t[0], t[1]
	}
	return string(s), string(s)
}
