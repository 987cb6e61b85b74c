// Package envflag lets every setting of a distill process come from a flag
// or from the environment: a flag for people, the environment for
// Kubernetes. A variable gives a flag its default, so a flag given on the
// command line wins, and --help shows the value the environment set. The
// same values serve the standard flag package (the service processes) and
// pflag (the distill command).
//
// Only mains read the environment; they pass what they read on as
// constructor options. Every variable distill reads is a Var declared in
// names.go.
package envflag

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// Var is the name of an environment variable distill reads.
type Var string

// Env reads variables for flag defaults and remembers the values it could
// not read, for the process to refuse to start with.
type Env struct {
	lookup func(string) (string, bool)
	errs   []error
}

// FromOS reads the process's environment.
func FromOS() *Env { return New(os.LookupEnv) }

// New reads variables through lookup (a map's in tests).
func New(lookup func(string) (string, bool)) *Env { return &Env{lookup: lookup} }

// Lookup returns v's value and whether it is set.
func (e *Env) Lookup(v Var) (string, bool) { return e.lookup(string(v)) }

// String returns v's value, or def when v is unset.
func (e *Env) String(v Var, def string) string {
	if s, ok := e.Lookup(v); ok {
		return s
	}
	return def
}

// Int returns v's value as an integer, or def when v is unset or not an
// integer (then Err reports it).
func (e *Env) Int(v Var, def int) int {
	s, ok := e.Lookup(v)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return bad(e, v, s, "an integer", def)
	}
	return n
}

// Duration returns v's value as a duration such as 30s, or def when v is
// unset or unreadable (then Err reports it).
func (e *Env) Duration(v Var, def time.Duration) time.Duration {
	s, ok := e.Lookup(v)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return bad(e, v, s, "a duration such as 30s", def)
	}
	return d
}

// Bool returns v's value as a boolean (1, true, 0, false...), or def when v
// is unset or unreadable (then Err reports it).
func (e *Env) Bool(v Var, def bool) bool {
	s, ok := e.Lookup(v)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return bad(e, v, s, "a boolean", def)
	}
	return b
}

func bad[T any](e *Env, v Var, s, want string, def T) T {
	e.errs = append(e.errs, fmt.Errorf("%s=%q: not %s", v, s, want))
	return def
}

// Err returns the first variable that could not be read, naming it and its
// value.
func (e *Env) Err() error {
	if len(e.errs) > 0 {
		return e.errs[0]
	}
	return nil
}

// Usage is a flag's help naming the variable behind it.
func Usage(usage string, v Var) string { return usage + " (env " + string(v) + ")" }
