package store

import (
	"github.com/riverqueue/river"

	"rentapi/internal/rental"
)

// The arguments of every River job of the service, with their kinds and
// queues, are on this one screen. They live in the store because the store
// inserts the jobs a change needs in the change's own transaction (a
// delivery per event and endpoint, a send per notification), while
// internal/jobs, which works them and schedules the periodic sweeps,
// already imports the store: a package of its own would hold nothing else.
// A kind is what River stores in each job row, so renaming one strands the
// jobs queued under the old name.

// DeliveryArgs is the job that sends one delivery. Generation is the
// delivery's at the time the job was queued: a resend starts a new
// generation, and a job of an older one does nothing.
type DeliveryArgs struct {
	DeliveryID string `json:"delivery_id"`
	Generation int    `json:"generation"`
}

// Kind names the job in the queue.
func (DeliveryArgs) Kind() string { return "webhook_delivery" }

// DeliveryQueue is the queue deliveries run on, apart from the sweeps, so
// a slow receiver never holds up overdue bills.
const DeliveryQueue = "webhook"

// InsertOpts puts every delivery on its queue with the spec's 8 attempts.
func (DeliveryArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: DeliveryQueue, MaxAttempts: rental.MaxAttempts}
}

// SendArgs is the job that sends one notification over LINE, one attempt a
// run; River runs it again on the notification's retry schedule.
type SendArgs struct {
	NotificationID string `json:"notification_id"`
}

// Kind names the job in the queue.
func (SendArgs) Kind() string { return "notification_send" }

// ChatQueue is the queue chat sends run on, apart from webhook deliveries
// and the sweeps, so a slow chat provider holds up neither.
const ChatQueue = "chat"

// InsertOpts puts sends on their queue with the notification's attempts.
func (SendArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: ChatQueue, MaxAttempts: rental.MaxSendAttempts}
}

// SlipArgs is the job that verifies one slip with the provider, one
// attempt a run; River runs it again on rental.VerifyRetries while the
// provider fails.
type SlipArgs struct {
	SlipID string `json:"slip_id"`
}

// Kind names the job in the queue.
func (SlipArgs) Kind() string { return "slip_verify" }

// SlipQueue is the queue slip verifications run on, apart from the sweeps
// and deliveries, so a slow provider holds up neither.
const SlipQueue = "slip"

// InsertOpts puts verifications on their queue with the schedule's attempts.
func (SlipArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SlipQueue, MaxAttempts: rental.MaxVerifyAttempts}
}

// The periodic sweeps below carry no arguments and run on River's default
// queue; internal/jobs schedules them and names their periodic IDs.

// OverdueArgs asks for a sweep of issued bills past their due date.
type OverdueArgs struct{}

// Kind names the job in the queue.
func (OverdueArgs) Kind() string { return "overdue_sweep" }

// ReminderArgs asks for a sweep of the day's payment reminders.
type ReminderArgs struct{}

// Kind names the job in the queue.
func (ReminderArgs) Kind() string { return "reminder_sweep" }

// LateFeeArgs asks for a sweep of unpaid bills whose late fee grows.
type LateFeeArgs struct{}

// Kind names the job in the queue.
func (LateFeeArgs) Kind() string { return "late_fee_sweep" }

// ExpiryArgs asks for a sweep of pending payments past their expiry.
type ExpiryArgs struct{}

// Kind names the job in the queue.
func (ExpiryArgs) Kind() string { return "payment_expiry_sweep" }

// RetentionArgs asks for the deletion of data past its retention: events
// and webhook deliveries (30 days), stored idempotent responses (24 hours)
// and slips' images (30 days).
type RetentionArgs struct{}

// Kind names the job in the queue.
func (RetentionArgs) Kind() string { return "retention_sweep" }

// CloseMonthArgs asks for the monthly close: every developer's invoice for
// the month before the store's clock's (Thailand time).
type CloseMonthArgs struct{}

// Kind names the job in the queue.
func (CloseMonthArgs) Kind() string { return "invoice_close" }

// enqueue queues jobs in the transaction: they exist exactly when it
// commits. They are inserted together at Commit, in one statement however
// many events the transaction recorded (one insert each cost PostgreSQL a
// round trip per event).
func (tx *Tx) enqueue(jobs ...river.InsertManyParams) { tx.jobs = append(tx.jobs, jobs...) }
