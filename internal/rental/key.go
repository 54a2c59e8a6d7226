package rental

import (
	"time"
)

// KeyStatus is how a key stands, as the portal lists it.
type KeyStatus string

// The statuses of a key. Expiring is a key that stops within
// KeyExpiringWithin: a rotated key in its grace period, or one near its
// own expiry date.
const (
	KeyActive   KeyStatus = "active"
	KeyExpiring KeyStatus = "expiring"
	KeyExpired  KeyStatus = "expired"
	KeyRevoked  KeyStatus = "revoked"
)

// KeyExpiringWithin is how close to its end a key is listed as expiring:
// the rotation grace period, so a rotated key always shows as expiring.
const KeyExpiringWithin = KeyRotationGraceHours * time.Hour

// KeyUseResolution is how often a key's last use is written down: at most
// once per key in this time, so a busy key costs one small write a minute,
// not one per request.
const KeyUseResolution = time.Minute

// maxKeyLife bounds an expiry date a developer can choose.
const maxKeyLife = 10 * 366 * 24 * time.Hour

// Status is the key's status at now.
func (k *APIKey) Status(now time.Time) KeyStatus {
	switch {
	case k.RevokedAt != nil:
		return KeyRevoked
	case k.ExpiresAt == nil:
		return KeyActive
	case !now.Before(k.ExpiresAt.Time):
		return KeyExpired
	case k.ExpiresAt.Sub(now) <= KeyExpiringWithin:
		return KeyExpiring
	}
	return KeyActive
}

// UseToNote reports whether a request the key authenticated at now should
// be written down as its last use: never used, or last noted at least
// KeyUseResolution ago.
func (k *APIKey) UseToNote(now time.Time) bool {
	return k.LastUsedAt == nil || now.Sub(k.LastUsedAt.Time) >= KeyUseResolution
}

// CheckKeyName is nil for a key's name: 1 to 200 characters, so a
// developer can tell keys apart.
func CheckKeyName(name string) error {
	return checkText("name", Of(name), 1, MaxNameLen)
}

// KeyExpiryDate reads the optional expiry date a developer gives a key
// (YYYY-MM-DD, a day in Thailand): the key works through that day and stops
// at the midnight that ends it. No date is no expiry (nil). A day already
// over at now, or more than ten years ahead, is refused.
func KeyExpiryDate(date string, now time.Time) (*time.Time, error) {
	if date == "" {
		return nil, nil
	}
	day, err := time.ParseInLocation(time.DateOnly, date, Bangkok)
	if err != nil {
		return nil, Invalid("expires", "Give the expiry as a date, YYYY-MM-DD.")
	}
	end := day.AddDate(0, 0, 1).UTC()
	switch {
	case !end.After(now):
		return nil, Invalid("expires", "The expiry date %s is over already; choose today or a later day.", date)
	case end.Sub(now) > maxKeyLife:
		return nil, Invalid("expires", "The expiry date must be within ten years.")
	}
	return &end, nil
}
