package chat

// Replies of the service's LINE account to a tenant registering or sending
// a slip, Thai first and English below, as every chat message of the
// service is.
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

// Replies to a picture sent as a transfer slip.
const (
	// ReplySlipReceived: the slip is filed and being checked; the result
	// comes as a message of its own.
	ReplySlipReceived = "ได้รับสลิปแล้วค่ะ กำลังตรวจสอบ จะแจ้งผลให้ทราบทาง LINE นี้\n\n" +
		"Slip received: it is being checked, and the result will come to this chat."
	// ReplyNotTenant answers a picture from a LINE user who is no
	// registered tenant: nothing is filed.
	ReplyNotTenant = "ขอบคุณค่ะ บัญชี LINE นี้ยังไม่ได้ลงทะเบียนเป็นผู้เช่า จึงรับสลิปไม่ได้ กรุณาส่งรหัสลงทะเบียนจากเจ้าของหอพักก่อน\n\n" +
		"Thank you. This LINE account is not registered as a tenant, so slips cannot be taken here. Please send the registration code your landlord gave you first."
	// ReplyNothingDue answers a registered tenant's picture when no bill
	// of theirs is unpaid: nothing is filed.
	ReplyNothingDue = "ขอบคุณค่ะ ขณะนี้ไม่มีบิลค้างชำระ จึงไม่ได้บันทึกสลิปนี้\n\n" +
		"Thank you. You have no unpaid bill at the moment, so this slip was not filed."
	// ReplySlipsUnavailable answers a live tenant's picture while the
	// service has no slip-verification provider.
	ReplySlipsUnavailable = "ขออภัยค่ะ ขณะนี้ยังตรวจสลิปทาง LINE ไม่ได้ กรุณาแจ้งการชำระกับเจ้าของหอพักโดยตรง\n\n" +
		"Sorry, slips cannot be checked here at the moment. Please tell your landlord about the payment directly."
	// ReplySlipNotImage answers a file that is not a JPEG or PNG picture
	// of at most 2 MB.
	ReplySlipNotImage = "ขออภัยค่ะ ไฟล์นี้ไม่ใช่ภาพสลิป (JPEG หรือ PNG ไม่เกิน 2 MB) กรุณาส่งภาพหน้าจอสลิปจากแอปธนาคาร\n\n" +
		"Sorry, this is not a slip picture (JPEG or PNG, at most 2 MB). Please send the screenshot of the slip from your bank app."
	// ReplySlipFailed answers a picture that could not be fetched from LINE.
	ReplySlipFailed = "ขออภัยค่ะ รับภาพสลิปไม่สำเร็จ กรุณาส่งอีกครั้ง\n\n" +
		"Sorry, the slip picture could not be received. Please send it again."
)
