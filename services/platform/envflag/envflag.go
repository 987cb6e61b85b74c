// Package envflag defines command-line flags that fall back to environment
// variables, so every setting of a distill process can come from either: a
// flag for people, the environment for Kubernetes. A flag given on the
// command line wins.
package envflag

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"
)

// String defines a string flag whose default comes from env when set.
func String(fs *flag.FlagSet, name, env, def, usage string) *string {
	if v, ok := os.LookupEnv(env); ok {
		def = v
	}
	return fs.String(name, def, usage+" (env "+env+")")
}

// Int defines an int flag whose default comes from env when set. A value in
// env that is not an integer is reported by Check.
func Int(fs *flag.FlagSet, name, env string, def int, usage string) *int {
	p := fs.Int(name, def, usage+" (env "+env+")")
	if v, ok := os.LookupEnv(env); ok {
		if err := fs.Set(name, v); err != nil {
			bad = append(bad, fmt.Errorf("%s=%q: not an integer", env, v))
		}
		markDefault(fs, name)
	}
	return p
}

// Duration defines a duration flag whose default comes from env when set.
func Duration(fs *flag.FlagSet, name, env string, def time.Duration, usage string) *time.Duration {
	p := fs.Duration(name, def, usage+" (env "+env+")")
	if v, ok := os.LookupEnv(env); ok {
		if err := fs.Set(name, v); err != nil {
			bad = append(bad, fmt.Errorf("%s=%q: not a duration such as 30s", env, v))
		}
		markDefault(fs, name)
	}
	return p
}

// Bool defines a bool flag whose default comes from env when set.
func Bool(fs *flag.FlagSet, name, env string, def bool, usage string) *bool {
	if v, ok := os.LookupEnv(env); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad = append(bad, fmt.Errorf("%s=%q: not a boolean", env, v))
		} else {
			def = b
		}
	}
	return fs.Bool(name, def, usage+" (env "+env+")")
}

// bad collects environment values that could not be read.
var bad []error

// Check returns the first environment value that could not be read, for the
// process to refuse to start with.
func Check() error {
	if len(bad) > 0 {
		return bad[0]
	}
	return nil
}

// markDefault makes the value taken from the environment the flag's shown
// default.
func markDefault(fs *flag.FlagSet, name string) {
	if f := fs.Lookup(name); f != nil {
		f.DefValue = f.Value.String()
	}
}
