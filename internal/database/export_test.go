package database

// Waiting is how many writers wait for the turn to write on SQLite, for
// tests that need a group to form.
func Waiting(db *DB) int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.waiters)
}

// RestartLog runs the checkpointer's restart of SQLite's log now.
func RestartLog(db *DB) error { return db.checkpoints.restart() }
