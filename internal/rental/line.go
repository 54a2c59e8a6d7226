package rental

// Replies of the service's LINE account to a tenant registering, Thai
// first and English below, as every chat message of the service is.
const (
	// ReplyHowTo answers a follow, and any text that cannot be a code: how
	// to register.
	ReplyHowTo = "สวัสดีค่ะ กรุณาส่งรหัสลงทะเบียน 8 ตัวอักษรที่ได้รับจากเจ้าของหอพัก เพื่อรับบิลค่าเช่าและข้อความทาง LINE\n\n" +
		"Hello! Please send the 8-character registration code your landlord gave you to receive your bills and messages on LINE."
	// ReplyRegistered confirms a registration.
	ReplyRegistered = "ลงทะเบียนเรียบร้อยแล้วค่ะ คุณจะได้รับบิลค่าเช่าและข้อความทาง LINE นี้\n\n" +
		"You are registered: your bills and messages will come to this LINE chat."
	// ReplyUnknownCode answers a code that names no tenant, or was used.
	ReplyUnknownCode = "ไม่พบรหัสนี้ หรือรหัสนี้ถูกใช้ไปแล้ว กรุณาตรวจสอบรหัสกับเจ้าของหอพัก\n\n" +
		"This code is unknown or has already been used. Please check the code with your landlord."
)

// CheckLineRegistration is the rule for linking a chat account to a
// tenant: only a current tenant registers (a moved-out tenant's code is
// void), and a registered one is left as is (done is true).
func CheckLineRegistration(t *Tenant) (done bool, err error) {
	if t.MovedOutAt != nil {
		return false, Errorf(KindConflict, "invalid_state", "Tenant %s has moved out.", t.ID)
	}
	return t.ChatRegistered, nil
}
