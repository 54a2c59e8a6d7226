// Command rentapi is the whole rental-management service in one binary:
// `serve` runs the API (on an embedded SQLite database unless told
// otherwise), `migrate` updates a database's schema, and `admin` holds the
// operator's tools for applications and keys.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "rentapi:", err)
		}
		os.Exit(2)
	}
}

const usage = `usage: rentapi <command> [flags]

commands:
  serve                  run the service (API, pages, background jobs)
  migrate                bring a database's schema up to date and exit
  admin create-app       create an application; prints its ID
  admin create-key       create an API key; prints the key
  admin create-landlord  create a real landlord; prints its ID
  admin link-account     link a landlord to an application; prints the account ID

Run 'rentapi <command> -h' for the flags of a command.`

// run is the program with its environment passed in, so tests can run it
// in-process exactly as the binary would.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return errors.New("no command given")
	}
	env := environment{getenv: getenv, stdout: stdout, stderr: stderr}
	switch args[0] {
	case "serve":
		return env.serve(ctx, args[1:])
	case "migrate":
		return env.migrate(ctx, args[1:])
	case "admin":
		return env.admin(ctx, args[1:])
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return nil
	default:
		fmt.Fprintln(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// environment is what every command reads its settings from and writes to.
type environment struct {
	getenv func(string) string
	stdout io.Writer
	stderr io.Writer
}

// or returns the environment variable name's value, or def when unset.
func (e environment) or(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}
