package store

import (
	"context"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// KeyForRequestSQL is the key lookup's query, for TestEveryLookedUpColumnCounts.
const KeyForRequestSQL = keyForRequest

// EndpointsReadAhead reports whether tx read its events' endpoints ahead
// (see readEndpointsAhead), for TestReadingReadsEndpointsAhead.
func (tx *Tx) EndpointsReadAhead() bool { return tx.endpoints.read }

// MigrateDownTo undoes the service's migrations after version, so that a
// test can write data as it was before a migration and then migrate up.
func (db *DB) MigrateDownTo(ctx context.Context, version int64) error {
	dialect, dir := goose.DialectSQLite3, "migrations/sqlite"
	if db.Engine() == Postgres {
		dialect, dir = goose.DialectPostgres, "migrations/postgres"
	}
	sub, err := fs.Sub(migrations, dir)
	if err != nil {
		return err
	}
	provider, err := goose.NewProvider(dialect, db.WritePool(), sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	_, err = provider.DownTo(ctx, version)
	return err
}

// VersionReads reports how many version reads of kept lookups the process
// made, in how many statements, and how many wait now (see versionReads),
// for TestVersionReadsShareStatements.
func (db *DB) VersionReads() (reads, statements int64, waiting int) {
	v := &db.versions
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.reads.Load(), v.statements.Load(), len(v.waiting)
}

// ParseRoomReadings is parseRoomReadings, for its table test.
var ParseRoomReadings = parseRoomReadings

// RoomsTaken is how many rooms tx's write of readings took from what the
// landlord's last one kept (see keptRooms), for TestKeptRooms.
func (tx *Tx) RoomsTaken() int { return tx.roomsTaken }
