package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A cluster on one machine needs no flags (make cluster-up): each process
// listens where the others look for it when their flags are absent, and
// only on loopback. The defaults are read from each binary's help, as a
// user sees them.
func TestDefaultAddressesAgree(t *testing.T) {
	t.Parallel()
	bin := binDir(t)
	help := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		// The defaults without any variable that would change them.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "DISTILL_") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	gateway := help("distill", "serve", "--help")
	fetcher := help("fetcher", "-h")
	extractor := help("extractor", "-h")
	renderer := help("renderer", "-h")

	agree := []struct {
		what          string
		listens, seen string
	}{
		{"gateway's listen", defaultOf(t, gateway, "listen"), "127.0.0.1:7000"},
		{"fetcher's listen / gateway's --fetcher", defaultOf(t, fetcher, "listen"), defaultOf(t, gateway, "fetcher")},
		{"extractor's listen / gateway's --extractor", defaultOf(t, extractor, "listen"), defaultOf(t, gateway, "extractor")},
		{"extractor's listen / fetcher's -extractor", defaultOf(t, extractor, "listen"), defaultOf(t, fetcher, "extractor")},
		{"renderer's listen / gateway's --renderer", defaultOf(t, renderer, "listen"), defaultOf(t, gateway, "renderer")},
		{"renderer's listen / fetcher's -renderer", defaultOf(t, renderer, "listen"), defaultOf(t, fetcher, "renderer")},
		{"gateway's --nats / fetcher's -nats", defaultOf(t, gateway, "nats"), defaultOf(t, fetcher, "nats")},
		{"NATS", defaultOf(t, fetcher, "nats"), "nats://127.0.0.1:4222"},
	}
	for _, a := range agree {
		if a.listens != a.seen {
			t.Errorf("%s: %q and %q differ", a.what, a.listens, a.seen)
		}
		if !strings.Contains(a.listens, "127.0.0.1:") {
			t.Errorf("%s: %q is not on loopback", a.what, a.listens)
		}
	}
}

// defaultOf is the default a help text gives for a flag: pflag's
// "--name string ... (default "x")" or flag's "-name string\n\t... (default "x")".
func defaultOf(t *testing.T, help, flag string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s+--?` + regexp.QuoteMeta(flag) + ` string[^\n]*(?:\n\s*\t[^\n]*)?\(default "([^"]*)"\)`)
	m := re.FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("no default for -%s in:\n%s", flag, help)
	}
	return m[1]
}
