package fetch

import (
	"fmt"
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/identity/identitytest"
)

// as is local() naming a browser profile.
func as(browser string) *distillv1.FetchOptions {
	o := local()
	o.Browser = browser
	return o
}

// fetchAs fetches path of srv as siteName with options o and returns what
// the server measured of the connection it opened.
func fetchAs(t *testing.T, srv *identitytest.Server, f *Fetcher, path string, o *distillv1.FetchOptions) identitytest.Capture {
	t.Helper()
	u := fmt.Sprintf("https://%s:%d%s", siteName, srv.Addr().Port, path)
	if resp := mustGet(t, f, u, o); string(resp.GetBody()) != identitytest.Page {
		t.Fatalf("fetch %s: body %q", u, resp.GetBody())
	}
	return captureOf(t, srv, path)
}

// Each call presents the profile its options name, whatever the
// fetcher's default, and each profile keeps connections of its own: a
// second chrome call reuses the first's connection, a distill call
// between them opens another.
func TestCallPresentsTheProfileItNames(t *testing.T) {
	t.Parallel()
	srv, f := identityServer(t)
	chromeDefault := newFetcher(t, WithResolver(f.resolver), WithRootCAs(srv.Roots()), WithProfile(identity.Chrome()))
	want := fetchAs(t, srv, chromeDefault, "/chrome-default", local())

	chrome := fetchAs(t, srv, f, "/chrome", as("chrome"))
	distill := fetchAs(t, srv, f, "/distill", as(""))
	again := fetchAs(t, srv, f, "/chrome-again", as("chrome"))
	named := fetchAs(t, srv, f, "/named-distill", as("distill"))
	t.Logf("chrome JA4 %s, distill JA4 %s", chrome.JA4, distill.JA4)
	if chrome.JA4 != want.JA4 || chrome.H2.String() != want.H2.String() {
		t.Errorf("browser chrome: JA4 %s h2 %s; the chrome profile's are %s and %s", chrome.JA4, chrome.H2, want.JA4, want.H2)
	}
	for _, c := range []identitytest.Capture{chrome, again} {
		if ua := header(c.Headers, "user-agent"); !strings.Contains(ua, "Chrome/") {
			t.Errorf("%s: User-Agent %q", c.Path, ua)
		}
	}
	for _, c := range []identitytest.Capture{distill, named} {
		if c.JA4 == chrome.JA4 || !strings.HasPrefix(header(c.Headers, "user-agent"), "distill/") {
			t.Errorf("%s: JA4 %s User-Agent %q, want Go's and distill's", c.Path, c.JA4, header(c.Headers, "user-agent"))
		}
	}
	if again.Conn != chrome.Conn || named.Conn != distill.Conn || distill.Conn == chrome.Conn {
		t.Errorf("connections: chrome %d then %d, distill %d then %d; want each profile's reused and the two apart",
			chrome.Conn, again.Conn, distill.Conn, named.Conn)
	}
	// The chrome default gives way to a call that asks for distill.
	if c := fetchAs(t, srv, chromeDefault, "/asked-distill", as("distill")); c.JA4 != distill.JA4 {
		t.Errorf("browser distill on a chrome fetcher: JA4 %s, want Go's %s", c.JA4, distill.JA4)
	}
}

// A name no profile has is the caller's mistake, told in one line that
// names the profiles there are, before anything is sent.
func TestUnknownBrowserIsInvalidArgument(t *testing.T) {
	t.Parallel()
	f := newFetcher(t)
	_, err := get(t, f, "http://127.0.0.1:1/", as("netscape"))
	wantFailure(t, err, distillv1.ErrorCode_ERROR_CODE_INVALID_ARGUMENT, `--browser: no browser profile "netscape": one of distill, chrome`)
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("message is not one line: %q", err)
	}
}

// A redirect hop, and robots.txt, go out under the call's profile: the
// site sees one client.
func TestCallProfileKeepsToHopsAndRobots(t *testing.T) {
	t.Parallel()
	srv, f := identityServer(t)
	u := fmt.Sprintf("https://%s:%d%s", siteName, srv.Addr().Port, identitytest.RedirectPath)
	o := as("chrome")
	o.RespectRobots = true
	if _, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: u, Options: o}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/robots.txt", identitytest.AgainPath} {
		c := captureOf(t, srv, path)
		if ua := header(c.Headers, "user-agent"); !strings.Contains(ua, "Chrome/") {
			t.Errorf("%s: User-Agent %q, JA4 %s; want the chrome profile's", path, ua, c.JA4)
		}
	}
}

// The profile is part of the cache key: an answer fetched under one
// identity is not served to a call under another, and is to a call under
// the same.
func TestCacheKeepsProfilesApart(t *testing.T) {
	t.Parallel()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, f := identityServer(t, WithCache(c))
	u := fmt.Sprintf("https://%s:%d/cached", siteName, srv.Addr().Port)
	for i, step := range []struct {
		browser   string
		fromCache bool
	}{{"chrome", false}, {"", false}, {"distill", true}, {"chrome", true}, {"CHROME", true}} {
		resp := mustGet(t, f, u, as(step.browser))
		if resp.GetFromCache() != step.fromCache {
			t.Errorf("fetch %d, browser %q: from cache %t, want %t", i, step.browser, resp.GetFromCache(), step.fromCache)
		}
	}
}
