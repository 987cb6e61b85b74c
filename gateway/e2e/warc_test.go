package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In cluster mode the fetcher services make the HTTP exchanges, so --warc
// with --server is refused before anything is asked of the gateway: no
// file is made and the site sees no request.
func TestWARCRefusedThroughAClusterGateway(t *testing.T) {
	t.Parallel()
	c := startInProcess(t, inProcessOpts{})
	site := newMapSite(t)
	path := filepath.Join(t.TempDir(), "cluster.warc")
	for _, args := range [][]string{
		{"map", "--server", c.Gateways[0].Addr, "--allow-local", "--warc", path, site.URL + "/"},
		{"fetch", "--server", c.Gateways[0].Addr, "--allow-local", "--warc", path, site.URL + "/about"},
	} {
		_, errOut, code := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, "--warc cannot be used with --server") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and the refusal", args[0], code, errOut)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run made %s", path)
	}
	for _, p := range []string{"/", "/about", "/robots.txt"} {
		if n := site.hitsOf(p); n != 0 {
			t.Errorf("%s was requested %d times", p, n)
		}
	}
}
