package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"rentapi/internal/rental"
)

// readmeTools are the commands the README's shell examples use. Without
// one of them the test skips, unless RENTAPI_TEST_README=required (as in
// CI), when it fails.
var readmeTools = []string{"bash", "curl", "jq", "openssl"}

// readmeNotRun are the README's shell blocks this test does not run, each
// with the reason. A block is an entry's when every line of it matches the
// entry's pattern, and every entry must match exactly one block: any other
// block, a new one included, is run, so none goes unrun unnoticed.
var readmeNotRun = []readmeSkip{
	{regexp.MustCompile(`^go run \./cmd/rentapi serve$`),
		"starts the service and keeps it running on 127.0.0.1:8080: the test starts the same command, built (buildBinary), on a free port over a fresh database, and takes the key it prints"},
	{regexp.MustCompile(`^go test \./\.\.\.$`),
		"the test suite, this test included"},
	{regexp.MustCompile(`^RENTAPI_TEST_POSTGRES='[^']+' +RENTAPI_TEST_REDIS=\S+ go test \./\.\.\.$`),
		"the test suite on PostgreSQL and Redis, this test included"},
	{regexp.MustCompile(`^go run \./cmd/rentapi (migrate|serve) .*--db 'postgres://user:pass@db\.internal:5432/rentapi'.*$`),
		"a deployment on the reader's own hosts (db.internal, cache.internal) serving 0.0.0.0:8080 for good; migrate and serve on PostgreSQL run in TestBinaryEndToEnd/postgres"},
	{regexp.MustCompile(`^(go build -o rentapi \./cmd/rentapi|\./rentapi (--help|version)( .*)?)$`),
		"writes ./rentapi into the working tree; the test runs the same build (buildBinary), and TestBinaryHelpAndVersion runs --help and version"},
	{regexp.MustCompile(`^go run \./cmd/rentapi listen --api-key "\$KEY" --forward-to \S+ +--events '[^']+' --api-base "\$BASE"$`),
		"runs until stopped, forwarding to the reader's own receiver on localhost:3000; TestListenForwardsTheStream runs the same command, built, against a receiver of its own"},
	{regexp.MustCompile(`^go mod edit -require=rentapi/sdk/go@v0\.0\.0 -replace=rentapi/sdk/go=/path/to/rentapi/sdk/go$`),
		"edits the reader's own module (/path/to is theirs); the SDK's tests (sdk/go, run by .ci/run) use it from this checkout"},
	{regexp.MustCompile(`^\./rentapi admin [a-z-]+( [a-z]+)?( .*)? +# .+$`),
		"a synopsis of the operator tools ([optional] flags, … placeholders), not a script; TestAdminOperatorTools, TestAdminInvoiceTools and TestAdminExitStatus run every tool"},
}

// readmeSkip is a README block not run, and why.
type readmeSkip struct {
	lines *regexp.Regexp
	why   string
}

// readmeCallback is the redirect URI of the README's connect link.
const readmeCallback = "https://app.example.com/rentapi/callback"

// readmeBlock is one ```sh block of README.md.
type readmeBlock struct {
	line    int    // of its opening fence
	section string // the heading it is under
	text    string // its lines, without a list item's indentation
}

func (b readmeBlock) String() string { return fmt.Sprintf("README.md:%d (%s)", b.line, b.section) }

