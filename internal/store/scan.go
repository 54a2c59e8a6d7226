package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// scanner reads a row into the destinations its Scan is given, then into
// more (the columns a query selects after an object's own). It passes them
// on through a slice it keeps for every row of the result: handed straight
// to database/sql's Scan, which is called through an interface, a row's
// destinations escape, and a page of bills allocated a slice of them a
// row, a sixth of what the whole read allocated. The scan functions of
// listed objects take one (see list).
type scanner struct {
	src  interface{ Scan(...any) error }
	more []any
	dest []any
}

// Scan reads the row into dest and more.
func (s *scanner) Scan(dest ...any) error {
	s.dest = append(append(s.dest[:0], dest...), s.more...)
	err := s.src.Scan(s.dest...)
	clear(s.dest) // nothing of this row is held on to by the next
	return err
}

// integer scans an integer column straight from the driver's int64:
// database/sql has no fast path for integer destinations and converts each
// one through reflection, which showed in a page of bills' profile. Scan
// into (*integer)(&x), for any x of an int64 kind. The monthly cycle's
// objects (properties, rooms, tenants, readings, bills, payments) use it.
type integer int64

// Scan takes the driver's int64.
func (v *integer) Scan(src any) error {
	n, ok := src.(int64)
	if !ok {
		return fmt.Errorf("store: an integer column holds %T", src)
	}
	*v = integer(n)
	return nil
}

// ScanInt64 is pgx's own scan of an integer (pgtype.Int64Scanner): on the
// statements the store runs through pgx itself (writes, reads that carry a
// key check) it is chosen before Scan, which would box each value.
func (v *integer) ScanInt64(n pgtype.Int8) error {
	if !n.Valid {
		return errors.New("store: an integer column holds NULL")
	}
	*v = integer(n.Int64)
	return nil
}

// nullInteger is sql.NullInt64 without the reflection (see integer).
type nullInteger struct {
	Int64 int64
	Valid bool
}

// Scan takes the driver's int64, or NULL.
func (v *nullInteger) Scan(src any) error {
	if src == nil {
		*v = nullInteger{}
		return nil
	}
	v.Valid = true
	return (*integer)(&v.Int64).Scan(src)
}

// ScanInt64 is pgx's own scan of an integer or NULL (see integer's).
func (v *nullInteger) ScanInt64(n pgtype.Int8) error {
	*v = nullInteger{Int64: n.Int64, Valid: n.Valid}
	return nil
}
