package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveHTTP serves MCP on a loopback port until the test ends, and
// returns the endpoint and a stop function that waits for Serve to return.
func serveHTTP(t *testing.T, token string) (endpoint string, stop func() error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(quiet, newService(t), "test").Serve(ctx, lis, token) }()
	stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { stop() })
	return "http://" + lis.Addr().String() + Path, stop
}

// bearerTransport sends a bearer token with every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// httpClient connects the SDK's streamable HTTP client, with token when
// given.
func httpClient(t *testing.T, endpoint, token string) *mcpsdk.ClientSession {
	t.Helper()
	tr := &mcpsdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearerTransport{token}}
	}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "test"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// post sends an initialize request by hand, with host as the Host header
// when set and auth as the Authorization header when set.
func post(t *testing.T, endpoint, host, auth string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if host != "" {
		req.Host = host
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func TestHTTPChecksHostThenToken(t *testing.T) {
	endpoint, _ := serveHTTP(t, "s3cret")
	port := endpoint[strings.LastIndex(endpoint, ":")+1 : strings.LastIndex(endpoint, "/")]
	tests := []struct {
		name, host, auth string
		want             int
	}{
		{name: "no token", want: http.StatusUnauthorized},
		{name: "wrong token", auth: "Bearer guess", want: http.StatusUnauthorized},
		{name: "token under another scheme", auth: "Basic s3cret", want: http.StatusUnauthorized},
		{name: "another host", host: "attacker.example:" + port, auth: "Bearer s3cret", want: http.StatusForbidden},
		{name: "another host without a token", host: "attacker.example", want: http.StatusForbidden},
		{name: "localhost by name", host: "localhost:" + port, auth: "Bearer s3cret", want: http.StatusOK},
		{name: "right token", auth: "bearer s3cret", want: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := post(t, endpoint, tt.host, tt.auth)
			if res.StatusCode != tt.want {
				t.Errorf("status %d, want %d", res.StatusCode, tt.want)
			}
			if tt.want == http.StatusUnauthorized && !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", res.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestHTTPServesToolsAndStopsWithItsContext(t *testing.T) {
	endpoint, stop := serveHTTP(t, "s3cret")
	cs := httpClient(t, endpoint, "s3cret")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(plainTools()); len(res.Tools) != want {
		t.Errorf("%d tools over HTTP, want %d", len(res.Tools), want)
	}
	// The client holds its event stream open, and may hold a connection it
	// dialled but has not used yet (net/http's client does when another
	// frees up first): stopping ends both rather than waiting out the
	// grace period kept for tool calls in flight.
	unused, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), Path))
	if err != nil {
		t.Fatal(err)
	}
	defer unused.Close()
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Serve = %v after its context ended, want nil", err)
		}
	case <-time.After(GracePeriod / 2):
		t.Fatal("Serve is waiting on the client's open event stream or unused connection")
	}
	if _, err := cs.ListTools(context.Background(), nil); err == nil {
		t.Error("the server still answers after stopping")
	}
}

func TestHTTPWithoutAToken(t *testing.T) {
	endpoint, _ := serveHTTP(t, "")
	cs := httpClient(t, endpoint, "")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("no-auth server refused a client: %v", err)
	}
}

// addrListener is a listener that only names an address, for the Host
// check's tests.
type addrListener struct {
	net.Listener
	addr net.Addr
}

func (l addrListener) Addr() net.Addr { return l.addr }

func listenerAt(t *testing.T, addr, asked string) Listener {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return Listener{Listener: addrListener{addr: a}, Asked: asked}
}

// The Host check holds on every address the server was told to serve, not
// only loopback: a request must name one of them, by the name it was given
// or by address.
func TestHTTPHostCheckCoversEveryAddress(t *testing.T) {
	hostname, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		listeners []Listener
		allowed   []string
		refused   []string
	}{
		{
			name: "loopback and a named address",
			listeners: []Listener{
				listenerAt(t, "127.0.0.1:7010", "127.0.0.1:7010"),
				listenerAt(t, "192.0.2.10:7010", "mcp.internal.example:7010"),
			},
			allowed: []string{"127.0.0.1:7010", "localhost:7010", "[::1]:7010", "192.0.2.10:7010", "mcp.internal.example:7010", "MCP.Internal.Example.", "[::ffff:192.0.2.10]:7010"},
			refused: []string{"attacker.example:7010", "192.0.2.11:7010", "10.0.0.1", ""},
		},
		{
			name:      "one address other machines reach",
			listeners: []Listener{listenerAt(t, "192.0.2.10:7010", "192.0.2.10:7010")},
			allowed:   []string{"192.0.2.10:7010", "192.0.2.10"},
			refused:   []string{"localhost:7010", "127.0.0.1:7010", "attacker.example:7010"},
		},
		{
			name:      "every address",
			listeners: []Listener{listenerAt(t, "0.0.0.0:7010", ":7010")},
			allowed:   []string{"localhost:7010", "127.0.0.1:7010", hostname + ":7010"},
			refused:   []string{"attacker.example:7010", "192.0.2.99:7010"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(quiet, newService(t), "test").handler("", hostsOf(tt.listeners), context.Background())
			for _, host := range append(tt.allowed, tt.refused...) {
				req := httptest.NewRequest(http.MethodPost, Path, strings.NewReader(initialize))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Host = host
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if forbidden := rec.Code == http.StatusForbidden; forbidden != slices.Contains(tt.refused, host) {
					t.Errorf("Host %q: status %d", host, rec.Code)
				}
			}
		})
	}
}