// The README's shell examples, run as a reader pastes them into one shell:
// against the real binary, serving a fresh database, each block in turn
// with the variables the blocks before it set, filling in only what a
// reader fills in (the address in BASE, the key serve printed, the app_,
// acct_ and live key the reader gets from the portal and the connect flow,
// which the test goes through in the pages, and for the webhook check a
// delivery the test's receiver got). Every curl answers 2xx and is silent,
// every write sends an Idempotency-Key, every call goes to BASE, a live
// key names its account on every call, and what the text says of the
// answers holds. The blocks not run are listed in readmeNotRun.
func TestREADMEExamples(t *testing.T) {
	t.Parallel()
	for _, tool := range readmeTools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("RENTAPI_TEST_README") == "required" {
				t.Fatalf("RENTAPI_TEST_README=required, but %s is not installed: %v", tool, err)
			}
			t.Skipf("the README's examples need %s: %v", tool, err)
		}
	}
	blocks := readmeShellBlocks(t)
	var run []readmeBlock
	used := make([]int, len(readmeNotRun))
	for _, b := range blocks {
		i := slices.IndexFunc(readmeNotRun, func(n readmeSkip) bool { return everyLine(n.lines, b.text) })
		if i < 0 {
			run = append(run, b)
			continue
		}
		used[i]++
		t.Logf("%s not run: %s", b, readmeNotRun[i].why)
	}
	for i, n := range readmeNotRun {
		if used[i] != 1 {
			t.Errorf("readmeNotRun's %s matches %d README blocks, want 1: bring the list up to date", n.lines, used[i])
		}
	}
	if len(run) < 5 {
		t.Fatalf("only %d README blocks to run: is the README parsed right?", len(run))
	}
	bin := buildBinary(t)
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			r := newReadmeReader(t, bin, engine)
			r.runTry()
			for _, b := range run {
				r.block(b)
			}
			if r.acct == "" || r.live == "" {
				t.Error("no README block went live: the Going live steps were not run")
			}
		})
	}
}

// readmeShellBlocks returns the README's ```sh blocks. A shell example
// fenced otherwise (bash, console, or no language with a curl in it) is an
// error: it would not be run.
func readmeShellBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	curlLine := regexp.MustCompile(`(?m)^\s*(\$ )?curl\s`)
	var blocks []readmeBlock
	section := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") {
			section = strings.TrimSpace(strings.TrimLeft(l, "#"))
			continue
		}
		fence := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		indent := strings.Repeat(" ", len(l)-len(fence))
		info := strings.TrimSpace(strings.TrimPrefix(fence, "```"))
		open := i + 1
		var body []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			body = append(body, strings.TrimPrefix(lines[i], indent))
		}
		if i == len(lines) {
			t.Fatalf("README.md:%d: a fence that is never closed", open)
		}
		b := readmeBlock{line: open, section: section, text: strings.Join(body, "\n") + "\n"}
		switch info {
		case "sh":
			blocks = append(blocks, b)
		case "bash", "shell", "console", "zsh", "shell-session":
			t.Errorf("%s is fenced as %s: fence it as sh, so that this test runs it", b, info)
		default:
			if curlLine.MatchString(b.text) {
				t.Errorf("%s has a curl example in a %q block: fence it as sh, so that this test runs it", b, info)
			}
		}
	}
	return blocks
}

// everyLine reports whether every command line of text that is not blank
// matches re, a line continued with a backslash taken with the next.
func everyLine(re *regexp.Regexp, text string) bool {
	joined := strings.ReplaceAll(text, "\\\n", " ")
	for l := range strings.SplitSeq(strings.TrimSuffix(joined, "\n"), "\n") {
		if strings.TrimSpace(l) != "" && !re.MatchString(l) {
			return false
		}
	}
	return true
}

// readmeReader is a reader working through the README with a shell, a
// browser and a webhook receiver of their own.
type readmeReader struct {
	t   *testing.T
	srv *server
	// dir is the reader's working directory; the shell's variables are kept
	// in state (for the next block to source) and vars (for the test), and
	// calls is where the curl wrapper records each call.
	dir, state, vars, calls string
	// set are the shell variables the blocks have set so far.
	set map[string]string
	// What the reader got along the way: the application made in the
	// portal, the account the connect flow linked, the live key, the
	// webhook endpoint's secret.
	dev             *pageClient
	app, acct, live string
	whsec           string
	hooks           *hookInbox
}

