package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/identity/identitytest"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/netpolicy/netpolicytest"
)

// siteName is the host name both Chromium and the fetcher reach the
// loopback server by: JA4 tells a ClientHello with a name (d) from one
// with an address (i).
const siteName = "distill.test"

// identityServer starts the measuring server and a fetcher that reaches
// it as siteName, with opts.
func identityServer(t *testing.T, opts ...Option) (*identitytest.Server, *Fetcher) {
	t.Helper()
	return identityServerOf(t, nil, opts...)
}

// identityServerOf is identityServer with a server that settles one of
// protos by ALPN (h2 or http/1.1 when nil).
func identityServerOf(t *testing.T, protos []string, opts ...Option) (*identitytest.Server, *Fetcher) {
	t.Helper()
	srv, err := identitytest.Start([]string{siteName}, protos...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	dns, err := netpolicytest.StartDNS(func(name string) []netip.Addr {
		switch name {
		case siteName:
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}
		case "private.test":
			return []netip.Addr{netip.MustParseAddr("10.0.0.1")}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dns.Close() })
	opts = append([]Option{WithResolver(dns.Resolver()), WithRootCAs(srv.Roots())}, opts...)
	return srv, newFetcher(t, opts...)
}

// captureOf waits for the capture of the first connection whose first
// request is for path.
func captureOf(t *testing.T, srv *identitytest.Server, path string) identitytest.Capture {
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

// fetchCapture fetches path of srv as siteName and returns what the
// server measured.
func fetchCapture(t *testing.T, srv *identitytest.Server, f *Fetcher, path string) identitytest.Capture {
	t.Helper()
	return fetchCaptureAt(t, srv, f, siteName, path)
}

// fetchCaptureAt is fetchCapture by host, a name or an address.
func fetchCaptureAt(t *testing.T, srv *identitytest.Server, f *Fetcher, host, path string) identitytest.Capture {
	t.Helper()
	u := fmt.Sprintf("https://%s%s", net.JoinHostPort(host, fmt.Sprint(srv.Addr().Port)), path)
	resp := mustGet(t, f, u, local())
	if string(resp.GetBody()) != identitytest.Page {
		t.Fatalf("fetch %s: body %q", u, resp.GetBody())
	}
	return captureOf(t, srv, path)
}

// The chrome profile is the Chromium installed here, as a loopback
// server measures them both: JA4 and what it leaves out of the
// ClientHello, the HTTP/2 preface (SETTINGS, WINDOW_UPDATE, PRIORITY) and
// pseudo-header order, and the request headers in order, over HTTP/2 and
// over HTTP/1.1, to a name and to an address (no server name then). The
// day Debian's chromium moves on, this fails.
func TestChromeProfileIsTheInstalledChromium(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ proto, host string }{{"h2", siteName}, {"http/1.1", siteName}, {"h2", "127.0.0.1"}} {
		t.Run(tc.proto+" to "+tc.host, func(t *testing.T) {
			srv, f := identityServerOf(t, []string{tc.proto}, WithProfile(identity.Chrome()))
			stop, err := identitytest.Chromium(t.Context(), srv, tc.host)
			if err != nil {
				t.Fatal(err)
			}
			browser := captureOf(t, srv, "/")
			stop()
			ours := fetchCaptureAt(t, srv, f, tc.host, "/profile")
			t.Logf("chromium:       JA4 %s, h2 %s", browser.JA4, browser.H2)
			t.Logf("chrome profile: JA4 %s, h2 %s", ours.JA4, ours.H2)
			sameAsChromium(t, tc.proto, ours, browser)
		})
	}
}

// sameAsChromium compares what the profile sent with what Chromium did.
func sameAsChromium(t *testing.T, proto string, ours, browser identitytest.Capture) {
	t.Helper()
	if browser.Proto != proto || ours.Proto != proto {
		t.Fatalf("protocols: chromium %s, profile %s; want %s for both", browser.Proto, ours.Proto, proto)
	}
	if ours.JA4 != browser.JA4 {
		t.Errorf("JA4: profile %s, chromium %s", ours.JA4, browser.JA4)
	}
	if proto == "h2" && ours.H2.String() != browser.H2.String() {
		t.Errorf("HTTP/2 fingerprint: profile %s, chromium %s", ours.H2, browser.H2)
	}
	// What JA4 leaves out: the ALPN list past its first, the groups and
	// key shares, the signature algorithms' GREASE.
	grease := func(h *identitytest.Hello) int { return len(h.SigAlgs) - len(identitytest.NonGREASE(h.SigAlgs)) }
	for _, f := range []struct {
		name         string
		ours, theirs any
	}{
		{"ALPN", ours.Hello.ALPN, browser.Hello.ALPN},
		{"supported groups", ours.Hello.Groups, browser.Hello.Groups},
		{"key shares", ours.Hello.KeyShares, browser.Hello.KeyShares},
		{"signature algorithms", identitytest.NonGREASE(ours.Hello.SigAlgs), identitytest.NonGREASE(browser.Hello.SigAlgs)},
		{"GREASEd signature algorithms", grease(ours.Hello), grease(browser.Hello)},
	} {
		if fmt.Sprint(f.ours) != fmt.Sprint(f.theirs) {
			t.Errorf("%s: profile %v, chromium %v", f.name, f.ours, f.theirs)
		}
	}
	if got, want := comparable(ours.Headers), comparable(browser.Headers); !slices.Equal(got, want) {
		t.Errorf("headers:\nprofile  %q\nchromium %q", got, want)
	}
}

// comparable is a request's header fields as the comparison reads them:
// :authority and :path differ by design, and headless Chromium calls
// itself HeadlessChrome where the browser it stands for says Chrome.
func comparable(fields [][2]string) []string {
	var out []string
	for _, f := range fields {
		switch f[0] {
		case ":authority", ":path", "Host":
			out = append(out, f[0])
			continue
		case "user-agent", "User-Agent":
			f[1] = strings.Replace(f[1], "HeadlessChrome/", "Chrome/", 1)
		}
		out = append(out, f[0]+": "+f[1])
	}
	return out
}

// Without a profile, and with distill's, the fetcher is Go's client, as a
// net/http client with the fetcher's header bound measures (that bound is
// its SETTINGS_MAX_HEADER_LIST_SIZE), and says it is distill.
func TestDistillProfileIsGo(t *testing.T) {
	t.Parallel()
	srv, _ := identityServer(t)
	client := &http.Client{Transport: &http.Transport{ForceAttemptHTTP2: true, MaxResponseHeaderBytes: 1 << 20, TLSClientConfig: &tls.Config{RootCAs: srv.Roots(), ServerName: siteName}}}
	t.Cleanup(client.CloseIdleConnections)
	resp, err := client.Get(fmt.Sprintf("https://127.0.0.1:%d/go", srv.Addr().Port))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	gos := captureOf(t, srv, "/go")
	t.Logf("go net/http:    JA4 %s, h2 %s", gos.JA4, gos.H2)

	for _, opts := range [][]Option{nil, {WithProfile(identity.Distill())}} {
		srv, f := identityServer(t, opts...)
		got := fetchCapture(t, srv, f, "/distill")
		t.Logf("distill profile: JA4 %s, h2 %s", got.JA4, got.H2)
		if got.JA4 != gos.JA4 || got.H2.String() != gos.H2.String() {
			t.Errorf("distill profile: JA4 %s h2 %s; Go's are %s and %s", got.JA4, got.H2, gos.JA4, gos.H2)
		}
		if ua := header(got.Headers, "user-agent"); !strings.HasPrefix(ua, "distill/") {
			t.Errorf("distill profile User-Agent %q", ua)
		}
	}
}

func header(fields [][2]string, name string) string {
	for _, f := range fields {
		if f[0] == name {
			return f[1]
		}
	}
	return ""
}

// A browser's profile changes what is said on a connection, not which
// connections may be opened: the guarded dialer still refuses a private
// address, loopback without allow_local, and the process's own port.
func TestChromeProfileKeepsThePolicy(t *testing.T) {
	t.Parallel()
	own := netpolicy.NewOwn()
	srv, f := identityServer(t, WithProfile(identity.Chrome()))
	own.Add(srv.Addr(), "gRPC port")
	_, guarded := identityServer(t, WithProfile(identity.Chrome()), WithOwn(own))
	port := srv.Addr().Port

	_, err := get(t, f, fmt.Sprintf("https://private.test:%d/", port), local())
	wantFailure(t, err, failure.Blocked, "10.0.0.1 (private range 10.0.0.0/8)")
	_, err = get(t, f, fmt.Sprintf("https://%s:%d/", siteName, port), nil)
	wantFailure(t, err, failure.Blocked, "127.0.0.1 (loopback")
	_, err = get(t, guarded, fmt.Sprintf("https://%s:%d/", siteName, port), local())
	wantFailure(t, err, failure.Blocked, "distill's own gRPC port")
	select {
	case c := <-srv.Captures():
		t.Fatalf("server reached: %s %s", c.JA4, c.Path)
	default:
	}
}

// A paced call over a browser's profile still hears when its request
// was written, as the pacer needs: the profile's transport tells the
// fetcher's trace of the guarded connection it writes on.
func TestChromeProfileTellsThePacer(t *testing.T) {
	t.Parallel()
	srv, f := identityServer(t, WithProfile(identity.Chrome()))
	u := fmt.Sprintf("https://%s:%d/paced", siteName, srv.Addr().Port)
	for i := range 2 { // the second reuses the HTTP/2 connection
		var sent []time.Time
		_, err := f.FetchWith(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: u, Options: local()},
			PaceWith(func(_ context.Context, _ *url.URL) error { return nil }, func(_ *url.URL, at time.Time) { sent = append(sent, at) }))
		if err != nil {
			t.Fatal(err)
		}
		if len(sent) != 1 || sent[0].IsZero() {
			t.Fatalf("fetch %d: pacer told %v, want one write time", i, sent)
		}
	}
}

