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
		t.Fatalf("no readable QR code: %v", err)
	}
	return res.GetText()
}
