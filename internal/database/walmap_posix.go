//go:build linux || darwin

package database

import (
	"fmt"
	"sync"
	"syscall"
)

// walMapping is a read-only mapping of the head of a WAL-index file,
// shared by the DBs of this process open on the same file.
//
// It is shared, and its file closed only when the last of them lets go,
// because SQLite's locks are POSIX record locks, which belong to the
// process: closing any descriptor of the file drops every lock the
// process holds on it, those of SQLite's own connections included, and
// another process could then take the index for unused and start it over
// under them. So the file stays open as long as this process may have
// SQLite connections on it; SQLite keeps its own descriptors per file the
// same way.
type walMapping struct {
	key  walFile
	fd   int
	hdr  []byte
	refs int
}

// walFile names a file by device and inode, as locks do.
type walFile struct{ dev, ino uint64 }

// walMappings are this process's mappings, by file: state of the whole
// process, as the locks that make it necessary are.
var walMappings = struct {
	sync.Mutex
	m map[walFile]*walMapping
}{m: map[walFile]*walMapping{}}

// mapWALIndex maps the WAL-index file at path, or takes another
// reference to this process's mapping of it. Its caller holds a SQLite
// connection with the log open, so the file is in place and stays so.
// Once a descriptor is open it is closed only by release, even when the
// mapping fails (then the mapping tells nothing: see mark): closing it
// would drop SQLite's locks.
func mapWALIndex(path string) (*walMapping, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, fmt.Errorf("database: wal index: %w", err)
	}
	key := walFile{uint64(st.Dev), uint64(st.Ino)} // the fields' types differ between systems
	walMappings.Lock()
	defer walMappings.Unlock()
	if m := walMappings.m[key]; m != nil {
		m.refs++
		return m, nil
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("database: open wal index: %w", err)
	}
	m := &walMapping{key: key, fd: fd, refs: 1}
	walMappings.m[key] = m
	if st.Size < walMapSize {
		return m, fmt.Errorf("database: wal index %s: %d bytes", path, st.Size)
	}
	if m.hdr, err = syscall.Mmap(fd, 0, walMapSize, syscall.PROT_READ, syscall.MAP_SHARED); err != nil {
		return m, fmt.Errorf("database: map wal index: %w", err)
	}
	return m, nil
}

// release lets this reference to the mapping go: the last one unmaps it
// and closes the file.
func (m *walMapping) release() {
	walMappings.Lock()
	defer walMappings.Unlock()
	if m.refs--; m.refs > 0 {
		return
	}
	delete(walMappings.m, m.key)
	if m.hdr != nil {
		syscall.Munmap(m.hdr)
	}
	syscall.Close(m.fd)
}
