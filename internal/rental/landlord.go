package rental

import (
	"fmt"
	"strings"

	"rentapi/internal/promptpay"
)

// Landlord is a landlord's own account as the landlord keeps it in the
// app settings: the plan chosen there, where QR payments go, and how much
// of the plan the data uses.
type Landlord struct {
	ID         string
	Name       string
	Plan       LandlordPlan
	QRPayments bool
	// Receiver is the PromptPay receiver QRs pay into; nil until set.
	Receiver *promptpay.Receiver
	// ReceiverName is the receiver's account holder, as the landlord gave
	// it beside the receiver; empty when not given.
	ReceiverName string
	// Usage counts the landlord's properties and rooms, which every
	// connected application reaches.
	Usage Capacity
}

// LandlordPlans are the landlord plans in the order they are offered.
var LandlordPlans = []LandlordPlan{LandlordFree, LandlordStandard, LandlordPro}

// CheckPlanChange is nil when a landlord holding usage may move to the
// plan; a plan smaller than the data already kept is 409 plan_too_small,
// naming what is over, so the limits keep holding after any change.
func CheckPlanChange(to LandlordPlan, usage Capacity) error {
	if err := to.Check(); err != nil {
		return err
	}
	limit := to.Capacity()
	var over []string
	if usage.Properties > limit.Properties {
		over = append(over, fmt.Sprintf("%d properties (it allows %d)", usage.Properties, limit.Properties))
	}
	if usage.Rooms > limit.Rooms {
		over = append(over, fmt.Sprintf("%d rooms (it allows %d)", usage.Rooms, limit.Rooms))
	}
	if len(over) > 0 {
		return Conflict("plan_too_small", "The %s plan is too small for this account's %s; delete some first or choose a larger plan.",
			to, strings.Join(over, " and "))
	}
	return nil
}

// Connection is an application a landlord has connected, as the landlord
// reviews it: who it is, what it may do, and since when.
type Connection struct {
	AccountID     string
	ApplicationID string
	Application   string // the application's name
	Company       string
	Granted       Scopes
	// ApprovedAt is the landlord's latest approval of the link.
	ApprovedAt Time
}
