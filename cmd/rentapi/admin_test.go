package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"rentapi/internal/identity"
	"rentapi/internal/rental"
	"rentapi/internal/store"
)

// adminRunner runs `rentapi admin` in-process over one database and secret.
type adminRunner struct {
	t      *testing.T
	getenv func(string) string
}

// run returns what the tool printed on stdout, and its error, with what it
// wrote on stderr.
func (a adminRunner) run(args ...string) (string, error) {
	a.t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(a.t.Context(), append([]string{"admin"}, args...), a.getenv, nil, &stdout, &stderr)
	return stdout.String(), err
}

// ok runs a tool that must succeed and returns its output, trimmed.
func (a adminRunner) ok(args ...string) string {
	a.t.Helper()
	out, err := a.run(args...)
	if err != nil {
		a.t.Fatalf("admin %v: %v", args, err)
	}
	return strings.TrimSpace(out)
}

// apiStatus is the status and error code of GET path with key.
func apiStatus(t *testing.T, base, key, path string) (int, string) {
	t.Helper()
	status, m := (&server{base: base}).call(t, key, "GET", path, "")
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return status, code
}

// The operator's tools for people, developers, applications and keys, each
// through `rentapi admin` against a running service: what each prints, what
// the API then answers, and the refusal of a mistyped or unknown ID with a
// message that says which.
func TestAdminOperatorTools(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			ctx := t.Context()
			env := map[string]string{"RENTAPI_DB": freshDSN(t, engine), "RENTAPI_SECRET_FILE": filepath.Join(t.TempDir(), "secret")}
			getenv := func(k string) string { return env[k] }
			base, sandboxKey, stop := serveInProcess(t, getenv, "--addr", "127.0.0.1:0")
			defer stop()
			adm := adminRunner{t, getenv}
			db, err := store.Open(ctx, env["RENTAPI_DB"], store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			appID, err := db.Read().DemoApplication(ctx)
			if err != nil {
				t.Fatal(err)
			}
			app, err := db.Read().GetApplication(ctx, appID)
			if err != nil {
				t.Fatal(err)
			}
			second := adm.ok("create-app", "--name", "Second")
			secondKey := adm.ok("create-key", "--mode", "test", "--app", second, "--name", "CI key")
			landlord := adm.ok("create-landlord", "--name", "Khun Somchai")
			// set-promptpay keeps the account holder's name the payment page
			// shows; a name on two lines is refused.
			if _, err := adm.run("set-promptpay", "--landlord", landlord, "--id", "081-234-5678", "--name", "สมชาย\nใจดี"); err == nil {
				t.Fatal("set-promptpay took a name on two lines")
			}
			if out := adm.ok("set-promptpay", "--landlord", landlord, "--id", "081-234-5678", "--name", "สมชาย ใจดี"); out != "mobile 0812345678" {
				t.Fatalf("set-promptpay printed %q", out)
			}
			if l, err := db.Read().Landlord(ctx, landlord); err != nil || l.ReceiverName != "สมชาย ใจดี" || l.Receiver == nil || l.Receiver.ID != "0812345678" {
				t.Fatalf("the landlord after set-promptpay: %+v (%v)", l, err)
			}
			account := adm.ok("link-account", "--landlord", landlord)
			liveKey := adm.ok("create-key", "--mode", "live", "--account", account, "--scopes", "properties:read,bills:read", "--expires-in", "2h")
			want := func(key string, status int, code string) {
				t.Helper()
				if got, gotCode := apiStatus(t, base, key, "/v1/account"); got != status || gotCode != code {
					t.Fatalf("GET /v1/account: %d %s, want %d %s", got, gotCode, status, code)
				}
			}
			want(sandboxKey, 200, "")

			// A suspended developer's keys, of every application, are refused.
			if out := adm.ok("suspend-developer", "--developer", app.DeveloperID); out != app.DeveloperID+" suspended" {
				t.Fatalf("suspend-developer printed %q", out)
			}
			want(sandboxKey, 403, "developer_suspended")
			want(secondKey, 403, "developer_suspended")
			want(liveKey, 403, "developer_suspended")
			if out := adm.ok("unsuspend-developer", "--developer", app.DeveloperID); out != app.DeveloperID+" active" {
				t.Fatalf("unsuspend-developer printed %q", out)
			}
			want(sandboxKey, 200, "")

			// A disabled application's keys are refused; another's are not.
			if out := adm.ok("disable-app", "--app", second); out != second+" disabled" {
				t.Fatalf("disable-app printed %q", out)
			}
			want(secondKey, 403, "application_disabled")
			want(sandboxKey, 200, "")
			if out := adm.ok("enable-app", "--app", second); out != second+" enabled" {
				t.Fatalf("enable-app printed %q", out)
			}
			want(secondKey, 200, "")

			// list-keys: one line per key, with what is stored of it (the
			// visible prefix and the last 4 characters, never the rest).
			lines := strings.Split(adm.ok("list-keys"), "\n")
			if len(lines) != 2 {
				t.Fatalf("list-keys printed %q", lines)
			}
			live := strings.Split(lines[0], "\t")
			if len(live) != 10 || !regexp.MustCompile(`^key_[a-z0-9]{24}$`).MatchString(live[0]) || live[1] != "Key" || live[2] != "live" ||
				live[3] != liveKey[:13]+"…"+liveKey[len(liveKey)-4:] || live[4] != "properties:read,bills:read" || live[5] != account ||
				!regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`).MatchString(live[6]) || live[9] != "expiring" ||
				strings.Contains(lines[0], liveKey[13:len(liveKey)-4]) {
				t.Fatalf("list-keys line %q", lines[0])
			}
			if test := strings.Split(lines[1], "\t"); test[2] != "test" || test[3] != sandboxKey[:13]+"…"+sandboxKey[len(sandboxKey)-4:] || test[5] != "-" || test[6] != "never" || test[9] != "active" {
				t.Fatalf("list-keys line %q", lines[1])
			}
			seconds := strings.Split(adm.ok("list-keys", "--app", second), "\t")
			if seconds[1] != "CI key" || seconds[3] != secondKey[:13]+"…"+secondKey[len(secondKey)-4:] {
				t.Fatalf("list-keys --app %s: %q", second, seconds)
			}

			// A revoked key is refused from the next request on.
			if out := adm.ok("revoke-key", "--key", seconds[0]); out != seconds[0]+" revoked" {
				t.Fatalf("revoke-key printed %q", out)
			}
			want(secondKey, 401, "invalid_api_key")
			if status := strings.Split(adm.ok("list-keys", "--app", second), "\t")[9]; status != "revoked" {
				t.Fatalf("revoked key listed as %s", status)
			}
			adm.ok("revoke-key", "--key", seconds[0]) // again: nothing changes

			// reset-password: a new password, shown once, and no session left.
			var dev *rental.Person
			if err := db.InTx(ctx, func(tx *store.Tx) (err error) {
				dev, err = tx.SignUp(ctx, rental.PersonDeveloper, "dev@example.com", "Dev", identity.HashPassword("the old password"))
				if err != nil {
					return err
				}
				return tx.StartSession(ctx, dev.ID, "session-hash")
			}); err != nil {
				t.Fatal(err)
			}
			password := adm.ok("reset-password", "--kind", "developer", "--email", " Dev@Example.COM ")
			hash, err := db.Read().PasswordHash(ctx, dev.ID)
			if err != nil || len(password) < 20 || !identity.CheckPassword(hash, password) || identity.CheckPassword(hash, "the old password") {
				t.Fatalf("reset to %q: %v", password, err)
			}
			if _, err := db.Session(ctx, "session-hash", db.Now()); !rental.IsNotFound(err) {
				t.Fatalf("a session outlived the reset: %v", err)
			}
			if again := adm.ok("reset-password", "--kind", "developer", "--email", "dev@example.com"); again == password {
				t.Fatal("the same password twice")
			}

			// Refusals: a message that says what is wrong, nothing on stdout.
			const unknownDev, unknownApp, unknownKey = "dev_000000000000000000000000", "app_000000000000000000000000", "key_000000000000000000000000"
			for _, c := range []struct {
				args []string
				msg  string
			}{
				{[]string{"suspend-developer"}, "--developer is required"},
				{[]string{"suspend-developer", "--developer", second}, "is not an ID of the form dev_"},
				{[]string{"suspend-developer", "--developer", unknownDev}, "No such developer: '" + unknownDev + "'"},
				{[]string{"unsuspend-developer", "--developer", "dev_x"}, "is not an ID of the form dev_"},
				{[]string{"unsuspend-developer", "--developer", unknownDev}, "No such developer"},
				{[]string{"disable-app", "--app", app.DeveloperID}, "is not an ID of the form app_"},
				{[]string{"disable-app", "--app", unknownApp}, "No such application: '" + unknownApp + "'"},
				{[]string{"enable-app"}, "--app is required"},
				{[]string{"enable-app", "--app", unknownApp}, "No such application"},
				{[]string{"list-keys", "--app", "App_X"}, "is not an ID of the form app_"},
				{[]string{"list-keys", "--app", unknownApp}, "No such application"},
				{[]string{"revoke-key", "--key", liveKey}, "is not an ID of the form key_"},
				{[]string{"revoke-key", "--key", unknownKey}, "No such key: '" + unknownKey + "'"},
				{[]string{"reset-password", "--kind", "admin", "--email", "dev@example.com"}, "--kind must be developer or landlord"},
				{[]string{"reset-password", "--kind", "developer", "--email", "dev"}, "--email"},
				{[]string{"reset-password", "--kind", "landlord", "--email", "dev@example.com"}, "no landlord has signed up with dev@example.com"},
				{[]string{"revoke-key", "--keys", unknownKey}, "flag provided but not defined"},
			} {
				out, err := adm.run(c.args...)
				if err == nil || !strings.Contains(err.Error(), c.msg) || out != "" {
					t.Errorf("admin %v: %v (stdout %q), want an error saying %q", c.args, err, out, c.msg)
				}
			}
			// The live key still works: no refusal changed anything.
			want(liveKey, 200, "")
		})
	}
}

// Through the real binary, a refusal exits with status 2 and says why on
// stderr.
func TestAdminExitStatus(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	env := []string{"RENTAPI_DB=sqlite:" + filepath.Join(t.TempDir(), "x.db"), "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret")}
	for args, msg := range map[string]string{
		"revoke-key --key key_000000000000000000000000": "No such key",
		"disable-app --app nope":                        "is not an ID of the form app_",
	} {
		cmd := exec.Command(bin, append([]string{"admin"}, strings.Fields(args)...)...)
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || stdout.Len() > 0 || !strings.Contains(stderr.String(), msg) {
			t.Errorf("admin %s: %v, stdout %q, stderr %q", args, err, stdout.String(), stderr.String())
		}
	}
}

// The admin tools take names by the API's text rule, and list-keys prints
// a name stored before the rule (or by any other way in) so that it cannot
// act on the operator's terminal: escape sequences of C0 and C1,
// text-direction overrides and bytes that are not UTF-8 show as escapes,
// and the line keeps its ten tab-separated columns.
func TestAdminNamesAreSafe(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			ctx := t.Context()
			env := map[string]string{"RENTAPI_DB": freshDSN(t, engine), "RENTAPI_SECRET_FILE": filepath.Join(t.TempDir(), "secret")}
			adm := adminRunner{t, func(k string) string { return env[k] }}
			app := adm.ok("create-app", "--name", "Names")
			for _, c := range []struct {
				args []string
				msg  string
			}{
				{[]string{"create-key", "--app", app, "--name", "\x1b[2Jwiped"}, "--name"},
				{[]string{"create-key", "--app", app, "--name", "a\u009b31mb"}, "--name"},
				{[]string{"create-key", "--app", app, "--name", "a\u202eb"}, "--name"},
				{[]string{"create-key", "--app", app, "--name", "a\tb"}, "--name"},
				{[]string{"create-key", "--app", app, "--name", "   "}, "--name"},
				{[]string{"create-app", "--name", "a\x00b"}, "--name"},
				{[]string{"create-app", "--name", "App", "--company", "a\u0085b"}, "--company"},
				{[]string{"create-landlord", "--name", "\x1b]0;title\x07"}, "--name"},
			} {
				out, err := adm.run(c.args...)
				if err == nil || !strings.Contains(err.Error(), c.msg) || out != "" {
					t.Errorf("admin %q: %v (stdout %q), want an error about %s", c.args, err, out, c.msg)
				}
			}
			db, err := store.Open(ctx, env["RENTAPI_DB"], store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			keys, err := db.Read().APIKeys(ctx, app)
			if err != nil || len(keys) != 0 {
				t.Fatalf("%d keys made by refused tools: %v", len(keys), err)
			}
			// PostgreSQL keeps no byte that is not UTF-8; SQLite does.
			hostile, shown := "\x1b[2J\u009b31m\u202eevil\tkey\r\n\\x1b", `\x1b[2J\u009b31m\u202eevil\tkey\r\n\\x1b`
			if engine == "sqlite" {
				hostile, shown = hostile+"\xff", shown+`\xff`
			}
			if err := db.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.CreateAPIKey(ctx, store.NewKey{ApplicationID: app, Name: hostile, Mode: rental.ModeTest,
					Scopes: rental.Scopes{rental.ScopeBillsRead}, Fingerprint: "fp-hostile", Prefix: "sk_test_abcde", Last4: "wxyz"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			line := adm.ok("list-keys", "--app", app)
			cols := strings.Split(line, "\t")
			if len(cols) != 10 || cols[1] != shown {
				t.Fatalf("list-keys printed %q", line)
			}
			if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return r != '\t' && rental.Hidden(r) }) {
				t.Fatalf("list-keys printed a raw control: %q", line)
			}
			if out := adm.ok("create-key", "--app", app, "--name", "บ้านสุข key 🏠"); !strings.HasPrefix(out, rental.KeyPrefixTest) {
				t.Fatalf("create-key printed %q", out)
			}
		})
	}
}
