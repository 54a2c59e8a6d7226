package rental

import "time"

// Why a bill run skipped a room: no reading for the month, or a bill for
// it already.
const (
	SkipReadingRequired = "reading_required"
	SkipBillExists      = "bill_exists"
)

// BillRun is a bill run's answer: the bills it made and the rooms it
// skipped, as the API shows them.
type BillRun struct {
	Object              string        `json:"object"`
	PropertyID          string        `json:"property_id"`
	Month               string        `json:"month"`
	Created             []string      `json:"created"`
	Skipped             []BillRunSkip `json:"skipped"`
	NotificationsQueued int           `json:"notifications_queued"`
}

// BillRunSkip is one room a bill run made no bill for, and why.
type BillRunSkip struct {
	RoomID string `json:"room_id"`
	Reason string `json:"reason"`
}

// CheckBillRun refuses a run that would notify tenants of bills it leaves
// as drafts: a new_bill notice issues its bill (CheckNotification), so a
// run that notifies issues its bills, and asking for drafts with notify is
// a contradiction (400 naming notify) rather than a guess at which was
// meant.
func CheckBillRun(issue, notify bool) error {
	if notify && !issue {
		return Invalid("notify", "A bill run that notifies tenants issues its bills: leave issue out (or true) with notify, or notify later with POST /v1/notifications.")
	}
	return nil
}

// PlanBillRun is the rule of a bill run: each room's bill is NewBill's,
// the very rule of one bill, and a room NewBill refuses for want of a
// reading (reading_required) or because it is billed already
// (resource_exists) is skipped with that reason; any other refusal stops
// the run. The bills and skips keep the order of srcs.
func PlanBillRun(srcs []BillSource, now time.Time) (bills []Bill, skipped []BillRunSkip, err error) {
	skipped = []BillRunSkip{}
	for _, src := range srcs {
		b, err := NewBill(src, now)
		if err == nil {
			bills = append(bills, b)
			continue
		}
		e, ok := AsError(err)
		switch {
		case ok && e.Code == "reading_required":
			skipped = append(skipped, BillRunSkip{RoomID: src.Room.ID, Reason: SkipReadingRequired})
		case ok && e.Code == "resource_exists":
			skipped = append(skipped, BillRunSkip{RoomID: src.Room.ID, Reason: SkipBillExists})
		default:
			return nil, nil, err
		}
	}
	return bills, skipped, nil
}
