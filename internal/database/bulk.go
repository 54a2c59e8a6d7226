package database

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Append adds rows to table in one transaction of its own, for a log
// written in batches that nothing else in the transaction depends on. On
// PostgreSQL the rows travel as one COPY, which the server takes for a
// fraction of what it spends parsing and planning multi-row INSERTs; on
// SQLite they go as INSERTs of several rows each (InsertRows).
func (db *DB) Append(ctx context.Context, table string, columns []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	cn, err := db.acquire(ctx, db.write)
	if err != nil {
		return err
	}
	defer cn.Close()
	if db.engine == Postgres {
		return cn.Raw(func(dc any) error {
			_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
			if err != nil {
				return fmt.Errorf("database: copy into %s: %w", table, err)
			}
			return nil
		})
	}
	tx, err := cn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database: append to %s: %w", table, err)
	}
	defer tx.Rollback()
	insert := "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES "
	for _, st := range InsertRows(insert, "database: append to "+table, rows) {
		if _, err := tx.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("%s: %w", st.What, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("database: append to %s: %w", table, err)
	}
	return nil
}

// MaxInsertArgs bounds the values of one statement of InsertRows.
const MaxInsertArgs = 256

// InsertRows are the statements of insert (ending in VALUES) over rows of equal
// length, in statements of 64, 32, ..., 1 rows: a few texts to prepare
// once per connection, not one for every count. A statement takes at
// most MaxInsertArgs values: SQLite's driver looks each parameter's name
// up among all of the statement's, so a statement's binding costs the
// square of its count.
func InsertRows(insert, what string, rows [][]any) []Stmt {
	var out []Stmt
	for len(rows) > 0 {
		n := 64
		for n > len(rows) || n > 1 && n*len(rows[0]) > MaxInsertArgs {
			n /= 2
		}
		part := rows[:n]
		rows = rows[n:]
		var q strings.Builder
		q.WriteString(insert)
		args := make([]any, 0, n*len(part[0]))
		for i, r := range part {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteByte('(')
			for j := range r {
				if j > 0 {
					q.WriteString(", ")
				}
				q.WriteString("$" + strconv.Itoa(len(args)+j+1))
			}
			q.WriteByte(')')
			args = append(args, r...)
		}
		out = append(out, Stmt{SQL: q.String(), Args: args, What: what})
	}
	return out
}
