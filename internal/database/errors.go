package database

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"rentapi/internal/rental"
)

// IsUniqueViolation reports whether err is a unique-constraint failure: the
// one place that knows both engines' codes for it, so that the store can
// say which of its names or keys was taken.
func IsUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || lite.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// Refused reports whether err is the database declining to serve now rather
// than failing: PostgreSQL out of connections or other resources (SQLSTATE
// class 53, 53300 too_many_connections among them), starting up or shutting
// down (57P03 cannot_connect_now), or not reachable at all (a connection that
// could not be made); SQLite's write lock still held by another process when
// busy_timeout ran out. A connection refused for a wrong password or database
// name is not in it: that is the operator's to fix, a 500.
func Refused(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return strings.HasPrefix(pg.Code, "53") || pg.Code == "57P03"
	}
	var connect *pgconn.ConnectError
	if errors.As(err, &connect) {
		return true
	}
	var dial *net.OpError
	if errors.As(err, &dial) && dial.Op == "dial" {
		return true
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) {
		return lite.Code()&0xff == sqlite3.SQLITE_BUSY
	}
	return false
}

// IsCheckFailure reports whether err is a check made in the database that
// failed: PostgreSQL's division by zero (SQLSTATE 22012), which
// MustChangeOne and the store's own checks (a version still the one read,
// an advisory lock free) divide by when their condition is false, so that
// the batch they travel in stops at them.
func IsCheckFailure(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "22012"
}

// Unavailable is the answer when the database cannot take a statement now
// (503 service_unavailable with Retry-After): the wait for a connection ran
// out, or the database refused it. It wraps cause, so that the API's log
// says why while the client reads only the rental error. The engine's one
// rental error: the API maps it to HTTP with all the others.
func Unavailable(cause error) error {
	e := rental.Overloaded()
	if Refused(cause) {
		e.Message = "The database is not taking connections now; retry after the time in Retry-After."
		e.RetryAfter = 5
	}
	return fmt.Errorf("%w: %w", e, cause)
}
