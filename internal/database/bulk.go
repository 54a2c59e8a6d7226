package database

import (
	"strconv"
	"strings"
)

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
