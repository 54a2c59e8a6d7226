package database

import "encoding/binary"

// Waiting is how many writers wait for the turn to write on SQLite, for
// tests that need a group to form.
func Waiting(db *DB) int {
	db.group.mu.Lock()
	defer db.group.mu.Unlock()
	return len(db.group.waiters)
}

// RestartLog runs the checkpointer's restart of SQLite's log now.
func RestartLog(db *DB) error { return db.checkpoints.restart() }

// WALMapping is a mapping of a WAL-index file, for tests of its faults.
type WALMapping struct{ m *walMapping }

// MapWALIndex maps the WAL-index file at path.
func MapWALIndex(path string) (WALMapping, error) {
	m, err := mapWALIndex(path)
	return WALMapping{m}, err
}

// Mark reads the mapping's header.
func (w WALMapping) Mark() (Mark, bool) { return w.m.mark() }

// Release lets the mapping go.
func (w WALMapping) Release() { w.m.release() }

// ValidWALIndexHeader is the head of a WAL-index file whose header is
// valid: both copies equal, of the version SQLite writes, marked in use.
func ValidWALIndexHeader() []byte {
	b := make([]byte, walMapSize)
	var hdr [4 * walHeaderWords]byte
	binary.NativeEndian.PutUint32(hdr[0:], walIndexVersion)
	hdr[walIsInit] = 1
	binary.NativeEndian.PutUint32(hdr[16:], 7) // the last frame
	copy(b, hdr[:])
	copy(b[len(hdr):], hdr[:])
	return b
}
