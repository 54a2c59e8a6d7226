package chat

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
	// ReplyTryLater answers every code of a LINE user who sent too many
	// wrong ones this hour (rental.CodeTries.Blocked), the right one included.
	ReplyTryLater = "ส่งรหัสไม่ถูกต้องหลายครั้งเกินไป กรุณาลองใหม่อีกครั้งในภายหลังค่ะ\n\n" +
		"Too many codes that did not match. Please try again later."
)
