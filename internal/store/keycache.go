package store

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// keyCache keeps the process's last lookup of each key (by fingerprint and
// account hint), for LookupKey.
type keyCache struct {
	mu sync.Mutex
	m  map[keyRef]keptLookup
	// used is each key's last use this process wrote (NoteKeyUse), which
	// does not count as a change (see LookupKey).
	used map[string]int64
	// confirmed counts KeyChecks that held (KeptConfirmed).
	confirmed atomic.Int64
	// versions are the last versions read, by landlord ("" for the access
	// version alone), on SQLite (see DB.accessVersions).
	versions map[string]markedVersions
}

// keptLookup is a kept lookup. Its owner is handed to every request that
// takes it, and nothing changes an owner handed out: a copy for each
// request was the largest thing a read allocated. In tests, shown is a
// copy of owner as kept, and kept panics if the owner no longer equals it,
// so that a change anywhere in the service fails the tests.
type keptLookup struct {
	keyLookup
	shown *rental.KeyOwner
}

// keyRef is what a kept lookup is kept under: the key's fingerprint and
// the account the request named (a struct, so finding one joins no
// strings).
type keyRef struct{ fingerprint, accountHint string }

// maxCachedKeys bounds the cache's memory (a few MB at most).
const maxCachedKeys = 4096

// LookupKey is KeyForRequest for a request, which runs it on every request:
// while nothing it reads has changed, it costs one read of a single number
// (on SQLite, one after each commit: see accessVersions).
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
//
// The lookup returned is shared with the other requests of the key: its
// caller must not change it (in tests, a change panics at its next use).
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
	landlordID := ""
	if along != nil && ok && o.Account != nil {
		landlordID = o.Account.LandlordID
	}
	v, err := db.accessVersions(ctx, q, landlordID)
	if err != nil {
		return nil, err
	}
	if landlordID != "" {
		along.landlordID, along.version = landlordID, v.data
	}
	if ok && kept == v.access {
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
			c.m, c.used = map[keyRef]keptLookup{}, map[string]int64{}
		}
		if _, ok := c.m[ref]; !ok && len(c.m) >= maxCachedKeys {
			clear(c.m) // rare: a few thousand keys in use at once
			clear(c.used)
		}
		l.owner = c.withUse(capLists(l.owner))
		c.m[ref] = keptLookup{keyLookup: l, shown: shown(l.owner)}
	}
	return l.owner, nil
}

// accessVersions reads the access version and, unless landlordID is "", the
// data version of that landlord (see DataVersion), in one statement on q.
// On SQLite it reads them once per commit: while the database's log stands
// where it stood before the last read of the same versions
// (database.DB.Mark), no process has committed anything since, and what
// that read found still holds. It was a statement on every request, the
// largest share of a read's work once its answer was kept (a read
// transaction of its own, a fifth of the CPU and a quarter of the bytes
// allocated).
func (db *DB) accessVersions(ctx context.Context, q *Queries, landlordID string) (markedVersions, error) {
	c := &db.keys
	mark, marked := db.Mark()
	if marked {
		c.mu.Lock()
		v, ok := c.versions[landlordID]
		c.mu.Unlock()
		if ok && v.mark == mark {
			return v, nil
		}
	}
	v := markedVersions{mark: mark}
	if landlordID == "" {
		if err := q.c.QueryRowContext(ctx, accessVersion).Scan(&v.access); err != nil {
			return v, fmt.Errorf("store: access version: %w", err)
		}
	} else {
		var writes, clock sql.NullInt64
		if err := q.c.QueryRowContext(ctx, accessAndDataVersion, landlordID).Scan(&v.access, &writes, &clock); err != nil {
			return v, fmt.Errorf("store: access version: %w", err)
		}
		v.data = dataVersion{writes.Int64, clock.Int64}.String()
	}
	if marked {
		c.mu.Lock()
		if c.versions == nil || len(c.versions) >= maxCachedKeys {
			c.versions = map[string]markedVersions{} // rare: thousands of landlords at once
		}
		c.versions[landlordID] = v
		c.mu.Unlock()
	}
	return v, nil
}

// markedVersions are the versions a read found (see accessVersions), and where
// the log stood before it.
type markedVersions struct {
	mark   database.Mark
	access int64
	data   string
}

// accessAndDataVersion reads the access version and the data version of
// the landlord $1 (nulls if there is none), in one statement.
const accessAndDataVersion = `SELECT a.version, l.data_version, l.clock FROM access_version a LEFT JOIN landlords l ON l.id = $1`

// versionRead is a landlord's data version read along with a key's lookup.
type versionRead struct {
	landlordID string
	version    string
}

// kept returns the key's kept lookup, which its caller must not change,
// and the access version it read, if there is one and the passing of time
// has not changed it at now.
func (c *keyCache) kept(fingerprint, accountHint string, now time.Time) (*rental.KeyOwner, int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.m[keyRef{fingerprint, accountHint}]
	if at := ms(now); !ok || at < l.from || at >= l.until {
		return nil, 0, false
	}
	if l.shown != nil && !reflect.DeepEqual(l.owner, l.shown) {
		panic(fmt.Sprintf("store: kept lookup of key %s changed by a request it was handed to: %+v, kept as %+v", l.owner.Key.ID, *l.owner, *l.shown))
	}
	return l.owner, l.version, true
}

// noteUse keeps the key's use at now (see LookupKey): its kept lookups are
// replaced by copies that show it.
func (c *keyCache) noteUse(keyID string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used == nil {
		return
	}
	c.used[keyID] = ms(now)
	for ref, l := range c.m {
		if o := l.owner; o.Key.ID == keyID {
			l.owner = c.withUse(o)
			l.shown = shown(l.owner)
			c.m[ref] = l
		}
	}
}

// withUse is o with the key's last use as this process wrote it, when that
// is later: a copy then, as o may be in use. Called with c.mu held.
func (c *keyCache) withUse(o *rental.KeyOwner) *rental.KeyOwner {
	used, ok := c.used[o.Key.ID]
	if !ok || o.Key.LastUsedAt != nil && used <= ms(o.Key.LastUsedAt.Time) {
		return o
	}
	d := *o
	t := rental.UnixMilli(used)
	d.Key.LastUsedAt = &t
	return &d
}

// capLists caps the lists of o, a lookup not yet handed out, so that an
// append to one makes a new array rather than writing into one that
// requests share.
func capLists(o *rental.KeyOwner) *rental.KeyOwner {
	o.Key.Scopes, o.App.Scopes, o.App.RedirectURIs = capped(o.Key.Scopes), capped(o.App.Scopes), capped(o.App.RedirectURIs)
	if o.Account != nil {
		o.Account.Granted = capped(o.Account.Granted)
	}
	return o
}

// shown is, in tests only (testing.Testing), a deep copy of o as it is
// kept, which kept checks o against; nil otherwise.
func shown(o *rental.KeyOwner) *rental.KeyOwner {
	if !testing.Testing() {
		return nil
	}
	d := *o
	d.Key.Scopes, d.App.Scopes, d.App.RedirectURIs = slices.Clone(o.Key.Scopes), slices.Clone(o.App.Scopes), slices.Clone(o.App.RedirectURIs)
	d.Key.ExpiresAt, d.Key.RevokedAt, d.Key.LastUsedAt = clonePtr(o.Key.ExpiresAt), clonePtr(o.Key.RevokedAt), clonePtr(o.Key.LastUsedAt)
	if o.Account != nil {
		a := *o.Account
		a.Granted = slices.Clone(o.Account.Granted)
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
