package envflag

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestEnvironmentIsTheDefaultAndFlagsWin(t *testing.T) {
	t.Setenv("T_ADDR", ":9000")
	t.Setenv("T_WORKERS", "12")
	t.Setenv("T_WAIT", "3s")
	t.Setenv("T_ON", "true")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := String(fs, "listen", "T_ADDR", ":7001", "listen address")
	workers := Int(fs, "workers", "T_WORKERS", 8, "workers")
	wait := Duration(fs, "ack-wait", "T_WAIT", time.Minute, "ack wait")
	on := Bool(fs, "on", "T_ON", false, "switch")
	other := String(fs, "other", "T_UNSET", "fallback", "unset")
	if err := fs.Parse([]string{"-workers", "3"}); err != nil {
		t.Fatal(err)
	}
	if *addr != ":9000" || *workers != 3 || *wait != 3*time.Second || !*on || *other != "fallback" {
		t.Fatalf("got %q %d %s %v %q", *addr, *workers, *wait, *on, *other)
	}
	if u := fs.Lookup("listen").Usage; !strings.Contains(u, "(env T_ADDR)") {
		t.Fatalf("usage %q does not name the variable", u)
	}
	if err := Check(); err != nil {
		t.Fatal(err)
	}
}

func TestUnreadableEnvironmentIsReported(t *testing.T) {
	t.Cleanup(func() { bad = nil })
	t.Setenv("T_BAD_INT", "many")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	Int(fs, "workers", "T_BAD_INT", 8, "workers")
	if err := Check(); err == nil || !strings.Contains(err.Error(), `T_BAD_INT="many": not an integer`) {
		t.Fatalf("Check = %v", err)
	}
}
