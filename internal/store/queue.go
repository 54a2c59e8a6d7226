package store

import (
	"context"
	"fmt"
)

// JobCount is how many jobs of one kind are in one state of the queue.
type JobCount struct {
	Kind  string
	State string
	Jobs  int
}

// queueStates are the states of jobs that are still to run (or running):
// the queue's depth. Completed, cancelled and discarded jobs are history.
var queueStates = []string{"available", "retryable", "scheduled", "running"}

// MaxCountedJobs bounds the jobs counted in each state, so that reading the
// depth of a queue backed up by millions of jobs stays cheap: past this,
// the count says "at least".
const MaxCountedJobs = 100_000

// QueueDepth counts the jobs waiting or running, by kind and state, each
// state counted up to MaxCountedJobs. It reads River's own table on the read
// pool, one state at a time along River's index that starts with the state.
func (db *DB) QueueDepth(ctx context.Context) ([]JobCount, error) {
	var out []JobCount
	for _, state := range queueStates {
		rows, err := db.Reader().QueryContext(ctx, `SELECT kind, count(*) FROM
			(SELECT kind FROM river_job WHERE state = $1 LIMIT $2) AS j GROUP BY kind ORDER BY kind`, state, MaxCountedJobs)
		if err != nil {
			return nil, fmt.Errorf("store: queue depth: %w", err)
		}
		for rows.Next() {
			c := JobCount{State: state}
			if err := rows.Scan(&c.Kind, &c.Jobs); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: queue depth: %w", err)
			}
			out = append(out, c)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: queue depth: %w", err)
		}
	}
	return out, nil
}