func newReadmeReader(t *testing.T, bin, engine string) *readmeReader {
	dsn := freshDSN(t, engine)
	env := []string{"RENTAPI_DB=" + dsn, "RENTAPI_SECRET_FILE=" + filepath.Join(t.TempDir(), "secret")}
	// The reader's webhook receiver, on this machine: "Receiving webhooks"
	// says to start the service with --webhook-allow-loopback for it.
	hooks := &hookInbox{}
	recv := httptest.NewServer(hooks)
	t.Cleanup(recv.Close)
	srv := startServer(t, bin, env, "--webhook-allow-loopback")
	if srv.key == "" || srv.try == "" {
		t.Fatalf("serve printed no key or no line to try it with: %q %q", srv.key, srv.try)
	}
	status, ep := srv.call(t, srv.key, "POST", "/v1/webhook-endpoints", `{"url":"`+recv.URL+`/hook","enabled_events":["*"]}`)
	if status != http.StatusCreated {
		t.Fatalf("webhook endpoint: %d %v", status, ep)
	}
	dir := t.TempDir()
	calls := filepath.Join(dir, ".calls")
	if err := os.Mkdir(calls, 0o755); err != nil {
		t.Fatal(err)
	}
	return &readmeReader{t: t, srv: srv, dir: dir, state: filepath.Join(dir, ".state"), vars: filepath.Join(dir, ".vars"), calls: calls,
		set: map[string]string{}, whsec: ep["data"].(map[string]any)["secret"].(string), hooks: hooks}
}

// readmePrelude comes before every block: the shell stops at the first
// failure, and curl is the real curl recording each call (its arguments
// and the answer's headers) and failing on an answer other than 2xx.
const readmePrelude = `set -euo pipefail
curl() {
	local rec status
	rec=$(mktemp "$README_CALLS/$(date +%s%N)-XXXXXX")
	printf '%s\0' "$@" >"$rec.args"
	command curl -D "$rec.head" "$@" || return
	status=$(awk 'toupper($1) ~ /^HTTP\// { s = $2 } END { print s }' "$rec.head")
	case "$status" in
	2??) ;;
	*) echo "the README's curl $* was answered $status" >&2; return 22 ;;
	esac
}
if [ -f "$README_STATE" ]; then source "$README_STATE"; fi
`

var assignment = regexp.MustCompile(`(?m)^\s*([A-Za-z_][A-Za-z0-9_]*)=`)

// shell runs text as a block pasted into the reader's shell, with the
// variables the blocks before it set and the environment given; it keeps
// the variables the block sets.
func (r *readmeReader) shell(text string, env ...string) (stdout, stderr string, calls []curlCall, err error) {
	r.t.Helper()
	old, _ := filepath.Glob(filepath.Join(r.calls, "*"))
	for _, f := range old {
		os.Remove(f)
	}
	script := readmePrelude + text
	var names []string
	for _, m := range assignment.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	if len(names) > 0 {
		script += fmt.Sprintf("\ndeclare -p %[1]s >>\"$README_STATE\"\nfor v in %[1]s; do printf '%%s=%%s\\n' \"$v\" \"${!v}\"; done >>\"$README_VARS\"\n", strings.Join(names, " "))
	}
	ctx, cancel := context.WithTimeout(r.t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = r.dir
	// A clean environment: no variable of the test's own to stand in for
	// one a block forgot to set, and HOME here, so no ~/.curlrc applies.
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.dir, "TMPDIR=" + os.TempDir(), "LANG=C.UTF-8",
		"README_CALLS=" + r.calls, "README_STATE=" + r.state, "README_VARS=" + r.vars}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if b, rerr := os.ReadFile(r.vars); rerr == nil {
		for l := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				r.set[k] = v
			}
		}
	}
	return out.String(), errb.String(), r.readCalls(), err
}

// curlCall is one call the examples made: curl's arguments and the answer.
type curlCall struct {
	args   []string
	status int
	header http.Header
}

