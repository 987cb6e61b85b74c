package render

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/netpolicy/netpolicytest"
)

// publicAddr stands in for a server on the internet: the tests' dialer
// sends connections for it to a loopback server, after the policy has
// judged it as the public address it is.
var publicAddr = netip.MustParseAddr("93.184.215.14")

// network is the tests' view of the internet: a DNS server on loopback, a
// dialer that maps publicAddr to loopback, and a record of every address
// dialled.
type network struct {
	dns *netpolicytest.DNS

	mu     sync.Mutex
	dialed []string
	// answers maps a name to its A answers, used in turn; the last repeats.
	answers map[string][]netip.Addr
	asked   map[string]int
	// others, when valid, answers every name answers does not know.
	others netip.Addr
	// queried counts the queries for every name, known or not.
	queried map[string]int
}

func newNetwork(t *testing.T) *network {
	t.Helper()
	n := &network{answers: map[string][]netip.Addr{}, asked: map[string]int{}, queried: map[string]int{}}
	dns, err := netpolicytest.StartDNS(n.answer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dns.Close() })
	n.dns = dns
	return n
}

// name makes host answer with addrs, one per query, the last one repeating.
func (n *network) name(host string, addrs ...string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range addrs {
		n.answers[host] = append(n.answers[host], netip.MustParseAddr(a))
	}
}

func (n *network) answer(host string) []netip.Addr {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.queried[host]++
	as, ok := n.answers[host]
	if !ok {
		if n.others.IsValid() {
			return []netip.Addr{n.others}
		}
		return nil
	}
	i := min(n.asked[host], len(as)-1)
	n.asked[host]++
	return []netip.Addr{as[i]}
}

func (n *network) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	n.mu.Lock()
	n.dialed = append(n.dialed, addr)
	n.mu.Unlock()
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("test dialer got %q, not ip:port", addr)
	}
	if ap.Addr() == publicAddr {
		addr = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), ap.Port()).String()
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// answerAll makes every name no other answer is set for answer addr.
func (n *network) answerAll(addr netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.others = addr
}

// names returns every name looked up, but for the ones listed.
func (n *network) namesBut(known ...string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for name := range n.queried {
		if !slices.Contains(known, name) {
			out = append(out, name)
		}
	}
	return out
}

// dialedBut returns the addresses dialled but for the ones listed.
func (n *network) dialedBut(known ...string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, d := range n.dialed {
		if !slices.Contains(known, d) {
			out = append(out, d)
		}
	}
	return out
}

