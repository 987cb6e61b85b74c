package cli

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/identity/identitytest"
)

// identityServer starts the loopback TLS server that measures each
// connection's ClientHello, trusted by the in-process fetcher for the
// test's runs.
func identityServer(t *testing.T) *identitytest.Server {
	t.Helper()
	srv, err := identitytest.Start([]string{"distill.test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	// As a user with a private CA would: the standard variable.
	file := filepath.Join(t.TempDir(), "roots.pem")
	if err := os.WriteFile(file, srv.CertPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(string(certFile), file)
	return srv
}

// capturedAt waits for the server's capture of a request for path.
func capturedAt(t *testing.T, srv *identitytest.Server, path string) identitytest.Capture {
	t.Helper()
	for {
		c, err := srv.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if c.Path == path {
			return c
		}
	}
}

// profileJA4 is the JA4 the fetch package's profile p presents to srv at
// its address: the chrome profile's is the installed Chromium's, as the
// fetch package's identity tests measure.
func profileJA4(t *testing.T, srv *identitytest.Server, p *identity.Profile, path string) string {
	t.Helper()
	f := fetch.New(slog.New(slog.DiscardHandler), fetch.WithProfile(p), fetch.WithRootCAs(srv.Roots()), fetch.WithAllowLocal(true))
	defer f.Close()
	u := fmt.Sprintf("https://127.0.0.1:%d%s", srv.Addr().Port, path)
	if _, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: u, Options: &distillv1.FetchOptions{AllowLocal: true}}); err != nil {
		t.Fatal(err)
	}
	return capturedAt(t, srv, path).JA4
}

// distill fetch --browser chrome presents the chrome profile's JA4 and
// User-Agent; --browser distill, and no --browser, Go's and distill's.
// distill crawl and distill map --browser chrome read robots.txt and the
// page as chrome.
func TestFetchBrowserPresentsItsIdentity(t *testing.T) {
	srv := identityServer(t)
	chromeJA4 := profileJA4(t, srv, identity.Chrome(), "/ref-chrome")
	goJA4 := profileJA4(t, srv, identity.Distill(), "/ref-distill")
	t.Logf("chrome profile JA4 %s, Go's %s", chromeJA4, goJA4)
	if chromeJA4 == goJA4 {
		t.Fatalf("the chrome profile and Go present one JA4, %s", chromeJA4)
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", srv.Addr().Port)
	for _, tc := range []struct {
		args          []string
		path, ja4, ua string
	}{
		{[]string{"fetch", "--browser", "chrome"}, "/chrome", chromeJA4, "Chrome/"},
		{[]string{"fetch", "--browser=distill"}, "/distill", goJA4, "distill/"},
		{[]string{"fetch"}, "/default", goJA4, "distill/"},
		{[]string{"crawl", "--depth", "0", "--browser", "chrome"}, "/crawl", chromeJA4, "Chrome/"},
		{[]string{"map", "--map-pages", "1", "--browser", "chrome"}, "/map", chromeJA4, "Chrome/"},
		{[]string{"map", "--map-pages", "1"}, "/map-default", goJA4, "distill/"},
	} {
		args := append(tc.args, "--allow-local", base+tc.path)
		if _, errOut, code := run(t, args...); code != ExitOK {
			t.Fatalf("distill %s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		var seen []identitytest.Capture
		if tc.args[0] != "fetch" {
			seen = append(seen, capturedAt(t, srv, "/robots.txt"))
		}
		seen = append(seen, capturedAt(t, srv, tc.path))
		for _, c := range seen {
			ua := header(c.Headers, "user-agent")
			if c.Seq == 0 && c.JA4 != tc.ja4 || !strings.Contains(ua, tc.ua) {
				t.Errorf("distill %s: %s came with JA4 %s and User-Agent %q; want %s and %s", strings.Join(tc.args, " "), c.Path, c.JA4, ua, tc.ja4, tc.ua)
			}
		}
	}
}

func header(fields [][2]string, name string) string {
	for _, f := range fields {
		if strings.EqualFold(f[0], name) {
			return f[1]
		}
	}
	return ""
}

// A profile no one has is the command line's mistake, named with the
// profiles there are, before anything is fetched.
func TestBrowserUsageError(t *testing.T) {
	for _, cmd := range []string{"fetch", "crawl", "map"} {
		out, errOut, code := run(t, cmd, "--browser", "netscape", "http://127.0.0.1:1/")
		if code != ExitUsage || out != "" || !strings.Contains(errOut, `invalid argument "netscape" for "--browser" flag: must be one of distill, chrome`) {
			t.Errorf("distill %s --browser netscape: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
}
