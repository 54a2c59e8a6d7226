// Package promptpaytest reads QR codes back in tests, the way a phone's
// banking app would, so a test can hold a QR image to the payload it should
// carry.
package promptpaytest

import (
	"bytes"
	"image/png"
	"testing"

	"github.com/makiuchi-d/gozxing"
	zxingqr "github.com/makiuchi-d/gozxing/qrcode"
)

// Scan decodes the QR code in a PNG image (a served QR or a screenshot)
// and returns its text; no readable QR code fails the test.
func Scan(t testing.TB, b []byte) string {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	bmp, err := gozxing.NewBinaryBitmapFromImage(img)
	if err != nil {
		t.Fatalf("QR bitmap: %v", err)
	}
	res, err := zxingqr.NewQRCodeReader().Decode(bmp, nil)
	if err != nil {
		// gozxing's finder misplaces the alignment pattern on about 1 in
		// 150 clean renders (it reports a point outside the image), where
		// phone scanners read the code. Such an image is a bare code in
		// its quiet zone, which the pure-barcode reader reads module by
		// module; a code it cannot read either is a real failure.
		pure := map[gozxing.DecodeHintType]any{gozxing.DecodeHintType_PURE_BARCODE: true}
		var err2 error
		if res, err2 = zxingqr.NewQRCodeReader().Decode(bmp, pure); err2 != nil {
			t.Fatalf("no readable QR code: %v; read as a bare code: %v", err, err2)
		}
	}
	return res.GetText()
}
