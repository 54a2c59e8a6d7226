package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"rentapi/internal/rental"
)

// keyCache keeps the process's last lookup of each key (by fingerprint and
// account hint), for LookupKey.
type keyCache struct {
	mu sync.Mutex
	m  map[string]keyLookup
}

// maxCachedKeys bounds the cache's memory (a few MB at most).
const maxCachedKeys = 4096

// LookupKey is KeyForRequest for a request, which runs it on every request:
// while nothing it reads has changed, it costs one read of a single number.
// The lookup is kept with the access version it read, which every change to
// what it reads counts up in the change's own transaction (see
// Tx.accessChanged); a kept lookup serves only while the version read now
// is the same, and only until the passing of time alone would change it.
// So a revoked key, an ended link or a suspension is refused at the next
// request on every process, exactly as without the cache. A key's last use
// (NoteKeyUse) is not counted: the kept lookup takes it from NoteKeyUse.
func (db *DB) LookupKey(ctx context.Context, fingerprint, accountHint string, now time.Time) (*KeyOwner, error) {
	q := db.Read()
	var version int64
	if err := q.c.QueryRowContext(ctx, `SELECT version FROM access_version`).Scan(&version); err != nil {
		return nil, fmt.Errorf("store: access version: %w", err)
	}
	ref, at := fingerprint+"\x00"+accountHint, ms(now)
	db.keys.mu.Lock()
	l, ok := db.keys.m[ref]
	if ok && l.version == version && l.from <= at && at < l.until {
		o := l.owner.copy()
		db.keys.mu.Unlock()
		return o, nil
	}
	db.keys.mu.Unlock()
	l, err := q.lookupKey(ctx, fingerprint, accountHint, now)
	if err != nil {
		return nil, err
	}
	db.keys.mu.Lock()
	defer db.keys.mu.Unlock()
	if db.keys.m == nil {
		db.keys.m = map[string]keyLookup{}
	}
	if _, ok := db.keys.m[ref]; !ok && len(db.keys.m) >= maxCachedKeys {
		for k := range db.keys.m { // any one: the map's order is random
			delete(db.keys.m, k)
			break
		}
	}
	db.keys.m[ref] = l
	return l.owner.copy(), nil
}

// noteUse sets the kept lookups of the key to its use at now.
func (c *keyCache) noteUse(keyID string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ref, l := range c.m {
		if l.owner.Key.ID == keyID {
			o := l.owner.copy()
			used := rental.UnixMilli(ms(now))
			o.Key.LastUsedAt = &used
			l.owner = o
			c.m[ref] = l
		}
	}
}

// copy is a copy of o its caller may change.
func (o *KeyOwner) copy() *KeyOwner {
	c := *o
	if o.Account != nil {
		a := *o.Account
		c.Account = &a
	}
	return &c
}
