package database

import (
	"context"
	"database/sql"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// Mark is where a SQLite database's write-ahead log stood when it was
// read (see DB.Mark): two equal marks mean that no process committed
// anything in between.
type Mark struct{ hdr [walHeaderWords]uint32 }

// The WAL-index header, as SQLite's file format documents it
// (walformat.html): the first 136 bytes of the -shm file hold two copies
// of a 48-byte header in the machine's byte order, then the checkpoint's
// own fields. Every commit, by any connection of any process, rewrites the
// header: its change counter and last frame move on, and the checksums
// with them; a restart of the log draws new salts. A writer writes the
// second copy, then the first; a reader that finds both equal has a header
// no write was in the middle of.
const (
	walHeaderWords = 12
	// walIndexVersion is the header's version field (WALINDEX_MAX_VERSION),
	// which the format has had since SQLite 3.7.0.
	walIndexVersion = 3007000
	// walIsInit is the byte offset of isInit, set once the header is valid.
	walIsInit = 12
	// walMapSize is the length mapped: a page, of which the header takes
	// 136 bytes. SQLite grows the file in regions of 32 KiB, so once the
	// index exists the page is always inside it.
	walMapSize = 4096
)

// Mark reads where the write-ahead log stands from SQLite's shared index,
// without a statement or a read transaction: a few loads from memory the
// database's own connections share. A value read by a statement begun
// after a mark was taken still holds while Mark returns that same mark, so
// a check that runs on every request may read its values once per commit
// of the whole database rather than once per request. It reports false
// when it cannot tell (PostgreSQL; a database whose index could not be
// mapped; a commit writing the header at that instant): then the values
// must be read.
func (db *DB) Mark() (m Mark, ok bool) {
	w := db.wal.Load()
	if w == nil || w.m == nil || w.m.hdr == nil {
		return m, false
	}
	return w.m.mark()
}

// mark reads the header's two copies, first then second, as SQLite's
// readers do. The index is memory shared with other processes, mapped
// from a file: should it ever be cut short under the mapping, the read
// faults, and the fault is taken as "cannot tell" rather than the end of
// the process.
func (w *walMapping) mark() (m Mark, ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	words := (*[2 * walHeaderWords]uint32)(unsafe.Pointer(unsafe.SliceData(w.hdr)))
	for i := range walHeaderWords {
		m.hdr[i] = atomic.LoadUint32(&words[i])
	}
	for i := range walHeaderWords {
		if atomic.LoadUint32(&words[walHeaderWords+i]) != m.hdr[i] {
			return m, false
		}
	}
	b := (*[4 * walHeaderWords]byte)(unsafe.Pointer(&m.hdr))
	return m, m.hdr[0] == walIndexVersion && b[walIsInit] != 0
}

// walIndex is a SQLite database's mapping of its WAL-index, with the
// connection that keeps the index in place: while any connection of this
// process has the log open, no other process can start the index over or
// remove it (SQLite's own rule), so the mapping always shows the index
// SQLite uses.
type walIndex struct {
	pool *sql.DB
	conn *sql.Conn
	m    *walMapping
}

// openWALIndex opens a connection to the database (dsn, at path) that stays
// open while the DB is, has it open the log, and maps the index. When any
// of it fails Mark never tells, and the checks read their values every
// time; the walIndex is still returned if it holds anything to close.
func openWALIndex(ctx context.Context, dsn, path string) (*walIndex, error) {
	w := &walIndex{pool: sql.OpenDB(sqliteConnector{dsn})}
	var err error
	if w.conn, err = w.pool.Conn(ctx); err != nil {
		w.pool.Close()
		return nil, err
	}
	var n int64
	if err := w.conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		w.conn.Close()
		w.pool.Close()
		return nil, err
	}
	w.m, err = mapWALIndex(path + "-shm")
	return w, err
}

// close closes the connection that kept the index, then lets the mapping
// go (see release), once the DB's other connections are closed.
func (w *walIndex) close() error {
	if w == nil {
		return nil
	}
	w.conn.Close()
	err := w.pool.Close()
	if w.m != nil {
		w.m.release()
	}
	return err
}
