package promptpay

import (
	"errors"
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// maxPNGSize caps the image edge so a request parameter cannot make the
// server allocate an arbitrarily large bitmap.
const maxPNGSize = 4096

// PNG renders payload as a size×size pixel PNG QR code, ready to send with
// Content-Type image/png. It uses medium error correction, which survives a
// crumpled printout or a scratched phone screen while keeping the code small,
// and keeps the standard four-module quiet zone that scanners need to find
// the code. If size is smaller than the code needs, the library returns a
// larger image rather than an unreadable one. size must be between 1 and
// 4096.
func PNG(payload string, size int) ([]byte, error) {
	if payload == "" {
		return nil, errors.New("promptpay: empty payload")
	}
	if size <= 0 || size > maxPNGSize {
		return nil, fmt.Errorf("promptpay: image size must be between 1 and %d pixels, got %d", maxPNGSize, size)
	}
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("promptpay: encoding QR code: %w", err)
	}
	q.DisableBorder = false // the quiet zone is part of the contract
	img, err := q.PNG(size)
	if err != nil {
		return nil, fmt.Errorf("promptpay: rendering PNG: %w", err)
	}
	return img, nil
}