// readCalls reads the calls the wrapper recorded, in order.
func (r *readmeReader) readCalls() []curlCall {
	r.t.Helper()
	recs, _ := filepath.Glob(filepath.Join(r.calls, "*.args"))
	slices.Sort(recs)
	var calls []curlCall
	for _, rec := range recs {
		args, err := os.ReadFile(rec)
		if err != nil {
			r.t.Fatal(err)
		}
		c := curlCall{args: strings.Split(strings.TrimSuffix(string(args), "\x00"), "\x00"), header: http.Header{}}
		head, _ := os.ReadFile(strings.TrimSuffix(rec, ".args") + ".head")
		for l := range strings.SplitSeq(string(head), "\n") {
			l = strings.TrimRight(l, "\r")
			if strings.HasPrefix(l, "HTTP/") { // a later answer (after a 100 Continue) replaces the first
				f := strings.Fields(l)
				if len(f) > 1 {
					c.status, _ = strconv.Atoi(f[1])
				}
				c.header = http.Header{}
			} else if k, v, ok := strings.Cut(l, ":"); ok {
				c.header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		calls = append(calls, c)
	}
	return calls
}

// curlValued are curl's options that take a value.
var curlValued = map[string]bool{"-X": true, "--request": true, "-H": true, "--header": true, "-d": true, "--data": true, "--data-raw": true,
	"--data-binary": true, "--data-urlencode": true, "--json": true, "-o": true, "--output": true, "-D": true, "--dump-header": true,
	"-w": true, "--write-out": true, "-u": true, "--user": true, "-A": true, "-e": true, "-b": true, "-c": true, "-F": true, "--form": true,
	"--url": true, "-m": true, "--max-time": true}

// shortFlags is a cluster of curl's one-letter switches, such as -sS.
var shortFlags = regexp.MustCompile(`^-[A-Za-z]+$`)

// request is what a call's arguments ask for.
type request struct {
	method, url string
	silent      bool
	header      http.Header
}

func (c curlCall) request() request {
	q := request{header: http.Header{}}
	data := false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		switch {
		case curlValued[a] && i+1 < len(c.args):
			v := c.args[i+1]
			i++
			switch a {
			case "-X", "--request":
				q.method = v
			case "-H", "--header":
				if k, val, ok := strings.Cut(v, ":"); ok {
					q.header.Add(strings.TrimSpace(k), strings.TrimSpace(val))
				}
			case "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--json", "-F", "--form":
				data = true
			case "--url":
				q.url = v
			}
		case a == "--silent":
			q.silent = true
		case shortFlags.MatchString(a):
			q.silent = q.silent || strings.Contains(a, "s")
		case !strings.HasPrefix(a, "-"):
			q.url = a
		}
	}
	if q.method == "" {
		q.method = map[bool]string{true: "POST", false: "GET"}[data]
	}
	return q
}

// checkCall holds a call to what the README promises of every call.
func (r *readmeReader) checkCall(where string, c curlCall) {
	r.t.Helper()
	q := c.request()
	what := fmt.Sprintf("%s: curl %s", where, strings.Join(c.args, " "))
	if !q.silent {
		r.t.Errorf("%s: without -s (--silent) the progress meter mixes into the JSON", what)
	}
	if !strings.HasPrefix(q.url, r.srv.base+"/") {
		r.t.Errorf("%s: calls %q, not the service at $BASE", what, q.url)
	}
	if c.status < 200 || c.status > 299 {
		r.t.Errorf("%s: answered %d", what, c.status)
	}
	if q.method != "GET" && q.method != "HEAD" && q.header.Get("Idempotency-Key") == "" {
		r.t.Errorf("%s: a write (%s) without an Idempotency-Key", what, q.method)
	}
	key, _ := strings.CutPrefix(q.header.Get("Authorization"), "Bearer ")
	switch {
	case strings.HasPrefix(key, rental.KeyPrefixLive):
		if q.header.Get("SERVICE-Account") == "" {
			r.t.Errorf("%s: an unbound live key's call without SERVICE-Account", what)
		}
		if c.header.Get("X-SERVICE-Mode") != "live" || c.header.Get("X-Quota-Remaining") == "" {
			r.t.Errorf("%s: a live answer with X-SERVICE-Mode %q and X-Quota-Remaining %q", what, c.header.Get("X-SERVICE-Mode"), c.header.Get("X-Quota-Remaining"))
		}
	case strings.HasPrefix(key, rental.KeyPrefixTest):
		if c.header.Get("X-SERVICE-Mode") != "test" {
			r.t.Errorf("%s: a sandbox answer with X-SERVICE-Mode %q", what, c.header.Get("X-SERVICE-Mode"))
		}
	}
}

// runTry runs the curl line serve printed beside the key, as pasted from
// the terminal.
func (r *readmeReader) runTry() {
	r.t.Helper()
	stdout, stderr, calls, err := r.shell(r.srv.try + "\n")
	if err != nil || len(calls) != 1 {
		r.t.Fatalf("serve's line %q: %v, %d calls\n%s%s", r.srv.try, err, len(calls), stdout, stderr)
	}
	r.checkCall("serve's line to try", calls[0])
	if acct := answers(stdout); len(acct) != 1 || acct[0]["object"] != "account" || acct[0]["livemode"] != false {
		r.t.Errorf("serve's line answered %s", stdout)
	}
}

var (
	baseLine    = regexp.MustCompile(`(?m)^(\s*BASE=)http://127\.0\.0\.1:8080(\s|$)`)
	placeholder = regexp.MustCompile(`[A-Za-z0-9_.:/-]*…`)
	connectLink = regexp.MustCompile(`(?m)^(\S*/connect/\S+)$`)
)

// block runs one README block and checks what the README says of it.
func (r *readmeReader) block(b readmeBlock) {
	r.t.Helper()
	where := b.String()
	text := baseLine.ReplaceAllString(b.text, "${1}"+r.srv.base+"${2}")
	if strings.Contains(text, ":8080") {
		r.t.Fatalf("%s hard-codes the default address: give it as $BASE, set once, so a reader on another address changes one line\n%s", where, b.text)
	}
	if strings.Contains(text, "app_…") {
		text = strings.ReplaceAll(text, "app_…", r.application(where))
	}
	if strings.Contains(text, "svc_live_…") || strings.Contains(text, "acct_…") {
		r.liveKey(where)
		text = strings.ReplaceAll(strings.ReplaceAll(text, "svc_live_…", r.live), "acct_…", r.acct)
	}
	text = strings.ReplaceAll(text, "svc_test_…", r.srv.key)
	if p := placeholder.FindString(text); p != "" {
		r.t.Fatalf("%s has a placeholder the test cannot fill: %q (teach TestREADMEExamples what a reader puts there)", where, p)
	}
	var env []string
	webhookCheck := strings.Contains(text, "body.json")
	if webhookCheck {
		env = r.delivery(where)
	}
	stdout, stderr, calls, err := r.shell(text, env...)
	if err != nil {
		r.t.Fatalf("%s failed: %v\n--- as run:\n%s--- stdout:\n%s\n--- stderr:\n%s", where, err, text, stdout, stderr)
	}
	for _, c := range calls {
		r.checkCall(where, c)
	}
	r.t.Logf("%s ran: %d calls", where, len(calls))
	if strings.Contains(text, "curl") && len(calls) == 0 {
		r.t.Errorf("%s: its curl calls were not recorded", where)
	}
	live := r.live != "" && strings.Contains(text, r.live)
	for _, a := range answers(stdout) {
		if a["object"] == "account" && (a["livemode"] != live || live && a["id"] != r.acct) {
			r.t.Errorf("%s: answered the account %v %v, want livemode %v (%s)", where, a["id"], a["livemode"], live, r.acct)
		}
	}
	if m := connectLink.FindStringSubmatch(stdout); m != nil {
		r.approve(where, m[1])
	}
	if strings.Contains(text, "/v1/test-helpers/payments") {
		r.paidInFull(where)
	}
	if webhookCheck {
		if strings.TrimSpace(stdout) != "verified" {
			r.t.Errorf("%s printed %q for a real delivery, want verified", where, stdout)
		}
		// A body changed on the way is refused.
		if err := os.WriteFile(filepath.Join(r.dir, "body.json"), []byte(`{"id":"evt_forged"}`), 0o644); err != nil {
			r.t.Fatal(err)
		}
		stdout, _, _, err := r.shell(text, env...)
		if err == nil || strings.TrimSpace(stdout) != "bad signature" {
			r.t.Errorf("%s with a forged body: %v, printed %q", where, err, stdout)
		}
	}
}

// answers are the data objects of the JSON answers a block printed, in
// order (a list's items each).
func answers(stdout string) []map[string]any {
	var out []map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	for {
		var v struct {
			Data json.RawMessage `json:"data"`
		}
		if dec.Decode(&v) != nil {
			return out
		}
		var one map[string]any
		var many []map[string]any
		if json.Unmarshal(v.Data, &one) == nil {
			out = append(out, one)
		} else if json.Unmarshal(v.Data, &many) == nil {
			out = append(out, many...)
		}
	}
}

// paidInFull checks the README's payment: the bill in $BILL is paid, its
// amount_paid its total.
func (r *readmeReader) paidInFull(where string) {
	r.t.Helper()
	status, bill := r.srv.call(r.t, r.srv.key, "GET", "/v1/bills/"+r.set["BILL"], "")
	if status != http.StatusOK {
		r.t.Fatalf("%s: the bill %q: %d %v", where, r.set["BILL"], status, bill)
	}
	d := bill["data"].(map[string]any)
	if d["status"] != "paid" || d["amount_paid"] != d["total"] {
		r.t.Errorf("%s: after both payments the bill is %v with %v of %v paid", where, d["status"], d["amount_paid"], d["total"])
	}
}

// application goes through Going live's first two steps in the portal: a
// developer signs up and creates an application whose redirect URI is the
// README's; it returns the application's ID.
func (r *readmeReader) application(where string) string {
	r.t.Helper()
	if r.app != "" {
		return r.app
	}
	r.dev = newPageClient(r.t, r.srv.base)
	if pg := r.dev.post("/portal/signup", url.Values{"name": {"Ploy Developer"}, "email": {"ploy@example.com"}, "password": {"a long enough password"}}); pg.status != http.StatusSeeOther {
		r.t.Fatalf("%s: portal sign-up: %d\n%s", where, pg.status, pg.body)
	}
	f := url.Values{"name": {"Dorm Books"}, "company": {"Dorm Books Co., Ltd."}, "description": {"Bookkeeping for dormitories"},
		"redirect_uris": {readmeCallback}}
	for _, s := range rental.AllScopes {
		f.Add("scope", string(s))
	}
	pg := r.dev.post("/portal/apps/new", f)
	m := regexp.MustCompile(`^/portal/apps/(app_[a-z0-9]+)[/?]`).FindStringSubmatch(pg.location)
	if pg.status != http.StatusSeeOther || m == nil {
		r.t.Fatalf("%s: create an application: %d %q\n%s", where, pg.status, pg.location, pg.body)
	}
	r.app = m[1]
	return r.app
}

// approve goes through steps 4 and 5 with the connect link a block
// printed: the link names the application, the README's redirect URI and
// the block's $STATE; a landlord who opens it signed out is sent to sign
// in, signs up, comes back to the consent page and approves; the browser
// is sent to the redirect URI with the account and the same state.
func (r *readmeReader) approve(where, link string) {
	r.t.Helper()
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(link, r.srv.base+"/connect/"+r.app+"?") || u.Query().Get("redirect_uri") != readmeCallback ||
		u.Query().Get("state") == "" || u.Query().Get("state") != r.set["STATE"] {
		r.t.Fatalf("%s printed the connect link %q (application %s, state %q)", where, link, r.app, r.set["STATE"])
	}
	landlord := newPageClient(r.t, r.srv.base)
	if pg := landlord.get(u.RequestURI()); pg.status != http.StatusSeeOther || !strings.HasPrefix(pg.location, "/app/") {
		r.t.Fatalf("%s: the connect link signed out: %d %q", where, pg.status, pg.location)
	}
	if pg := landlord.post("/app/signup", url.Values{"name": {"Khun Somchai"}, "email": {"somchai@example.com"}, "password": {"a long enough password"}}); pg.status != http.StatusSeeOther {
		r.t.Fatalf("%s: landlord sign-up: %d\n%s", where, pg.status, pg.body)
	}
	pg := landlord.get(u.RequestURI())
	token := regexp.MustCompile(`name="token" value="([^"]+)"`).FindStringSubmatch(pg.body)
	if pg.status != http.StatusOK || token == nil {
		r.t.Fatalf("%s: the consent page: %d\n%s", where, pg.status, pg.body)
	}
	pg = landlord.post("/connect/"+r.app, url.Values{"token": {token[1]}, "decision": {"approve"}})
	back, err := url.Parse(pg.location)
	if pg.status != http.StatusSeeOther || err != nil || !strings.HasPrefix(pg.location, readmeCallback+"?") ||
		back.Query().Get("state") != r.set["STATE"] || !strings.HasPrefix(back.Query().Get("account_id"), "acct_") {
		r.t.Fatalf("%s: approving sent the browser to %d %q", where, pg.status, pg.location)
	}
	r.acct = back.Query().Get("account_id")
}

// liveKey goes through step 6: a live key, unbound, made in the portal
// once a landlord is linked.
func (r *readmeReader) liveKey(where string) {
	r.t.Helper()
	if r.live != "" {
		return
	}
	if r.acct == "" {
		r.t.Fatalf("%s needs a live key and an account, but no block before it printed a connect link the landlord approved", where)
	}
	pg := r.dev.post("/portal/apps/"+r.app+"/keys", url.Values{"name": {"Production"}, "mode": {"live"}, "scope": {string(rental.ScopePropertiesRead)}})
	if pg.status != http.StatusSeeOther {
		r.t.Fatalf("%s: create a live key: %d, want a redirect to the page that shows it\n%s", where, pg.status, pg.body)
	}
	pg = r.dev.get(pg.location)
	m := regexp.MustCompile(`<p class="secret" id="secret">(svc_live_[A-Za-z0-9]{40})</p>`).FindStringSubmatch(pg.body)
	if pg.status != http.StatusOK || m == nil {
		r.t.Fatalf("%s: create a live key: %d\n%s", where, pg.status, pg.body)
	}
	r.live = m[1]
}

// delivery is what "Receiving webhooks" has the reader start from: a
// delivery's raw body saved in body.json, its headers in TS and SIG, and
// the endpoint's secret in WHSEC.
func (r *readmeReader) delivery(where string) []string {
	r.t.Helper()
	var d hookDelivery
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var ok bool
		if d, ok = r.hooks.first(); ok {
			break
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s: no webhook delivery reached the receiver\n%s", where, r.srv.stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(r.dir, "body.json"), d.body, 0o644); err != nil {
		r.t.Fatal(err)
	}
	return []string{"TS=" + d.header.Get("X-SERVICE-Timestamp"), "SIG=" + d.header.Get("X-SERVICE-Signature"), "WHSEC=" + r.whsec}
}

// hookInbox is the reader's webhook receiver: it keeps what arrives.
type hookInbox struct {
	mu  sync.Mutex
	got []hookDelivery
}

type hookDelivery struct {
	header http.Header
	body   []byte
}

func (h *hookInbox) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.got = append(h.got, hookDelivery{r.Header.Clone(), body})
	h.mu.Unlock()
}

