package database

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Which database errors are the database declining to serve now (503) and
// which are failures (500).
func TestRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"too many connections, wrapped", fmt.Errorf("store: begin: %w", &pgconn.PgError{Code: "53300"}), true},
		{"out of memory", &pgconn.PgError{Code: "53200"}, true},
		{"configuration limit exceeded", &pgconn.PgError{Code: "53400"}, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true},
		{"connection refused", fmt.Errorf("connect: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"wrong password", &pgconn.PgError{Code: "28P01"}, false},
		{"no such database", &pgconn.PgError{Code: "3D000"}, false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"a read that failed half way", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, false},
		{"deadline", context.DeadlineExceeded, false},
		{"anything else", errors.New("boom"), false},
	} {
		if got := Refused(tc.err); got != tc.want {
			t.Errorf("%s: Refused = %v, want %v", tc.name, got, tc.want)
		}
	}
}
