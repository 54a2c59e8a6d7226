// Command rentapi is the whole rental-management service in one binary:
// `serve` runs the API, the pages and the background jobs (on an embedded
// SQLite database unless told otherwise), `migrate` updates a database's
// schema, `admin` holds the operator's tools for applications, keys,
// landlords, people and invoices, `listen` forwards a developer's events
// to their own machine, and `version` says which build this is.
//
// main.go is run, the program with its environment passed in so tests run
// it in process; flags.go is the one flag-with-environment helper (each
// flag writes its own "(env …)" text); serve.go parses serve's flags
// (parseServe) apart from running them (runServe); config.go holds the
// database flags every command shares and migrate; admin.go and
// invoice.go the admin tools; listen.go the event forwarder; gc.go and
// logbuf.go tune the collector and buffer the log.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "rentapi:", err)
		os.Exit(2)
	}
}

// commands are the binary's commands with what each does, for the usage
// text; the admin tools are listed from adminTools.
var commands = []struct{ name, summary string }{
	{"serve", "run the service (API, pages, background jobs)"},
	{"migrate", "bring a database's schema up to date and exit"},
	{"admin", "operator tools for applications, keys, landlords and people:"},
	{"listen", "forward an account's events to a local URL as signed webhook deliveries"},
	{"version", "print the module version and the VCS revision of this build"},
}

// usage is the binary's help: every command and every admin tool.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: rentapi <command> [flags]\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-26s %s\n", c.name, c.summary)
		if c.name == "admin" {
			for _, t := range adminTools {
				fmt.Fprintf(&b, "  %-26s %s\n", "admin "+t.name, t.summary)
			}
		}
	}
	b.WriteString("\nRun 'rentapi <command> --help' (or 'rentapi admin <tool> --help') for its flags.")
	return b.String()
}

// run is the program with its environment passed in, so tests can run it
// in-process exactly as the binary would. Help that was asked for is a
// success.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage())
		return errors.New("no command given")
	}
	env := environment{getenv: getenv, stdout: stdout, stderr: stderr}
	var err error
	switch args[0] {
	case "serve":
		err = env.serve(ctx, args[1:])
	case "migrate":
		err = env.migrate(ctx, args[1:])
	case "admin":
		err = env.admin(ctx, args[1:])
	case "listen":
		err = env.listen(ctx, args[1:])
	case "version":
		err = env.version(args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage())
	default:
		fmt.Fprintln(stderr, usage())
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// parse reads a command's flags. Asked for help (-h or --help), it prints
// the command's usage on stdout, for a pager, and returns flag.ErrHelp,
// which stops the command and which run takes as success; after a bad flag
// the same usage goes to stderr with the error.
func (e environment) parse(fs *flag.FlagSet, args []string, synopsis string) error {
	fs.SetOutput(e.stderr)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = fmt.Errorf("unexpected argument %q (flags take their values as --flag=value or --flag value; a switch such as --rate-limits takes on or off)", fs.Arg(0))
	}
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(e.stdout, fs, synopsis)
	case err != nil:
		printUsage(e.stderr, fs, synopsis)
	}
	fs.SetOutput(e.stderr)
	return err
}

// printUsage writes a command's synopsis and its flags.
func printUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprintf(w, "usage: rentapi %s [flags]\n\n%s\n\nflags:\n", fs.Name(), synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// version prints what this binary was built from, for bug reports and for
// checking that every process of a deployment runs the same build.
func (e environment) version(args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := e.parse(fs, args, "Print the module version and the VCS revision this binary was built from."); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("version: unexpected argument %q", fs.Arg(0))
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintln(e.stdout, versionLine(bi, ok))
	return nil
}

// versionLine describes a build: the module version ("(devel)" for a build
// from a source tree rather than of a tagged module), the VCS revision with
// its commit time and whether the tree had uncommitted changes (go build
// stamps these only inside a repository, and not with -buildvcs=false), and
// the Go release.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "rentapi (unknown version: built without module support), unknown revision"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	line := "rentapi " + v
	switch {
	case rev == "":
		line += ", unknown revision"
	case at != "":
		line += ", revision " + rev + " (" + at + ")"
	default:
		line += ", revision " + rev
	}
	if modified {
		line += " with uncommitted changes"
	}
	if bi.GoVersion != "" {
		line += ", " + bi.GoVersion
	}
	return line
}

// environment is what every command reads its settings from and writes to.
type environment struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}
