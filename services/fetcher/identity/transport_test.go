package identity_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/identity/identitytest"
)

const site = "distill.test"

// loopback dials srv whatever the name, as a resolver mapping site to
// it would.
func loopback(srv *identitytest.Server) identity.DialFunc {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, srv.Addr().String())
	}
}

func start(t *testing.T, protos ...string) *identitytest.Server {
	t.Helper()
	srv, err := identitytest.Start([]string{site}, protos...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, c *http.Client, u string, p *identity.Profile) error {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.SetHeaders(req.Header)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || string(body) != identitytest.Page {
		return fmt.Errorf("%s: %s %q", u, resp.Status, body)
	}
	return nil
}

// A server that settles HTTP/1.1 is spoken to over HTTP/1.1 with the
// same ClientHello and the profile's header order, on one connection for
// both requests.
func TestChromeOverHTTP1(t *testing.T) {
	t.Parallel()
	srv := start(t, "http/1.1")
	p := identity.Chrome()
	tr := p.Transport(identity.Config{Dial: loopback(srv), RootCAs: srv.Roots()})
	c := &http.Client{Transport: tr}
	t.Cleanup(c.CloseIdleConnections)
	u := fmt.Sprintf("https://%s:%d/", site, srv.Addr().Port)
	for range 2 {
		if err := get(t, c, u, p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := srv.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chrome profile over HTTP/1.1: JA4 %s", got.JA4)
	if got.Proto != "http/1.1" || got.H2 != nil {
		t.Fatalf("protocol %s", got.Proto)
	}
	var names []string
	for _, h := range got.Headers {
		names = append(names, h[0])
	}
	// As Chromium 156 writes them over HTTP/1.1 (the fetcher's tests
	// compare with the browser itself).
	want := []string{"Host", "Connection", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform",
		"Upgrade-Insecure-Requests", "User-Agent", "Accept", "Sec-Fetch-Site", "Sec-Fetch-Mode",
		"Sec-Fetch-User", "Sec-Fetch-Dest", "Accept-Encoding", "Accept-Language"}
	if !slices.Equal(names, want) {
		t.Fatalf("header order %q, want %q", names, want)
	}
	if again, err := srv.Next(t.Context()); err != nil || again.Conn != got.Conn || again.Seq != 1 {
		t.Fatalf("second request: connection %d request %d (%v), want the first's (%d) kept alive", again.Conn, again.Seq, err, got.Conn)
	}
}

// A certificate the roots do not vouch for fails as crypto/tls's
// verification error, which the fetcher does not retry.
func TestChromeCertificateError(t *testing.T) {
	t.Parallel()
	srv := start(t)
	p := identity.Chrome()
	c := &http.Client{Transport: p.Transport(identity.Config{Dial: loopback(srv)})}
	err := get(t, c, fmt.Sprintf("https://%s:%d/", site, srv.Addr().Port), p)
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); !ok {
		t.Fatalf("error %T %v, want a *tls.CertificateVerificationError", err, err)
	}
}

// Only a browser's profile has a transport of its own; the names pick
// the profiles, and no other.
func TestProfiles(t *testing.T) {
	t.Parallel()
	if identity.Distill().Transport(identity.Config{}) != nil || identity.Distill().Browser() {
		t.Fatal("distill's profile has a transport of its own")
	}
	for name, want := range map[string]string{"": "distill", "distill": "distill", "Chrome": "chrome"} {
		p, err := identity.Named(name)
		if err != nil || p.Name() != want {
			t.Fatalf("Named(%q) = %v, %v; want %s", name, p, err, want)
		}
	}
	if _, err := identity.Named("netscape"); err == nil {
		t.Fatal("Named(netscape) found a profile")
	}
	ua, ch := identity.Chrome().UserAgent(), ""
	for _, h := range identity.Chrome().Headers() {
		if h[0] == "sec-ch-ua" {
			ch = h[1]
		}
	}
	if want := "Chrome/" + identity.ChromeMajor + ".0.0.0"; !contains(ua, want) || !contains(ch, `v="`+identity.ChromeMajor+`"`) || !contains(ua, "X11; Linux x86_64") {
		t.Fatalf("User-Agent %q and sec-ch-ua %q disagree on Chrome %s on Linux", ua, ch, identity.ChromeMajor)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// To an address, as Chromium does, the profile sends no server name: JA4
// says i, and counts one extension fewer.
func TestChromeToAnAddress(t *testing.T) {
	t.Parallel()
	srv := start(t)
	p := identity.Chrome()
	c := &http.Client{Transport: p.Transport(identity.Config{Dial: loopback(srv), RootCAs: srv.Roots()})}
	t.Cleanup(c.CloseIdleConnections)
	if err := get(t, c, fmt.Sprintf("https://127.0.0.1:%d/", srv.Addr().Port), p); err != nil {
		t.Fatal(err)
	}
	got, err := srv.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chrome profile to an address: JA4 %s", got.JA4)
	if got.Hello.SNI != "" || !strings.HasPrefix(got.JA4, "t13i1516h2_") {
		t.Fatalf("JA4 %s, server name %q", got.JA4, got.Hello.SNI)
	}
}

// The profile advertises Chromium's stream window (6 MiB): a server may
// send that much before the body is read at all, and the transport takes
// it (fhttp before v0.6.9 counted 4 MiB and failed the connection with
// FLOW_CONTROL_ERROR).
func TestChromeTakesTheWindowItAdvertises(t *testing.T) {
	t.Parallel()
	const window = 6291456
	written := make(chan struct{})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(written)
		_, _ = w.Write(bytes.Repeat([]byte("x"), window))
		w.(http.Flusher).Flush()
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	roots := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	tr := identity.Chrome().Transport(identity.Config{RootCAs: roots, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, ts.Listener.Addr().String())
	}})
	t.Cleanup(tr.CloseIdleConnections)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://example.com/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	<-written
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != window || resp.Proto != "HTTP/2.0" {
		t.Fatalf("%s: read %d bytes of %d: %v", resp.Proto, n, window, err)
	}
}

// Requests in flight together share one HTTP/2 connection, as a
// browser's do: those that find none wait for the one being dialled.
func TestChromeOneConnectionPerSite(t *testing.T) {
	t.Parallel()
	srv := start(t)
	p := identity.Chrome()
	c := &http.Client{Transport: p.Transport(identity.Config{Dial: loopback(srv), RootCAs: srv.Roots()})}
	t.Cleanup(c.CloseIdleConnections)
	u := fmt.Sprintf("https://%s:%d/", site, srv.Addr().Port)
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() { errs <- get(t, c, u, p) }()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		got, err := srv.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got.Conn != 1 || got.Proto != "h2" {
			t.Fatalf("request %d came on connection %d (%s), want all on the first over h2", i, got.Conn, got.Proto)
		}
	}
}
