package store

import (
	"fmt"
	"strconv"
	"strings"
)

// where builds the conditions of a list query, numbering placeholders as
// arguments are added. Each condition writes ? where its value goes.
type where struct {
	sql  string
	args []any
}

// ownerTerm is how a query writes its landlord's condition when the rows
// are found by something narrower (their IDs, their property, their room):
// the same test, with the column joined to an empty string so that it is
// an expression. SQLite keeps no statistics, and given landlord_id = $1
// beside an IN list of IDs or a property's index its planner walks every
// row of the landlord by the _page index instead: a 500-room batch then
// read all of a 15,000-room landlord's rooms. PostgreSQL plans both forms
// alike.
const ownerTerm = "landlord_id || '' = $1"

func scoped(base string, landlordID string) *where {
	return &where{sql: base, args: []any{landlordID}}
}

// and adds a condition when value is not the zero value of its type.
func (w *where) and(cond string, value any) *where {
	switch v := value.(type) {
	case string:
		if v == "" {
			return w
		}
	case *int64:
		if v == nil {
			return w
		}
		value = *v
	}
	w.args = append(w.args, value)
	w.sql += " AND " + strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(w.args)))
	return w
}

// inList is the placeholders of an IN (...) list of vals from $from, and
// the values to pass for them. The list is padded to a power of two by
// repeating the last value (which IN ignores), so that lists of any length
// make a handful of statement texts: PostgreSQL's driver prepares and
// caches each text it sees on each connection.
func inList(from int, vals []any) (string, []any) {
	n := 1
	for n < len(vals) {
		n *= 2
	}
	padded := make([]any, n)
	copy(padded, vals)
	for i := len(vals); i < n; i++ {
		padded[i] = vals[len(vals)-1]
	}
	return params(from, n), padded
}

// params is n numbered placeholders from $from, comma separated, for a
// statement over a list of values.
func params(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(from+i))
	}
	return b.String()
}
