package rental

import (
	"net/mail"
	"strings"
)

// Bounds on tenant values.
const (
	MaxEmailLen  = 254
	MaxOccupants = 20
)

// Tenant is a person renting a room. The record stays after the move-out,
// for the billing history.
type Tenant struct {
	ID             string  `json:"id"`
	Object         string  `json:"object"`
	RoomID         string  `json:"room_id"`
	PropertyID     string  `json:"property_id"`
	Name           string  `json:"name"`
	Phone          string  `json:"phone"`
	Email          *string `json:"email"`
	ChatEnabled    bool    `json:"chat_enabled"`
	ChatRegistered bool    `json:"chat_registered"`
	// ChatRegistrationCode is what the tenant sends to the service's LINE
	// account to register (null once registered), and
	// ChatRegistrationURL that account's add-friend link (null when the
	// service has no LINE account configured): the service's, not the
	// tenant's, so it is not stored with the tenant but filled in by
	// ShowChatLink wherever a tenant is shown.
	ChatRegistrationCode *string `json:"chat_registration_code"`
	ChatRegistrationURL  *string `json:"chat_registration_url"`
	Occupants            int64   `json:"occupants"`
	MovedInAt            Time    `json:"moved_in_at"`
	MovedOutAt           *Time   `json:"moved_out_at"`
	// Deposit is the money (satang) the tenant left with the landlord at
	// move-in, which the settlement at move-out sets against what is owed.
	Deposit int64 `json:"deposit"`
	// LeaseEnd is the Thailand date the lease runs to (null: none agreed).
	LeaseEnd  *string `json:"lease_end"`
	CreatedAt Time    `json:"created_at"`
	UpdatedAt Time    `json:"updated_at"`
}

// TenantChange holds a move-in or tenant update body.
type TenantChange struct {
	Name        Optional[string]
	Phone       Optional[string]
	Email       Optional[string]
	ChatEnabled Optional[bool]
	Occupants   Optional[int64]
	MovedInAt   Optional[Time]
	Deposit     Optional[int64]
	LeaseEnd    Optional[string]
}

// NewTenant validates a move-in body: name and phone are required, chat is
// on unless turned off, one occupant unless told, moved in now unless told.
func NewTenant(c TenantChange, now Time) (Tenant, error) {
	if !c.Name.Set {
		return Tenant{}, Missing("name")
	}
	if !c.Phone.Set {
		return Tenant{}, Missing("phone")
	}
	t := Tenant{Object: "tenant", ChatEnabled: true, Occupants: 1, MovedInAt: now}
	if c.MovedInAt.Set {
		if c.MovedInAt.Null {
			return Tenant{}, Invalid("moved_in_at", "moved_in_at must be a timestamp, not null.")
		}
		t.MovedInAt = c.MovedInAt.Value
	}
	c.MovedInAt = Optional[Time]{}
	return t, t.Apply(c)
}

// Apply validates and applies a change of contact details or chat setting.
func (t *Tenant) Apply(c TenantChange) error {
	next := *t
	if c.MovedInAt.Set {
		return Invalid("moved_in_at", "moved_in_at cannot be changed.")
	}
	if c.Name.Set {
		if err := checkText("name", c.Name, 1, MaxNameLen); err != nil {
			return err
		}
		next.Name = c.Name.Value
	}
	if c.Phone.Set {
		if c.Phone.Null {
			return Invalid("phone", "phone must be a string, not null.")
		}
		p, err := NormalizePhone(c.Phone.Value)
		if err != nil {
			return err
		}
		next.Phone = p
	}
	if c.Email.Set {
		if c.Email.Null || c.Email.Value == "" {
			next.Email = nil
		} else {
			a, err := mail.ParseAddress(c.Email.Value)
			if err != nil || a.Address != c.Email.Value || len(c.Email.Value) > MaxEmailLen {
				return Invalid("email", "email must be a plain email address such as somchai@example.com.")
			}
			v := c.Email.Value
			next.Email = &v
		}
	}
	if c.ChatEnabled.Set {
		if c.ChatEnabled.Null {
			return Invalid("chat_enabled", "chat_enabled must be true or false.")
		}
		next.ChatEnabled = c.ChatEnabled.Value
	}
	if c.Occupants.Set {
		if err := checkRange("occupants", c.Occupants, 1, MaxOccupants); err != nil {
			return err
		}
		next.Occupants = c.Occupants.Value
	}
	if c.Deposit.Set {
		if err := CheckDeposit(c.Deposit); err != nil {
			return err
		}
		next.Deposit = c.Deposit.Value
	}
	if c.LeaseEnd.Set {
		end, err := CheckLeaseEnd(c.LeaseEnd, next.MovedInAt.Time)
		if err != nil {
			return err
		}
		next.LeaseEnd = end
	}
	*t = next
	return nil
}

// ShowChatLink fills in the tenant's chat_registration_url with the
// service's LINE add-friend link, configured once for the whole service
// (empty: no LINE account, and the field is null). Everything that shows a
// tenant (the API's answers, the bodies of tenant events) calls it, so a
// webhook's body is the object a GET answers; the link is never stored.
func (t *Tenant) ShowChatLink(addFriendURL string) {
	t.ChatRegistrationURL = nil
	if addFriendURL != "" {
		t.ChatRegistrationURL = &addFriendURL
	}
}

// NormalizePhone accepts a Thai phone number as people write it (0812345678,
// 081-234-5678, +66 81 234 5678, 66812345678) and returns it in E.164
// (+66812345678). Mobile numbers have nine digits after the 0, landlines
// eight.
func NormalizePhone(s string) (string, error) {
	bad := Invalid("phone", "phone must be a Thai phone number, such as 081-234-5678 or +66812345678.")
	var digits strings.Builder
	for i, r := range strings.TrimSpace(s) {
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r == '+' && i == 0:
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", bad
		}
	}
	d := digits.String()
	switch {
	case strings.HasPrefix(d, "66"):
		d = strings.TrimPrefix(d, "66")
	case strings.HasPrefix(d, "0") && !strings.HasPrefix(strings.TrimSpace(s), "+"):
		d = d[1:]
	default:
		return "", bad
	}
	d = strings.TrimPrefix(d, "0") // +66 0812345678, written with the trunk 0 kept
	if len(d) < 8 || len(d) > 9 || d[0] < '2' {
		return "", bad
	}
	if len(d) == 9 && !strings.ContainsRune("689", rune(d[0])) {
		return "", bad // nine digits are mobile numbers: 06, 08, 09
	}
	return "+66" + d, nil
}
