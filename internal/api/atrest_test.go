package api_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store"
	"rentapi/internal/store/storetest"
)

// A webhook signing secret is shown once, in the response that creates or
// rotates it, and that response is kept 24 hours for idempotent replays: no
// table may hold the secret in clear, yet the replay still shows it.
func TestNoWebhookSecretAtRest(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		h := newHarness(t, e)
		f := h.fixture(rental.PlanEnterprise)
		key := h.testKey(f)
		body := map[string]any{"url": "https://hooks.example.com/rentapi", "enabled_events": []string{"*"}}
		created := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: body, headers: []string{"Idempotency-Key: create-endpoint"}})
		want(t, created, http.StatusCreated)
		id, _ := created.data()["id"].(string)
		rotated := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + id + "/rotate-secret", headers: []string{"Idempotency-Key: rotate-endpoint"}})
		want(t, rotated, http.StatusOK)
		secrets := []string{created.data()["secret"].(string), rotated.data()["secret"].(string)}
		for _, s := range secrets {
			if !strings.HasPrefix(s, "whsec_") {
				t.Fatalf("secret %q", s)
			}
		}
		for table, row := range everyRow(t, e.DB) {
			if strings.Contains(row, "whsec_") {
				t.Errorf("table %s holds a signing secret in clear: %.300s", table, row)
			}
		}
		again := h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints", body: body, headers: []string{"Idempotency-Key: create-endpoint"}})
		want(t, again, http.StatusCreated)
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(created.body) {
			t.Fatalf("replay of the creation: %s %s, want %s", again.header.Get("Idempotent-Replayed"), again.body, created.body)
		}
		again = h.do(req{key: key, method: "POST", path: "/v1/webhook-endpoints/" + id + "/rotate-secret", headers: []string{"Idempotency-Key: rotate-endpoint"}})
		if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(rotated.body) {
			t.Fatalf("replay of the rotation: %s %s, want %s", again.header.Get("Idempotent-Replayed"), again.body, rotated.body)
		}
		// The sealed response answers only its own key: another
		// application's request with the same key string runs anew.
		other := storetest.NewFixture(t, e.DB, rental.PlanEnterprise)
		fresh := h.do(req{key: h.testKey(other), method: "POST", path: "/v1/webhook-endpoints", body: body, headers: []string{"Idempotency-Key: create-endpoint"}})
		want(t, fresh, http.StatusCreated)
		if fresh.header.Get("Idempotent-Replayed") != "false" || fresh.data()["id"] == id {
			t.Fatalf("another application got %s", fresh.body)
		}
	})
}

// everyRow yields every row of every table of the database, its columns
// written out as text, keyed by the table's name.
func everyRow(t *testing.T, db *store.DB) func(func(string, string) bool) {
	t.Helper()
	list := `SELECT name FROM sqlite_master WHERE type = 'table'`
	if db.Engine() == store.Postgres {
		list = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	pool := db.WritePool()
	rows, err := pool.QueryContext(t.Context(), list)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil || len(tables) < 10 {
		t.Fatalf("tables %v: %v", tables, err)
	}
	return func(yield func(string, string) bool) {
		for _, table := range tables {
			for _, row := range dumpTable(t, pool, table) {
				if !yield(table, row) {
					return
				}
			}
		}
	}
}

func dumpTable(t *testing.T, pool *sql.DB, table string) []string {
	rows, err := pool.QueryContext(t.Context(), `SELECT * FROM `+table)
	if err != nil {
		t.Fatalf("%s: %v", table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		var b strings.Builder
		for i, v := range vals {
			if bs, ok := v.([]byte); ok {
				v = string(bs)
			}
			fmt.Fprintf(&b, "%s=%v ", cols[i], v)
		}
		out = append(out, b.String())
	}
	return out
}
