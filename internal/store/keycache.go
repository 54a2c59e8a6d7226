package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"rentapi/internal/rental"
)

// keyCache keeps the process's last lookup of each key (by fingerprint and
// account hint), for LookupKey.
type keyCache struct {
	mu sync.Mutex
	m  map[keyRef]keyLookup
	// used is each key's last use this process wrote (NoteKeyUse), which
	// does not count as a change (see LookupKey).
	used map[string]int64
	// confirmed counts KeyChecks that held (KeptConfirmed).
	confirmed atomic.Int64
}

// keyRef is what a kept lookup is kept under: the key's fingerprint and
// the account the request named (a struct, so finding one joins no
// strings).
type keyRef struct{ fingerprint, accountHint string }

// maxCachedKeys bounds the cache's memory (a few MB at most).
const maxCachedKeys = 4096

// LookupKey is KeyForRequest for a request, which runs it on every request:
// while nothing it reads has changed, it costs one read of a single number.
// The lookup is kept with the access version it read in the same
// statement, which triggers count up with every change to what the lookup
// reads, in the change's own transaction, whoever writes it (migration
// 00011). A kept lookup serves only while the version read now is the same,
// and only until the passing of time alone would change it. So a revoked
// key, an ended link or a suspension is refused at the next request on
// every process, exactly as without the cache. A key's last use is not
// counted as a change: the kept lookup shows the last use this process
// wrote, which is all a request needs to know whether to write it again.
//
// Only a lookup that found the account the hint names (or had no hint) is
// kept: made-up hints cannot push the keys in use out of the cache.
func (db *DB) LookupKey(ctx context.Context, fingerprint, accountHint string, now time.Time) (*rental.KeyOwner, error) {
	return db.lookupKey(ctx, fingerprint, accountHint, now, nil)
}

// lookupKey is LookupKey that, given along, reads the data version of the
// landlord of the key's kept account in the same statement as the access
// version, into along (see KeyRun.DataVersion).
func (db *DB) lookupKey(ctx context.Context, fingerprint, accountHint string, now time.Time, along *versionRead) (*rental.KeyOwner, error) {
	q := db.Read()
	c := &db.keys
	o, kept, ok := c.kept(fingerprint, accountHint, now)
	var version int64
	if along != nil && ok && o.Account != nil {
		var writes, clock sql.NullInt64
		if err := q.c.QueryRowContext(ctx, accessAndDataVersion, o.Account.LandlordID).Scan(&version, &writes, &clock); err != nil {
			return nil, fmt.Errorf("store: access version: %w", err)
		}
		along.landlordID, along.version = o.Account.LandlordID, dataVersion{writes.Int64, clock.Int64}.String()
	} else if err := q.c.QueryRowContext(ctx, accessVersion).Scan(&version); err != nil {
		return nil, fmt.Errorf("store: access version: %w", err)
	}
	if ok && kept == version {
		return o, nil
	}
	l, err := q.lookupKey(ctx, fingerprint, accountHint, now)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ref := (keyRef{fingerprint, accountHint}); accountHint == "" || l.owner.Account != nil && l.owner.Account.ID == accountHint {
		if c.m == nil {
			c.m, c.used = map[keyRef]keyLookup{}, map[string]int64{}
		}
		if _, ok := c.m[ref]; !ok && len(c.m) >= maxCachedKeys {
			clear(c.m) // rare: a few thousand keys in use at once
			clear(c.used)
		}
		c.m[ref] = l
	}
	return c.copy(l.owner), nil
}

// accessAndDataVersion reads the access version and the data version of
// the landlord $1 (nulls if there is none), in one statement.
const accessAndDataVersion = `SELECT a.version, l.data_version, l.clock FROM access_version a LEFT JOIN landlords l ON l.id = $1`

// versionRead is a landlord's data version read along with a key's lookup.
type versionRead struct {
	landlordID string
	version    string
}

// kept returns a copy of the key's kept lookup and the access version it
// read, if there is one and the passing of time has not changed it at now.
func (c *keyCache) kept(fingerprint, accountHint string, now time.Time) (*rental.KeyOwner, int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.m[keyRef{fingerprint, accountHint}]
	if at := ms(now); !ok || at < l.from || at >= l.until {
		return nil, 0, false
	}
	return c.copy(l.owner), l.version, true
}

// noteUse keeps the key's use at now (see LookupKey).
func (c *keyCache) noteUse(keyID string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used != nil {
		c.used[keyID] = ms(now)
	}
}

// copy is a copy of a kept o that its caller may change, with the key's last
// use as this process wrote it if that is later. Called with c.mu held. Its
// lists are the kept lookup's, capped so that an append copies them: the
// service changes no list of a lookup in place, and copying them was a
// tenth of what a read allocated.
func (c *keyCache) copy(o *rental.KeyOwner) *rental.KeyOwner {
	d := *o
	d.Key.Scopes, d.App.Scopes, d.App.RedirectURIs = capped(o.Key.Scopes), capped(o.App.Scopes), capped(o.App.RedirectURIs)
	d.Key.ExpiresAt, d.Key.RevokedAt, d.Key.LastUsedAt = clonePtr(o.Key.ExpiresAt), clonePtr(o.Key.RevokedAt), clonePtr(o.Key.LastUsedAt)
	if used, ok := c.used[o.Key.ID]; ok && (d.Key.LastUsedAt == nil || used > ms(d.Key.LastUsedAt.Time)) {
		t := rental.UnixMilli(used)
		d.Key.LastUsedAt = &t
	}
	if o.Account != nil {
		a := *o.Account
		a.Granted = capped(o.Account.Granted)
		d.Account = &a
	}
	return &d
}

// capped is s with no room to grow: an append to it makes a new array.
func capped[S ~[]E, E any](s S) S { return s[:len(s):len(s)] }

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
