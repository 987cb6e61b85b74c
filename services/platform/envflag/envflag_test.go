package envflag

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func env(vars map[string]string) *Env {
	return New(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
}

func TestEnvironmentIsTheDefaultAndFlagsWin(t *testing.T) {
	e := env(map[string]string{"T_ADDR": ":9000", "T_WORKERS": "12", "T_WAIT": "3s", "T_ON": "true"})
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("listen", e.String("T_ADDR", ":7001"), Usage("listen address", "T_ADDR"))
	workers := fs.Int("workers", e.Int("T_WORKERS", 8), Usage("workers", "T_WORKERS"))
	wait := fs.Duration("ack-wait", e.Duration("T_WAIT", time.Minute), Usage("ack wait", "T_WAIT"))
	on := fs.Bool("on", e.Bool("T_ON", false), Usage("switch", "T_ON"))
	other := fs.String("other", e.String("T_UNSET", "fallback"), Usage("unset", "T_UNSET"))
	if err := fs.Parse([]string{"-workers", "3"}); err != nil {
		t.Fatal(err)
	}
	if *addr != ":9000" || *workers != 3 || *wait != 3*time.Second || !*on || *other != "fallback" {
		t.Fatalf("got %q %d %s %v %q", *addr, *workers, *wait, *on, *other)
	}
	if f := fs.Lookup("listen"); !strings.Contains(f.Usage, "(env T_ADDR)") || f.DefValue != ":9000" {
		t.Fatalf("usage %q, default %q: want the variable named and its value shown", f.Usage, f.DefValue)
	}
	if f := fs.Lookup("workers"); f.DefValue != "12" {
		t.Fatalf("workers shows default %q, want the environment's 12", f.DefValue)
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
}

// The distill command's flags are pflag's: the same values serve them.
func TestPflag(t *testing.T) {
	e := env(map[string]string{"T_REPLICAS": "3"})
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	replicas := fs.Int("stream-replicas", e.Int("T_REPLICAS", 1), Usage("replicas", "T_REPLICAS"))
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if *replicas != 3 || fs.Lookup("stream-replicas").DefValue != "3" {
		t.Fatalf("replicas %d, shown default %q", *replicas, fs.Lookup("stream-replicas").DefValue)
	}
}

func TestUnreadableEnvironmentIsReported(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
		read              func(*Env)
	}{
		{"int", "many", `T_V="many": not an integer`, func(e *Env) { e.Int("T_V", 8) }},
		{"duration", "soon", `T_V="soon": not a duration such as 30s`, func(e *Env) { e.Duration("T_V", time.Second) }},
		{"bool", "perhaps", `T_V="perhaps": not a boolean`, func(e *Env) { e.Bool("T_V", false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env(map[string]string{"T_V": tc.value})
			tc.read(e)
			if err := e.Err(); err == nil || err.Error() != tc.want {
				t.Fatalf("Err = %v, want %s", err, tc.want)
			}
			// Each reader has its own errors: another is not spoilt.
			if err := env(nil).Err(); err != nil {
				t.Fatalf("a fresh Env reports %v", err)
			}
		})
	}
}