// Over the chrome profile's HTTP/1.1 the body reaches the fetcher as the
// server encoded it, and the fetcher decodes it (fhttp's own HTTP/1.1
// transport would have decoded gzip and dropped Content-Encoding behind
// its back), on one kept-alive connection for every fetch.
func TestChromeProfileOverHTTP1DecodesAsTheFetcher(t *testing.T) {
	t.Parallel()
	conns := map[string]bool{}
	var mu sync.Mutex
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(gzipped(t, page))
	})
	f := newFetcher(t, WithProfile(identity.Chrome()))
	for range 3 {
		if resp := mustGet(t, f, ts.URL+"/", local()); string(resp.GetBody()) != page {
			t.Fatalf("body %q", resp.GetBody())
		}
	}
	if len(conns) != 1 {
		t.Fatalf("%d connections for three fetches, want one kept alive", len(conns))
	}
}

// A redirect hop that carries the cookie the first answer set is the
// installed Chromium's too: the header fields of the second request, and
// where the cookie goes among them.
func TestChromeProfileRedirectHopIsChromium(t *testing.T) {
	t.Parallel()
	srv, f := identityServer(t, WithProfile(identity.Chrome()))
	stop, err := identitytest.ChromiumAt(t.Context(), srv, siteName, identitytest.RedirectPath)
	if err != nil {
		t.Fatal(err)
	}
	browser := captureOf(t, srv, identitytest.AgainPath)
	stop()
	u := fmt.Sprintf("https://%s:%d%s", siteName, srv.Addr().Port, identitytest.RedirectPath)
	resp, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: u, Options: local(), UseCookies: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.GetBody()) != identitytest.Page {
		t.Fatalf("body %q", resp.GetBody())
	}
	ours := captureOf(t, srv, identitytest.AgainPath)
	if header(ours.Headers, "cookie") != identitytest.Cookie || header(browser.Headers, "cookie") != identitytest.Cookie {
		t.Fatalf("cookie: profile %q, chromium %q", header(ours.Headers, "cookie"), header(browser.Headers, "cookie"))
	}
	if got, want := comparable(ours.Headers), comparable(browser.Headers); !slices.Equal(got, want) {
		t.Errorf("headers:\nprofile  %q\nchromium %q", got, want)
	}
}

