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
// SQLite they go as INSERTs of several rows each (Tx.InsertRows).
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
	for _, st := range insertRows(insert, "database: append to "+table, rows, true) {
		if _, err := tx.ExecContext(ctx, st.SQL, st.Args...); err != nil {
			return fmt.Errorf("%s: %w", st.What, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("database: append to %s: %w", table, err)
	}
	return nil
}

// InsertRows are the statements of insert (ending in VALUES) over rows of
// equal length, in statements of 64, 32, ..., 1 rows: a few texts to
// prepare once per connection, not one for every count.
//
// On SQLite the values are anonymous (?), bound by position. SQLite
// names a numbered parameter ($1) and its driver looks each one's name up
// among all of the statement's, so numbered, a statement's binding costs
// the square of its count: numbered statements (PostgreSQL's) take at most
// maxNumberedArgs values.
func (tx *Tx) InsertRows(insert, what string, rows [][]any) []Stmt {
	return insertRows(insert, what, rows, tx.pg == nil)
}

// maxNumberedArgs bounds the values of a statement of InsertRows whose
// parameters are numbered.
const maxNumberedArgs = 256

func insertRows(insert, what string, rows [][]any, anonymous bool) []Stmt {
	var out []Stmt
	for len(rows) > 0 {
		n := 64
		for n > len(rows) || !anonymous && n > 1 && n*len(rows[0]) > maxNumberedArgs {
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
				if anonymous {
					q.WriteByte('?')
				} else {
					q.WriteString("$" + strconv.Itoa(len(args)+j+1))
				}
			}
			q.WriteByte(')')
			args = append(args, r...)
		}
		out = append(out, Stmt{SQL: q.String(), Args: args, What: what})
	}
	return out
}
