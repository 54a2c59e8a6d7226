package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// envFlags is a command's flag set whose flags may take their defaults from
// RENTAPI_* environment variables. Each such flag is defined with its
// variable's name, once: the helper looks the variable up and writes
// "(env NAME)" into the flag's usage itself, so --help names every variable
// and the lookup and the text cannot drift apart. A variable that holds a
// value its flag cannot take is an error kept until parse, so that it is
// reported whatever the command line says, once a plain --help has been
// answered.
type envFlags struct {
	set *flag.FlagSet
	env environment
	// err is the first variable that held a value of the wrong kind.
	err error
}

// flags starts a command's flag set.
func (e environment) flags(name string) *envFlags {
	return &envFlags{set: flag.NewFlagSet(name, flag.ContinueOnError), env: e}
}

// parse reads the command line as environment.parse does, then refuses a
// variable that held no value of its flag's kind.
func (f *envFlags) parse(args []string, synopsis string) error {
	if err := f.env.parse(f.set, args, synopsis); err != nil {
		return err
	}
	return f.err
}

// envUsage is a flag's help followed by the variable that sets it: "usage
// (env NAME)", or "usage (env NAME; note)" when note says more, such as
// what an empty default means.
func envUsage(usage, env, note string) string {
	if note != "" {
		env += "; " + note
	}
	return usage + " (env " + env + ")"
}

// String defines a string flag whose default is the variable env's value,
// or def when it is unset or empty.
func (f *envFlags) String(p *string, name, env, def, usage, note string) {
	if v := f.env.getenv(env); v != "" {
		def = v
	}
	f.set.StringVar(p, name, def, envUsage(usage, env, note))
}

// Int defines a whole-number flag whose default is the variable env's
// value, or def when it is unset or empty; a variable that is not a number
// is an error at parse.
func (f *envFlags) Int(p *int, name, env string, def int, usage, note string) {
	if v := f.env.getenv(env); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			f.fail(fmt.Errorf("%s=%q: want a whole number for --%s", env, v, name))
		} else {
			def = n
		}
	}
	f.set.IntVar(p, name, def, envUsage(usage, env, note))
}

// OnOff defines an on/off switch that takes a value (--rate-limits off)
// whose default is the variable env's value, or def when it is unset; a
// variable that is neither on nor off is an error at parse. The usage
// names the variable with the value that changes the default.
func (f *envFlags) OnOff(p *onOff, name, env string, def bool, usage, note string) {
	change := onOff(!def)
	f.fail(p.define(f.set, name, f.env.getenv(env), def, envUsage(usage, env+"="+change.String(), note)))
}

// Bool defines a switch that is on when given (--webhook-allow-loopback)
// or when the variable env is exactly "on", and off otherwise.
func (f *envFlags) Bool(p *bool, name, env, usage, note string) {
	f.set.BoolVar(p, name, f.env.getenv(env) == "on", envUsage(usage, env+"=on", note))
}

// Secret defines a credential's flag: the flag (or the variable fileEnv)
// names a file holding it, and the variable valueEnv, which the usage
// names too, gives the credential itself, off the command line. what names
// the credential in the usage: "RENTAPI_SECRET gives the secret itself".
func (f *envFlags) Secret(p *secretFlag, name, fileEnv, valueEnv, what, usage, note string) {
	p.env = valueEnv
	more := valueEnv + " gives the " + what + " itself"
	if note != "" {
		more += "; " + note
	}
	f.String(&p.file, name, fileEnv, "", usage, more)
}

// fail keeps the first bad variable's error for parse.
func (f *envFlags) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// secretFlag is a credential given by a file or, to keep it off disk and
// off the command line, by a variable holding the credential itself.
type secretFlag struct {
	// file is the flag's value: the file that holds the credential.
	file string
	// env is the variable that holds the credential itself; it wins over
	// the file.
	env string
}

// value is the credential: the variable's value, else the content of the
// file, each trimmed, else empty when neither is given.
func (s secretFlag) value(getenv func(string) string) (string, error) {
	if v := getenv(s.env); v != "" {
		return strings.TrimSpace(v), nil
	}
	if s.file == "" {
		return "", nil
	}
	b, err := os.ReadFile(s.file)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", s.file, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// onOff is a switch flag that takes on or off (or true or false), as the
// README writes them: --rate-limits off.
type onOff bool

// newOnOff defines an on/off flag whose default comes from the environment
// value env (empty for def); a value that is neither is an error.
func newOnOff(fs *flag.FlagSet, name, env string, def bool, usage string) (*onOff, error) {
	v := new(onOff)
	if err := v.define(fs, name, env, def, usage); err != nil {
		return nil, err
	}
	return v, nil
}

// define sets v to def, or to the environment value env when that is not
// empty, and defines it on fs; an env that is neither on nor off leaves
// def and is the error returned.
func (v *onOff) define(fs *flag.FlagSet, name, env string, def bool, usage string) error {
	*v = onOff(def)
	var err error
	if env != "" {
		if err = v.Set(env); err != nil {
			err = fmt.Errorf("%s from the environment: %w", name, err)
		}
	}
	fs.Var(v, name, usage) // after Set: the help's default is the environment's
	return err
}

func (v *onOff) String() string {
	if v != nil && *v {
		return "on"
	}
	return "off"
}

// Set takes on, off, true or false.
func (v *onOff) Set(s string) error {
	switch strings.ToLower(s) {
	case "on", "true":
		*v = true
	case "off", "false":
		*v = false
	default:
		return fmt.Errorf("%q is neither on nor off", s)
	}
	return nil
}
