package api_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"rentapi/internal/rental"
	"rentapi/internal/store/storetest"
)

// The generators the document is held to, at the versions .ci/codegen-tools
// installs.
const (
	oapiCodegenVersion       = "v2.8.2"
	openapiTypescriptVersion = "7.13.0"
	typescriptVersion        = "5.9.3"
)

// codegenTools is where .ci/codegen-tools put the generators:
// RENTAPI_CODEGEN_TOOLS, else rentapi-codegen in the user's cache. Absent
// tools skip the test on a developer's machine, and fail it where
// RENTAPI_TEST_CODEGEN=required (CI).
func codegenTools(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("RENTAPI_CODEGEN_TOOLS")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "rentapi-codegen")
	}
	missing := func(what string) {
		t.Helper()
		msg := what + " is not installed in " + dir + "; run .ci/codegen-tools"
		if os.Getenv("RENTAPI_TEST_CODEGEN") == "required" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, tool := range []string{"go", "node"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(tool)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "bin", "oapi-codegen"), "--version").Output()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), oapiCodegenVersion) {
		missing("oapi-codegen " + oapiCodegenVersion)
	}
	for name, version := range map[string]string{"openapi-typescript": openapiTypescriptVersion, "typescript": typescriptVersion} {
		var pkg struct{ Version string }
		b, err := os.ReadFile(filepath.Join(dir, "node-tools", "node_modules", name, "package.json"))
		if err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Version != version {
			missing(name + "@" + version)
		}
	}
	return dir
}

// run runs a command in dir, failing the test with its output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// copyDir copies the files of testdata directory from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Clients generated from the document with default settings do the
// README's month: oapi-codegen's Go client (types and client) and
// openapi-typescript's types each compile a program of the month
// (testdata/codegen), which then runs against a test server. A document
// that generates a float32 meter value, a property a client must send that
// the server does not need, or names a program no longer finds, fails.
func TestGeneratedClients(t *testing.T) {
	t.Parallel()
	tools := codegenTools(t)
	doc, err := filepath.Abs("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, storetest.SQLite(t))
	server := func() []string {
		return []string{"RENTAPI_URL=" + h.url, "RENTAPI_KEY=" + h.testKey(h.fixture(rental.PlanPro))}
	}

	t.Run("go", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, filepath.Join("testdata", "codegen", "go"), dir)
		if err := os.Mkdir(filepath.Join(dir, "client"), 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, dir, nil, filepath.Join(tools, "bin", "oapi-codegen"), "-generate", "types,client", "-package", "client",
			"-o", filepath.Join(dir, "client", "client.go"), doc)
		// The generated client's modules come from the module cache, where
		// .ci/codegen-tools put them: the test reaches no network. Built
		// with -trimpath, its packages' build actions do not depend on the
		// temporary directory, so an unchanged document's client is vetted
		// and compiled from the build cache as any unchanged package is.
		env := []string{"GOFLAGS=-mod=readonly -trimpath", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local"}
		run(t, dir, env, "go", "vet", "./...")
		run(t, dir, env, "go", "build", "-o", "month", ".")
		if out := run(t, dir, server(), filepath.Join(dir, "month")); !strings.Contains(out, "month done") {
			t.Fatalf("month: %s", out)
		}
	})

	t.Run("typescript", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, filepath.Join("testdata", "codegen", "ts"), dir)
		bin := filepath.Join(tools, "node-tools", "node_modules", ".bin")
		run(t, dir, nil, filepath.Join(bin, "openapi-typescript"), doc, "-o", filepath.Join(dir, "rentapi.ts"))
		run(t, dir, nil, filepath.Join(bin, "tsc"), "--strict", "--noEmitOnError", "--noUnusedLocals", "--target", "es2022",
			"--module", "commonjs", "--lib", "es2022,dom", "--outDir", "out", "month.ts", "rentapi.ts")
		out := run(t, dir, server(), "node", "-e", `require("./out/month.js").month(process.env.RENTAPI_URL, process.env.RENTAPI_KEY)
			.then(b => console.log("month done:", b.status), e => { console.error(e); process.exit(1); })`)
		if !strings.Contains(out, "month done: paid") {
			t.Fatalf("month: %s", out)
		}
	})
}
