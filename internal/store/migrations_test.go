package store_test

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// engineTokens are the only places where a PostgreSQL migration may say
// something else than its SQLite twin: the SQLite token and the one
// PostgreSQL has in its place. Every entry must be in use, so the list
// stays as short as the migrations allow.
var engineTokens = map[string]string{
	"BLOB": "BYTEA", // raw bytes
}

// The two folders of migrations are one schema written twice: the same
// files, and in each the same statements token for token (comments and
// layout aside, goose's own -- +goose lines included), except where
// engineTokens allows the engines to differ.
func TestMigrationsInStep(t *testing.T) {
	t.Parallel()
	dir := os.DirFS("migrations")
	names := func(engine string) []string {
		t.Helper()
		entries, err := fs.ReadDir(dir, engine)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	lite, pg := names("sqlite"), names("postgres")
	if !slices.Equal(lite, pg) {
		t.Fatalf("the folders hold different files:\nsqlite   %v\npostgres %v", lite, pg)
	}
	if len(lite) == 0 {
		t.Fatal("no migrations")
	}
	used := map[string]bool{}
	for _, name := range lite {
		read := func(engine string) string {
			b, err := fs.ReadFile(dir, path.Join(engine, name))
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		u, err := compareMigrations(read("sqlite"), read("postgres"), engineTokens)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for tok := range u {
			used[tok] = true
		}
	}
	for tok, pgTok := range engineTokens {
		if !used[tok] {
			t.Errorf("no migration needs %s ↔ %s any more: take it out of engineTokens", tok, pgTok)
		}
	}
}

// The comparison itself: what it lets through and what it catches.
func TestCompareMigrations(t *testing.T) {
	t.Parallel()
	const base = "-- +goose Up\n-- A comment.\nCREATE TABLE t (\n    id   TEXT PRIMARY KEY,\n    body BLOB,\n    kind TEXT NOT NULL DEFAULT 'a'\n);\n"
	for _, c := range []struct {
		name, pg string
		ok       bool
	}{
		{"the same", base, true},
		{"BYTEA for BLOB", strings.Replace(base, "BLOB", "BYTEA", 1), true},
		{"other comments and layout", "-- +goose Up\n-- Another comment.\nCREATE TABLE t (id TEXT PRIMARY KEY, /* bytes */ body BYTEA,\nkind TEXT NOT NULL DEFAULT 'a');", true},
		{"a type changed", strings.Replace(strings.Replace(base, "BLOB", "BYTEA", 1), "id   TEXT", "id   BIGINT", 1), false},
		{"an allowed token the wrong way round", strings.Replace(base, "BLOB", "TEXT", 1), false},
		{"a column missing", strings.Replace(base, "    body BLOB,\n", "", 1), false},
		{"a constraint missing", strings.Replace(strings.Replace(base, "BLOB", "BYTEA", 1), " NOT NULL", "", 1), false},
		{"a literal changed", strings.Replace(strings.Replace(base, "BLOB", "BYTEA", 1), "'a'", "'b'", 1), false},
		{"a statement more", strings.Replace(base, "BLOB", "BYTEA", 1) + "CREATE INDEX t_kind ON t (kind);\n", false},
		{"a goose directive changed", strings.Replace(strings.Replace(base, "BLOB", "BYTEA", 1), "+goose Up", "+goose Down", 1), false},
		{"a goose directive missing", strings.Replace(strings.Replace(base, "BLOB", "BYTEA", 1), "-- +goose Up\n", "", 1), false},
		{"an engine-specific part in one only", strings.Replace(base, "BLOB", "BYTEA", 1) + "-- engine-specific: begin\nCREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;\n-- engine-specific: end\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compareMigrations(base, c.pg, engineTokens)
			if (err == nil) != c.ok {
				t.Fatalf("compared: %v; want ok=%v", err, c.ok)
			}
		})
	}
	// Engine-specific parts at the same place may differ; what follows them
	// is compared again.
	part := func(body string) string { return "-- engine-specific: begin\n" + body + "\n-- engine-specific: end\n" }
	lite := base + part("CREATE TRIGGER t_changed AFTER UPDATE ON t BEGIN SELECT 1; END;") + "CREATE INDEX t_kind ON t (kind);\n"
	pg := strings.Replace(base, "BLOB", "BYTEA", 1) + part("CREATE CONSTRAINT TRIGGER t_changed AFTER UPDATE ON t DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION f();") + "CREATE INDEX t_kind ON t (kind);\n"
	if _, err := compareMigrations(lite, pg, engineTokens); err != nil {
		t.Fatalf("engine-specific parts: %v", err)
	}
	if _, err := compareMigrations(lite, strings.Replace(pg, "(kind);", "(id);", 1), engineTokens); err == nil {
		t.Fatal("a difference after an engine-specific part passed")
	}
	if _, err := compareMigrations(strings.Replace(base, "BLOB", "BYTEA", 1), base, engineTokens); err == nil {
		t.Fatal("a PostgreSQL type in the SQLite file passed")
	}
}

// compareMigrations compares a SQLite migration with its PostgreSQL twin
// token by token, and returns the engineTokens entries it needed.
//
// A part that cannot be written the same way in both (triggers: a
// PL/pgSQL function and constraint triggers in one, inline trigger bodies
// in the other) goes between the comment lines "-- engine-specific: begin"
// and "-- engine-specific: end"; such parts are not compared, but both files
// must have them at the same places.
func compareMigrations(lite, pg string, allowed map[string]string) (map[string]bool, error) {
	a, b := sqlTokens(withoutEngineParts(lite)), sqlTokens(withoutEngineParts(pg))
	used := map[string]bool{}
	for i := range max(len(a), len(b)) {
		switch {
		case i >= len(a):
			return used, fmt.Errorf("postgres has more from line %d: %s", b[i].line, lineOf(pg, b[i].line))
		case i >= len(b):
			return used, fmt.Errorf("sqlite has more from line %d: %s", a[i].line, lineOf(lite, a[i].line))
		case a[i].text == b[i].text:
		case allowed[a[i].text] == b[i].text:
			used[a[i].text] = true
		default:
			return used, fmt.Errorf("%q differs from %q:\nsqlite   line %d: %s\npostgres line %d: %s",
				a[i].text, b[i].text, a[i].line, lineOf(lite, a[i].line), b[i].line, lineOf(pg, b[i].line))
		}
	}
	return used, nil
}

// withoutEngineParts replaces each engine-specific part of src (see
// compareMigrations) by one word, keeping the lines where they were.
func withoutEngineParts(src string) string {
	const begin, end = "-- engine-specific: begin\n", "-- engine-specific: end\n"
	var out strings.Builder
	for {
		i := strings.Index(src, begin)
		if i < 0 {
			out.WriteString(src)
			return out.String()
		}
		j := strings.Index(src[i:], end)
		if j < 0 {
			out.WriteString(src) // unclosed: compared as it is, and differs
			return out.String()
		}
		part := src[i : i+j+len(end)]
		out.WriteString(src[:i])
		out.WriteString("ENGINE_SPECIFIC" + strings.Repeat("\n", strings.Count(part, "\n")))
		src = src[i+j+len(end):]
	}
}

// token is one word, literal or symbol of SQL, and the line it starts on.
type token struct {
	text string
	line int
}

// sqlTokens splits SQL into tokens, leaving out whitespace and comments
// other than goose's directives (-- +goose ...), which change how a file
// runs and so are kept, with their spacing normalised.
func sqlTokens(src string) []token {
	var out []token
	line := 1
	for i := 0; i < len(src); {
		rest := src[i:]
		switch c := src[i]; {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(rest, "--"):
			text, _, _ := strings.Cut(rest, "\n")
			if d := strings.TrimSpace(text[2:]); strings.HasPrefix(d, "+goose") {
				out = append(out, token{"-- " + strings.Join(strings.Fields(d), " "), line})
			}
			i += len(text)
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest, "*/")
			if end < 0 {
				end = len(rest) - 2
			}
			line += strings.Count(rest[:end], "\n")
			i += end + 2
		case c == '\'' || c == '"':
			j := 1
			for j < len(rest) && (rest[j] != c || strings.HasPrefix(rest[j:], string([]byte{c, c}))) {
				if rest[j] == c {
					j++ // a doubled quote stands for itself
				}
				j++
			}
			text := rest[:min(j+1, len(rest))]
			out = append(out, token{text, line})
			line += strings.Count(text, "\n")
			i += len(text)
		case isWordByte(c):
			j := 1
			for j < len(rest) && isWordByte(rest[j]) {
				j++
			}
			out = append(out, token{rest[:j], line})
			i += j
		default:
			out = append(out, token{string(c), line})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c == '.' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// lineOf returns line n of src, trimmed.
func lineOf(src string, n int) string {
	lines := strings.Split(src, "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[n-1])
}
