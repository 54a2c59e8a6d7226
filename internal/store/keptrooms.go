package store

import (
	"strings"
	"sync"

	"rentapi/internal/database"
	"rentapi/internal/rental"
)

// keptRooms is what the process's last write of readings of each landlord
// knew of the rooms it wrote: each room with its property's rates and its
// readings, as readingRooms reads them, and the landlord's data version
// that write left (see DataVersion). The landlord's next write of
// readings here takes a room from it instead of reading it again when its
// claim moved the version on from exactly that one, and the write that
// left it is committed or is part of its own transaction (a SQLite group,
// see database.Tx.Sees): then nothing has changed the landlord's data in
// between, on any process, since every change of it claims the landlord
// and moves its version on, in the same transaction. A landlord typing in
// its month's readings one room after another posts them so; each post
// then skips the read that cost it the most of its turn at SQLite's one
// writer (issue 35).
//
// On SQLite only. A PostgreSQL write's claim travels ahead with its first
// statements (see claimAhead) and learns the version too late to skip
// them; and there a failover to a replica that lost the last commits
// would take the version back under a running process, to values whose
// data it never kept.
//
// A room is kept only by a transaction whose write of readings is its
// last change of any room, property or reading (see Tx.changedRooms), so
// what it kept is the state its commit leaves.
type keptRooms struct {
	mu        sync.Mutex
	landlords map[string]*keptLandlord
	// count is the rooms kept, of all landlords; at most keptRoomsMax.
	count int
}

// keptLandlord is one landlord's kept rooms, by ID, and the version and
// work that left them.
type keptLandlord struct {
	version int64
	work    database.Work
	rooms   map[string]*readingRoom
}

// keptRoomsMax bounds the rooms kept, about 3 KB each (a room, its
// property, up to eight readings): the rooms of one large dorm, or of a
// few dozen small ones, in 3 MB at most.
const keptRoomsMax = 1024

// keptReadings is how the rooms of a write of readings are to be kept:
// the landlord's, the version its claim left, the entry the write took
// rooms from (to add them to; nil if it took none), and the rooms.
type keptReadings struct {
	landlordID string
	version    int64
	from       *keptLandlord
	rooms      map[string]*readingRoom
}

// take returns a copy of each room in need kept for the landlord with its
// readings from the month need gives it on (see readingRoom), if tx may
// rely on what was kept (see keptRooms; version is the landlord's data
// version tx's claim left), and the entry they came from. The copies
// share their readings with what is kept, which a write only appends to:
// kept readings fill their array (see cut), so an append copies them.
func (k *keptRooms) take(tx *Tx, landlordID string, version int64, need map[string]string) (map[string]*readingRoom, *keptLandlord) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.landlords[landlordID]
	if l == nil || l.version != version-1 || !tx.Sees(l.work) {
		return nil, nil
	}
	rooms := make(map[string]*readingRoom, len(need))
	for id, from := range need {
		if r := l.rooms[id]; r != nil && r.from <= from {
			c := *r
			rooms[id] = &c
		}
	}
	return rooms, l
}

// keep keeps a write's rooms, once its work w is kept. They are added to
// the rooms it took from the landlord's entry, if that entry is still the
// one it took from (a PostgreSQL transaction whose commit came after the
// next one's starts the landlord's over); otherwise they start it over.
// Each room's readings are cut to those its next month's reading needs:
// from the six months before its latest reading's (rental.FlagsFrom) on,
// and the latest before.
func (k *keptRooms) keep(in *keptReadings, w database.Work) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.landlords == nil {
		k.landlords = make(map[string]*keptLandlord)
	}
	l := k.landlords[in.landlordID]
	if len(in.rooms) == 0 { // none of the landlord's rooms: what was kept is stale
		if l != nil {
			k.count -= len(l.rooms)
			delete(k.landlords, in.landlordID)
		}
		return
	}
	if l == nil || l != in.from || l.version != in.version-1 {
		if l != nil {
			k.count -= len(l.rooms)
		}
		l = &keptLandlord{rooms: make(map[string]*readingRoom, len(in.rooms))}
		k.landlords[in.landlordID] = l
	}
	l.version, l.work = in.version, w
	for id, r := range in.rooms {
		if l.rooms[id] == nil {
			k.count++
		}
		l.rooms[id] = r.cut()
	}
	if k.count <= keptRoomsMax {
		return
	}
	for id, other := range k.landlords { // others go first
		if other != l {
			k.count -= len(other.rooms)
			delete(k.landlords, id)
		}
	}
	if k.count > keptRoomsMax {
		delete(k.landlords, in.landlordID)
		k.count = 0
	}
}

// cut is a copy of r with the readings its next month's reading needs
// (see keep), in an array they fill.
func (r *readingRoom) cut() *readingRoom {
	top := ""
	for _, x := range r.readings {
		top = max(top, x.Month)
	}
	c := *r
	if top != "" {
		c.from = max(r.from, rental.FlagsFrom(top))
	}
	n, before := 0, -1
	for i, x := range r.readings {
		switch {
		case x.Month >= c.from:
			n++
		case before < 0 || x.Month > r.readings[before].Month:
			before = i
		}
	}
	if before >= 0 {
		n++
	}
	c.readings = make([]rental.Reading, 0, n)
	for i, x := range r.readings {
		if x.Month >= c.from || i == before {
			c.readings = append(c.readings, x)
		}
	}
	return &c
}

// own gives the room's readings strings of their own: readingRooms cuts
// each reading's ID and month from the text of all the room's readings,
// which would stay in memory with what is kept of them.
func (r *readingRoom) own() {
	for i := range r.readings {
		x := &r.readings[i]
		x.ID, x.Month = strings.Clone(x.ID), strings.Clone(x.Month)
	}
}

// changedRooms tells the transaction that it changed rooms, properties or
// readings: a write of readings before it keeps nothing (its rooms are no
// longer what its commit leaves), nor does one after it, whose rooms are
// read again as this transaction left them. Every change of what
// readingRooms reads, other than CreateReadings' own, calls it.
func (tx *Tx) changedRooms() {
	tx.roomsChanged, tx.keepRooms = true, nil
}