// A second connection to a site resumes the TLS session of the first, as
// the installed Chromium's does: its ClientHello (pre_shared_key among its
// extensions, so JA4 counts 18) is Chromium's.
func TestChromeProfileResumesAsChromium(t *testing.T) {
	t.Parallel()
	srv, f := identityServer(t, WithProfile(identity.Chrome()))
	stop, err := identitytest.ChromiumAt(t.Context(), srv, siteName, identitytest.RedirectPath)
	if err != nil {
		t.Fatal(err)
	}
	first := captureOf(t, srv, identitytest.RedirectPath)
	browser := captureOf(t, srv, identitytest.AgainPath)
	stop()
	u := fmt.Sprintf("https://%s:%d%s", siteName, srv.Addr().Port, identitytest.RedirectPath)
	if _, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: u, Options: local(), UseCookies: true}); err != nil {
		t.Fatal(err)
	}
	ourFirst := captureOf(t, srv, identitytest.RedirectPath)
	ours := captureOf(t, srv, identitytest.AgainPath)
	t.Logf("chromium resuming:       JA4 %s (first connection %s)", browser.JA4, first.JA4)
	t.Logf("chrome profile resuming: JA4 %s (first connection %s)", ours.JA4, ourFirst.JA4)
	if browser.Conn == first.Conn || ours.Conn == ourFirst.Conn {
		t.Fatalf("the hop came on the first connection: chromium %d, profile %d", browser.Conn, ours.Conn)
	}
	if !slices.Contains(browser.Hello.Extensions, 41) {
		t.Fatalf("chromium did not resume: extensions %v", browser.Hello.Extensions)
	}
	sameAsChromium(t, "h2", ours, browser)
	if last := ours.Hello.Extensions[len(ours.Hello.Extensions)-1]; last != 41 {
		t.Errorf("pre_shared_key is not the last extension: %v", ours.Hello.Extensions)
	}
}
