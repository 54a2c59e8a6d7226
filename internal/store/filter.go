package store

import (
	"fmt"
	"strings"
)

// where builds the conditions of a list query, numbering placeholders as
// arguments are added. Each condition writes ? where its value goes.
type where struct {
	sql  string
	args []any
}

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
