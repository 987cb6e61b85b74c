package mcp

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/internal/localcluster"
	"distill.dev/proto/failure"
)

// stdioClient runs `distill mcp` with flags over stdio under the Go SDK's
// client.
func stdioClient(t *testing.T, flags ...string) *mcpsdk.ClientSession {
	t.Helper()
	cmd := exec.Command(distillBinary(t), append([]string{"--cache-dir", t.TempDir(), "mcp"}, flags...)...)
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(), &mcpsdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to distill mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// allow_local is the operator's: distill mcp, over stdio and over HTTP,
// refuses a call that asks for it unless it was started with
// --allow-local, with a tool error the model can act on.
func TestMCPHonoursAllowLocalOnlyWithTheFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the distill binary")
	}
	t.Parallel()
	var hits atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<!doctype html><title>Local</title><p>A page on loopback.</p>")
	}))
	defer site.Close()
	check := func(t *testing.T, cs *mcpsdk.ClientSession) {
		for tool, args := range map[string]map[string]any{
			"fetch_url":     {"url": site.URL, "allow_local": true},
			"observe_url":   {"url": site.URL, "allow_local": true},
			"fetch_urls":    {"urls": []string{site.URL}, "allow_local": true},
			"session_start": {"url": site.URL, "allow_local": true},
			"map":           {"url": site.URL, "allow_local": true},
		} {
			msg := callError(t, cs, tool, args)
			if !strings.Contains(msg, failure.AllowLocalMessage) || !strings.Contains(msg, "Call "+tool+" again without allow_local") {
				t.Errorf("%s: %q, want %q and what to do about it", tool, msg, failure.AllowLocalMessage)
			}
		}
	}
	t.Run("stdio", func(t *testing.T) {
		check(t, stdioClient(t))
		if text := callOK(t, stdioClient(t, "--allow-local"), "fetch_url", map[string]any{"url": site.URL, "allow_local": true}); !strings.Contains(text, "A page on loopback") {
			t.Errorf("with --allow-local: %q", text)
		}
	})
	t.Run("http", func(t *testing.T) {
		const token = "operator-test-token"
		endpoint, stop := startHTTP(t, token)
		check(t, httpClient(t, endpoint, token))
		stop()
	})
	if n := hits.Load(); n != 1 {
		t.Errorf("the page was requested %d times, want once (with --allow-local)", n)
	}
}

// Even with --allow-local, distill mcp never fetches nor renders its own
// ports: the MCP endpoint it serves and its metrics.
func TestMCPNeverReachesItsOwnPorts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the distill binary")
	}
	t.Parallel()
	metrics, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const token = "operator-test-token"
	endpoint, stop := startHTTP(t, token, "--allow-local", "--metrics-listen", metrics)
	defer stop()
	cs := httpClient(t, endpoint, token)
	for url, want := range map[string]string{
		endpoint:                         "distill's own MCP HTTP port",
		"http://" + metrics + "/metrics": "distill's own metrics port",
	} {
		for _, js := range []string{"off", "always"} {
			msg := callError(t, cs, "fetch_url", map[string]any{"url": url, "allow_local": true, "js": js})
			if !strings.Contains(msg, want) || !strings.Contains(msg, "distill never connects to its own ports") {
				t.Errorf("%s with js=%s: %q, want a refusal naming %s", url, js, msg, want)
			}
		}
	}
}

// --no-auth on an address other machines reach takes the loud flag, and
// then serves; the Host check still applies.
func TestMCPHTTPNoAuthOnEveryAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the distill binary")
	}
	t.Parallel()
	endpoint, stop := startHTTP(t, "", "--no-auth", "--allow-unauthenticated-remote", "--http", "0.0.0.0:0")
	defer stop()
	// The endpoint names the unspecified address; a client dials this
	// machine by loopback.
	_, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), Path))
	if err != nil {
		t.Fatal(err)
	}
	local := "http://127.0.0.1:" + port + Path
	if _, err := httpClient(t, local, "").ListTools(t.Context(), nil); err != nil {
		t.Fatalf("no-auth on every address: %v", err)
	}
	if res := post(t, local, "attacker.example:"+port, ""); res.StatusCode != http.StatusForbidden {
		t.Errorf("Host attacker.example: status %d, want 403", res.StatusCode)
	}
}
