package store

import (
	"github.com/riverqueue/river"

	"rentapi/internal/rental"
)

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

// enqueue queues jobs in the transaction: they exist exactly when it
// commits. They are inserted together at Commit, in one statement however
// many events the transaction recorded (one insert each cost PostgreSQL a
// round trip per event).
func (tx *Tx) enqueue(jobs ...river.InsertManyParams) { tx.jobs = append(tx.jobs, jobs...) }
