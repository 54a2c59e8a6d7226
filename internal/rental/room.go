package rental

import "slices"

// Room states. Occupied is set only by a tenant moving in and cleared only
// by the move-out, so the status can never disagree with the tenant record.
const (
	RoomVacant      = "vacant"
	RoomOccupied    = "occupied"
	RoomMaintenance = "maintenance"
)

// RoomStatuses lists the room states.
var RoomStatuses = []string{RoomVacant, RoomOccupied, RoomMaintenance}

// Bounds on room values.
const (
	MaxRoomNumberLen = 20
	MaxRent          = 10_000_000 // satang per month (100,000 THB)
	minFloor         = -5
	maxFloor         = 200
)

// Room is one rentable room of a property, as the API shows it.
type Room struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	PropertyID  string  `json:"property_id"`
	Number      string  `json:"number"`
	Floor       *int64  `json:"floor"`
	MonthlyRent int64   `json:"monthly_rent"`
	Currency    string  `json:"currency"`
	Status      string  `json:"status"`
	TenantID    *string `json:"tenant_id"`
	CreatedAt   Time    `json:"created_at"`
	UpdatedAt   Time    `json:"updated_at"`
}

// RoomChange holds a room create or update body.
type RoomChange struct {
	Number      Optional[string]
	Floor       Optional[int64]
	MonthlyRent Optional[int64]
	Status      Optional[string]
}

// NewRoom validates a create body: number and rent are required; a new
// room is vacant or under maintenance.
func NewRoom(propertyID string, c RoomChange) (Room, error) {
	if !c.Number.Set {
		return Room{}, Missing("number")
	}
	if !c.MonthlyRent.Set {
		return Room{}, Missing("monthly_rent")
	}
	if err := checkText("number", c.Number, 1, MaxRoomNumberLen); err != nil {
		return Room{}, err
	}
	r := Room{Object: "room", PropertyID: propertyID, Number: c.Number.Value, Currency: Currency, Status: RoomVacant}
	if c.Status.Set && !c.Status.Null && c.Status.Value == RoomOccupied {
		return Room{}, Invalid("status", "A new room is vacant or maintenance; it becomes occupied when a tenant moves in.")
	}
	return r, r.Apply(RoomChange{Floor: c.Floor, MonthlyRent: c.MonthlyRent, Status: c.Status})
}

// Apply validates and applies an update: rent, floor and status. Occupied
// comes and goes only with a tenant.
func (r *Room) Apply(c RoomChange) error {
	next := *r
	if c.Number.Set {
		return Invalid("number", "A room's number cannot be changed.")
	}
	if c.MonthlyRent.Set {
		if err := checkRange("monthly_rent", c.MonthlyRent, 0, MaxRent); err != nil {
			return err
		}
		next.MonthlyRent = c.MonthlyRent.Value
	}
	if c.Floor.Set {
		if c.Floor.Null {
			next.Floor = nil
		} else {
			if err := checkRange("floor", c.Floor, minFloor, maxFloor); err != nil {
				return err
			}
			v := c.Floor.Value
			next.Floor = &v
		}
	}
	if c.Status.Set {
		if c.Status.Null || !slices.Contains(RoomStatuses, c.Status.Value) {
			return Invalid("status", "status must be one of vacant, occupied, maintenance.")
		}
		switch {
		case c.Status.Value == next.Status:
		case c.Status.Value == RoomOccupied:
			return Errorf(KindConflict, "invalid_state", "A room becomes occupied only when a tenant moves in, and vacant when the tenant moves out.")
		case next.Status == RoomOccupied:
			return Errorf(KindConflict, "invalid_state", "Room %s has a tenant; move the tenant out first.", r.Number)
		}
		next.Status = c.Status.Value
	}
	*r = next
	return nil
}

// Occupied is 409 room_occupied: the room has its tenant (tenantID,
// when known).
func Occupied(r *Room, tenantID string) *Error {
	e := Conflict("room_occupied", "Room %s already has a tenant.", r.Number)
	e.ResourceID = tenantID
	return e
}

// MoveIn checks that a tenant can move into the room: one tenant per room.
func (r *Room) MoveIn() error {
	if r.TenantID != nil {
		return Occupied(r, *r.TenantID)
	}
	return nil
}

// MoveOut checks that the room's tenant can move out: the room has one
// (else not found, as there is no tenancy to end).
func (r *Room) MoveOut() error {
	if r.TenantID == nil {
		return Errorf(KindNotFound, "resource_not_found", "Room %s has no tenant.", r.Number)
	}
	return nil
}

// Delete checks that the room may be deleted, given how many of its bills
// went past draft: not while a tenant lives there (409 room_occupied), nor
// while it has bills the landlord must keep (409 room_has_bills).
func (r *Room) Delete(keptBills int) error {
	if r.TenantID != nil {
		return Conflict("room_occupied", "Room %s has a tenant; move the tenant out first.", r.Number)
	}
	if keptBills > 0 {
		return Conflict("room_has_bills", "Room %s has %d issued, overdue or paid bills and cannot be deleted.", r.Number, keptBills)
	}
	return nil
}

// RoomNumberTaken is 409 room_number_taken for a number already used in the
// property.
func RoomNumberTaken(number string) *Error {
	e := Conflict("room_number_taken", "Room number %s is already used in this property.", number)
	e.Param = "number"
	return e
}
