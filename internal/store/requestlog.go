package store

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// RequestRetention is how long the API's requests are kept for the
// portal's Requests page.
const RequestRetention = 7 * 24 * time.Hour

// LoggedRequest is one API request as the portal shows it: what was asked
// and answered, never a body or a query string (they hold tenants'
// personal data).
type LoggedRequest struct {
	ID            string // the request's ID, as its X-Request-ID and an error body's request_id
	Seq           int64  // its place among its process's requests of one instant (RequestPosition)
	ApplicationID string
	Mode          string
	AccountID     string // "" when the request named none
	Method        string
	Path          string
	Status        int
	Code          string // the error code of an error answer
	Latency       time.Duration
	KeyLast4      string
	At            time.Time
}

// RequestFilter narrows an application's request log; zero fields do not.
type RequestFilter struct {
	Mode string
	// StatusClass is 2, 3, 4 or 5 for the answers of 2xx to 5xx.
	StatusClass int
	// PathPrefix keeps the paths that begin with it.
	PathPrefix string
	// RequestID finds one request.
	RequestID string
	// Before is the position of the last row of the page before: rows
	// older than it (by time, then as written).
	Before *RequestPosition
}

// RequestPosition is a row's place in the log, newest first: its time,
// then its place among its process's rows of that time, then its ID
// (two processes may number rows of one instant alike).
type RequestPosition struct {
	At  time.Time
	Seq int64
	ID  string
}

// LogRequests writes requests to the log at once (database.DB.Append:
// one COPY on PostgreSQL). Text that is not UTF-8, and NUL, which neither
// engine keeps in TEXT, is written as U+FFFD: on PostgreSQL one request
// to such a path cost the whole batch.
func (db *DB) LogRequests(ctx context.Context, reqs []LoggedRequest) error {
	rows := make([][]any, len(reqs))
	values := make([]any, 0, len(reqs)*len(requestLogColumns))
	// A batch's applications, accounts, keys, modes, methods and codes
	// repeat from row to row: each is boxed once (an interface over a
	// string is an allocation of its own), not once a row. A row's ID,
	// path and numbers are its own.
	boxed := map[string]any{}
	repeated := func(s string) any {
		v, ok := boxed[s]
		if !ok {
			v = keptText(s)
			boxed[s] = v
		}
		return v
	}
	for i, r := range reqs {
		values = append(values, keptText(r.ID), r.Seq, repeated(r.ApplicationID), repeated(r.Mode), repeated(r.AccountID), repeated(r.Method), keptText(r.Path),
			int64(r.Status), repeated(r.Code), r.Latency.Microseconds(), repeated(r.KeyLast4), ms(r.At))
		rows[i] = values[len(values)-len(requestLogColumns) : len(values) : len(values)]
	}
	if err := db.Append(ctx, "request_log", requestLogColumns, rows); err != nil {
		return fmt.Errorf("store: log requests: %w", err)
	}
	return nil
}

var requestLogColumns = []string{"id", "seq", "application_id", "mode", "account_id", "method", "path", "status", "code", "latency_us", "key_last4", "created_at"}

// ListRequests returns a page of an application's requests of the last
// RequestRetention, newest first, and whether older ones follow.
func (q *Queries) ListRequests(ctx context.Context, appID string, f RequestFilter, limit int, now time.Time) ([]LoggedRequest, bool, error) {
	w := &where{sql: "application_id = $1", args: []any{appID}}
	w.and("created_at >= ?", ms(now.Add(-RequestRetention)))
	w.and("mode = ?", f.Mode)
	w.and("id = ?", f.RequestID)
	if f.StatusClass >= 1 && f.StatusClass <= 5 {
		w.and("status >= ?", int64(f.StatusClass*100))
		w.and("status < ?", int64(f.StatusClass*100+100))
	}
	if f.PathPrefix != "" {
		w.and("substr(path, 1, "+fmt.Sprint(utf8.RuneCountInString(f.PathPrefix))+") = ?", f.PathPrefix)
	}
	if f.Before != nil {
		w.args = append(w.args, ms(f.Before.At), f.Before.Seq, f.Before.ID)
		n := len(w.args)
		w.sql += fmt.Sprintf(" AND (created_at < $%d OR (created_at = $%[1]d AND (seq < $%d OR (seq = $%[2]d AND id < $%d))))", n-2, n-1, n)
	}
	rows, err := q.c.QueryContext(ctx, `SELECT seq, id, application_id, mode, account_id, method, path, status, code, latency_us, key_last4, created_at
		FROM request_log WHERE `+w.sql+fmt.Sprintf(` ORDER BY created_at DESC, seq DESC, id DESC LIMIT %d`, limit+1), w.args...)
	if err != nil {
		return nil, false, fmt.Errorf("store: list requests: %w", err)
	}
	defer rows.Close()
	var out []LoggedRequest
	for rows.Next() {
		var r LoggedRequest
		var latency, at int64
		if err := rows.Scan(&r.Seq, &r.ID, &r.ApplicationID, &r.Mode, &r.AccountID, &r.Method, &r.Path, &r.Status, &r.Code, &latency, &r.KeyLast4, &at); err != nil {
			return nil, false, fmt.Errorf("store: list requests: %w", err)
		}
		r.Latency, r.At = time.Duration(latency)*time.Microsecond, time.UnixMilli(at).UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: list requests: %w", err)
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

// PurgeRequests deletes the requests past RequestRetention, application
// by application along the log's one index (an index on the time alone
// would cost every request's write more than the hourly purge saves).
func (db *DB) PurgeRequests(ctx context.Context) (int64, error) {
	rows, err := db.WritePool().QueryContext(ctx, `SELECT id FROM applications`)
	if err != nil {
		return 0, fmt.Errorf("store: purge requests: %w", err)
	}
	var apps []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: purge requests: %w", err)
		}
		apps = append(apps, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("store: purge requests: %w", err)
	}
	cutoff := ms(db.now().Add(-RequestRetention))
	var total int64
	for _, app := range apps {
		n, err := db.purge(ctx, "requests", "request_log", "application_id = $1 AND created_at < $2", app, cutoff)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
