package database

import (
	"context"
	"database/sql/driver"
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
	// Below database/sql, on the connection's cached statements: through
	// it, every statement's values were copied into a list of its own, and
	// that list into another of the driver's, each a batch of requests
	// long (a tenth of what a read allocated, counting its log row).
	sctx := db.statementContext(ctx)
	return cn.Raw(func(dc any) error {
		if err := dc.(*cachingConn).append(sctx, table, columns, rows); err != nil {
			return fmt.Errorf("database: append to %s: %w", table, err)
		}
		return nil
	})
}

// append inserts rows into table in one transaction, in statements of up
// to 64 rows whose values are bound from one list filled anew for each.
func (c *cachingConn) append(ctx context.Context, table string, columns []string, rows [][]any) (err error) {
	tx, err := c.BeginTx(ctx, driver.TxOptions{})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	insert := "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES "
	args := make([]driver.NamedValue, 0, 64*len(columns))
	texts := map[int]string{}
	for _, part := range chunks(rows, true) {
		text, ok := texts[len(part)]
		if !ok {
			text = valuesSQL(insert, len(part), len(columns), true)
			texts[len(part)] = text
		}
		args = args[:0]
		for _, r := range part {
			if len(r) != len(columns) {
				return fmt.Errorf("a row of %d values for %d columns", len(r), len(columns))
			}
			for _, v := range r {
				if !driver.IsValue(v) {
					if v, err = driver.DefaultParameterConverter.ConvertValue(v); err != nil {
						return err
					}
				}
				args = append(args, driver.NamedValue{Ordinal: len(args) + 1, Value: v})
			}
		}
		if _, err := c.ExecContext(ctx, text, args); err != nil {
			return err
		}
	}
	return tx.Commit()
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
	for _, part := range chunks(rows, anonymous) {
		args := make([]any, 0, len(part)*len(part[0]))
		for _, r := range part {
			args = append(args, r...)
		}
		out = append(out, Stmt{SQL: valuesSQL(insert, len(part), len(part[0]), anonymous), Args: args, What: what})
	}
	return out
}

// chunks cuts rows into parts of 64, 32, ..., 1 rows, and with numbered
// parameters of at most maxNumberedArgs values.
func chunks(rows [][]any, anonymous bool) [][][]any {
	var out [][][]any
	for len(rows) > 0 {
		n := 64
		for n > len(rows) || !anonymous && n > 1 && n*len(rows[0]) > maxNumberedArgs {
			n /= 2
		}
		out = append(out, rows[:n])
		rows = rows[n:]
	}
	return out
}

// valuesSQL is insert (ending in VALUES) followed by n rows of width
// parameters.
func valuesSQL(insert string, n, width int, anonymous bool) string {
	var q strings.Builder
	q.Grow(len(insert) + n*width*5)
	q.WriteString(insert)
	for i := range n {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteByte('(')
		for j := range width {
			if j > 0 {
				q.WriteString(", ")
			}
			if anonymous {
				q.WriteByte('?')
			} else {
				q.WriteString("$" + strconv.Itoa(i*width+j+1))
			}
		}
		q.WriteByte(')')
	}
	return q.String()
}
