package store

import (
	"context"
	"fmt"
	"strconv"
)

// purgeBatch is the most rows one statement of a purge deletes on SQLite.
// SQLite has one writer: a purge of an hour's worth of Idempotency-Keys or
// events in one statement (200,000 rows took SQLite itself 2 s) held every
// write of the service back until it ended. A statement of this many rows
// lasts a few milliseconds, and the writers waiting go between two.
const purgeBatch = 1000

// purge deletes the rows of table where cond holds (cond's parameters are
// args) and returns how many: on SQLite purgeBatch rows a statement, each
// committed on its own, until a statement finds fewer; on PostgreSQL,
// whose writers a DELETE holds back only at the rows it deletes, in one.
// what names the purge in its errors.
func (db *DB) purge(ctx context.Context, what, table, cond string, args ...any) (int64, error) {
	query := `DELETE FROM ` + table + ` WHERE ` + cond
	if db.Engine() == SQLite {
		query = `DELETE FROM ` + table + ` WHERE rowid IN (SELECT rowid FROM ` + table + ` WHERE ` + cond + ` LIMIT ` + strconv.Itoa(purgeBatch) + `)`
	}
	var total int64
	for {
		res, err := db.WritePool().ExecContext(ctx, query, args...)
		if err != nil {
			return total, fmt.Errorf("store: purge %s: %w", what, err)
		}
		n, _ := res.RowsAffected()
		total += n
		if db.Engine() != SQLite || n < purgeBatch {
			return total, nil
		}
	}
}