// dialedOutside returns the addresses dialled that are neither publicAddr
// nor, when loopback is allowed, loopback.
func (n *network) dialedOutside(loopback bool) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, d := range n.dialed {
		ap := netip.MustParseAddrPort(d)
		if ap.Addr() == publicAddr || (loopback && ap.Addr().IsLoopback()) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func TestEgress(t *testing.T) {
	hits := map[string]int{}
	var mu sync.Mutex
	hitsOf := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		// What reaches the server is the browser's request, not a proxy's.
		if r.Header.Get("X-Forwarded-For") != "" || r.Header.Get("Proxy-Connection") != "" {
			http.Error(w, "proxy headers leaked", http.StatusTeapot)
			return
		}
		_, _ = io.WriteString(w, "hello "+r.URL.Path)
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	nw := newNetwork(t)
	nw.name("public.test", publicAddr.String())
	nw.name("private.test", "10.1.2.3")
	nw.name("rebind.test", publicAddr.String(), "127.0.0.1")

	start := func(t *testing.T, p netpolicy.Policy) (*egress, *http.Client) {
		t.Helper()
		e, err := startEgress(discard(), p, nw.dns.Resolver(), nw.dial)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.close)
		proxy, _ := url.Parse(e.proxyURL())
		return e, &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
	}
	// get returns 0 when the proxy closed the connection without an
	// answer, as it does for a refused plain HTTP request.
	get := func(t *testing.T, c *http.Client, u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	t.Run("a public name is forwarded", func(t *testing.T) {
		_, c := start(t, netpolicy.Policy{})
		code, body := get(t, c, fmt.Sprintf("http://public.test:%d/a", port))
		if code != 200 || body != "hello /a" {
			t.Fatalf("got %d %q", code, body)
		}
	})

	refusals := []struct {
		name, url, reason string
	}{
		{"loopback literal", fmt.Sprintf("http://127.0.0.1:%d/b", port), "loopback"},
		{"loopback in another spelling", fmt.Sprintf("http://2130706433:%d/b", port), "loopback"},
		{"localhost", fmt.Sprintf("http://localhost:%d/b", port), "loopback name"},
		{"name of a private address", "http://private.test/", "private range"},
		{"metadata endpoint", "http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"unique local IPv6", "http://[fd00::1]/", "fc00::/7"},
	}
	for _, tt := range refusals {
		t.Run("refuses "+tt.name, func(t *testing.T) {
			e, c := start(t, netpolicy.Policy{})
			if code, body := get(t, c, tt.url); code != 0 {
				t.Fatalf("got %d %q, want the connection closed unanswered", code, body)
			}
			if !errors.Is(e.refusal(), netpolicy.ErrBlocked) || !strings.Contains(e.refusal().Error(), tt.reason) {
				t.Fatalf("refusal = %v, want one naming %q", e.refusal(), tt.reason)
			}
			// The loopback refusals name the test server itself: a refusal
			// must not have reached it first.
			if n := hitsOf("/b"); n != 0 {
				t.Fatalf("the server got %d requests for a refused URL", n)
			}
		})
	}

	t.Run("a name that rebinds to loopback is refused at connect", func(t *testing.T) {
		_, c := start(t, netpolicy.Policy{})
		u := fmt.Sprintf("http://rebind.test:%d/c", port)
		if code, _ := get(t, c, u); code != 200 {
			t.Fatalf("first answer (public): %d", code)
		}
		// The transport keeps the first connection alive; a new client
		// makes the proxy dial again, and the name now says loopback.
		e, c := start(t, netpolicy.Policy{})
		if code, body := get(t, c, u); code != 0 {
			t.Fatalf("after rebinding: %d %q", code, body)
		}
		if r := e.refusal(); r == nil || !strings.Contains(r.Error(), "rebind.test is 127.0.0.1") {
			t.Fatalf("refusal = %v", r)
		}
		if n := hitsOf("/c"); n != 1 {
			t.Fatalf("the server got %d requests, want only the one before rebinding", n)
		}
	})

	t.Run("CONNECT tunnels to allowed hosts only", func(t *testing.T) {
		e, _ := start(t, netpolicy.Policy{})
		connect := func(target string) string {
			c, err := (&net.Dialer{}).Dial("tcp", strings.TrimPrefix(e.proxyURL(), "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
			br := bufio.NewReader(c)
			status, err := br.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(status, " 200 ") {
				return status
			}
			for line, _ := br.ReadString('\n'); line != "\r\n"; line, _ = br.ReadString('\n') {
			}
			fmt.Fprintf(c, "GET /tunnelled HTTP/1.1\r\nHost: public.test\r\nConnection: close\r\n\r\n")
			rest, _ := io.ReadAll(br)
			return status + string(rest)
		}
		if got := connect(fmt.Sprintf("public.test:%d", port)); !strings.Contains(got, "hello /tunnelled") {
			t.Fatalf("tunnel to a public name: %q", got)
		}
		if got := connect(fmt.Sprintf("127.0.0.1:%d", port)); !strings.Contains(got, " 403 ") {
			t.Fatalf("tunnel to loopback: %q", got)
		}
		if got := connect("10.0.0.1:443"); !strings.Contains(got, " 403 ") {
			t.Fatalf("tunnel to a private address: %q", got)
		}
		if n := hitsOf("/tunnelled"); n != 1 {
			t.Fatalf("the server got %d tunnelled requests, want 1", n)
		}
	})

	t.Run("allow_local frees loopback only", func(t *testing.T) {
		_, c := start(t, netpolicy.Policy{AllowLoopback: true})
		if code, _ := get(t, c, fmt.Sprintf("http://127.0.0.1:%d/d", port)); code != 200 {
			t.Fatalf("loopback with allow_local: %d", code)
		}
		if code, _ := get(t, c, "http://private.test/"); code != 0 {
			t.Fatalf("private with allow_local: %d", code)
		}
		if n := hitsOf("/d"); n != 1 {
			t.Fatalf("the server got %d requests under allow_local, want 1", n)
		}
	})

	t.Run("close cuts open tunnels", func(t *testing.T) {
		e, _ := start(t, netpolicy.Policy{})
		c, err := (&net.Dialer{}).Dial("tcp", strings.TrimPrefix(e.proxyURL(), "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		fmt.Fprintf(c, "CONNECT public.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", port)
		br := bufio.NewReader(c)
		if status, _ := br.ReadString('\n'); !strings.Contains(status, " 200 ") {
			t.Fatalf("CONNECT: %q", status)
		}
		e.close()
		// A tunnel left open would block the read until the deadline.
		if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(br)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the tunnel stayed open after close")
		}
		if err != nil {
			// A reset is as good as an EOF: the tunnel is gone.
			t.Logf("read after close: %v", err)
		}
	})

	if bad := nw.dialedOutside(true); len(bad) > 0 {
		t.Fatalf("dialled outside the allowed set: %v", bad)
	}
}
