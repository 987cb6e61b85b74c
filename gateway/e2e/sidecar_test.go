package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/internal/localcluster"
)

// bearer sends the MCP token with every request, as the agent next to the
// sidecar does.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// The MCP sidecar of deploy/k8s/examples: `distill mcp --http --cluster`
// serving an agent on loopback with distill's services elsewhere.
func TestMCPSidecarInClusterMode(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{})
	site := newPages(t, 0)
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const token = "sidecar-test-token"
	sidecar := &localcluster.Proc{
		Name: "distill",
		Args: []string{"mcp", "--allow-local", "--http", addr, "--cluster", "--nats", "nats://" + c.NATS.Addr,
			"--fetcher", c.Fetchers[0].Addr, "--extractor", c.Extractor.Addr, "--renderer", c.Renderer.Addr},
		Env: []string{"DISTILL_MCP_TOKEN=" + token, "DISTILL_SESSION_KEY=" + localcluster.SessionKey},
	}
	sidecar.SetBin(binDir(t))
	if err := sidecar.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sidecar.Signal(syscall.SIGTERM); err != nil {
			t.Error(err)
		}
		checkProc(t, sidecar)
	}()
	waitListening(t, addr)

	tr := &mcpsdk.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: &http.Client{Transport: bearer(token)}, MaxRetries: -1}
	cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "agent", Version: "test"}, nil).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "fetch_url", Arguments: map[string]any{"url": site.URL + "/p/3", "allow_local": true, "js": "off"}})
	if err != nil || res.IsError || !strings.Contains(text(res), "# Page 3") {
		t.Fatalf("fetch_url through the cluster: %v %s", err, text(res))
	}
	res, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "fetch_urls", Arguments: map[string]any{"urls": site.urls(5), "allow_local": "true", "js": "off"}})
	if err != nil || res.IsError {
		t.Fatalf("fetch_urls through the cluster: %v %s", err, text(res))
	}
	var items []struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(text(res)), &items); err != nil || len(items) != 5 {
		t.Fatalf("fetch_urls answered %q: %v", text(res), err)
	}
	res, err = cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "session_start", Arguments: map[string]any{"url": site.URL + "/login", "allow_local": true, "js": "off"}})
	if err != nil || res.IsError || !strings.Contains(text(res), `"session_id":"s_`) {
		t.Fatalf("session_start through the cluster: %v %s", err, text(res))
	}
	// The gateway sees the same session: it lives in NATS.
	var view struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal([]byte(text(res)), &view)
	closed, err := c.client(0).SessionClose(ctx, closeReq(view.SessionID))
	if err != nil || !closed.GetClosed() {
		t.Fatalf("the gateway does not see the sidecar's session %q: %v %v", view.SessionID, closed, err)
	}
}

func text(res *mcpsdk.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