func (h *hookInbox) first() (hookDelivery, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.got) == 0 {
		return hookDelivery{}, false
	}
	return h.got[0], true
}

// pageClient is a person's browser on the pages: its own cookies, no
// redirects followed (each answer is looked at), and the Origin a form
// post carries.
type pageClient struct {
	t    *testing.T
	base string
	c    *http.Client
}

type pageAnswer struct {
	status         int
	location, body string
}

func newPageClient(t *testing.T, base string) *pageClient {
	jar, _ := cookiejar.New(nil)
	return &pageClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (p *pageClient) get(path string) pageAnswer { return p.do("GET", path, nil) }

func (p *pageClient) post(path string, form url.Values) pageAnswer { return p.do("POST", path, form) }

func (p *pageClient) do(method, path string, form url.Values) pageAnswer {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, p.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return pageAnswer{resp.StatusCode, resp.Header.Get("Location"), string(b)}
}

// The README's months with the SDKs are the SDKs' own examples, which
// their tests run against the real service: sdk/go's Example_month and
// sdk/typescript's examples/month.ts, as go run ./sdk/gen copies them for
// the docs (its test keeps the copies equal).
func TestREADMEMonthsAreTheSDKExamples(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ section, fence, example string }{
		{"## The Go SDK", "go", "month_go.txt"},
		{"## The TypeScript SDK", "ts", "month_ts.txt"},
	} {
		_, section, ok := strings.Cut(string(readme), "\n"+c.section+"\n")
		_, block, ok2 := strings.Cut(section, "\n```"+c.fence+"\n")
		block, _, ok3 := strings.Cut(block, "```\n")
		if !ok || !ok2 || !ok3 {
			t.Fatalf("README.md has no %q section with a %s block", c.section, c.fence)
		}
		example, err := os.ReadFile(filepath.Join("..", "..", "internal", "web", "examples", c.example))
		if err != nil {
			t.Fatal(err)
		}
		if block != string(example) {
			t.Errorf("README.md's month under %q differs from the SDK's example:\n--- README\n%s\n--- example\n%s", c.section, block, example)
		}
	}
}
