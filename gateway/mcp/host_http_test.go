package mcp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/host"
)

const (
	hostOperatorToken = "operator-mcp-token-0123456789"
	hostTeamAToken    = "team-a-mcp-token-0123456789"
	hostTeamBToken    = "team-b-mcp-token-0123456789"
)

// hostPolicyFile writes a policy for the site at siteURL to a file:
// default may extract products, team-a reviews within two steps a run,
// team-b may browse only docs.example.com; more is added to default.
func hostPolicyFile(t *testing.T, path, siteURL, more string) {
	t.Helper()
	u, _ := url.Parse(siteURL)
	policy := fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_ports: [%[1]s]
    budget: {max_steps: 40}
    schemas:
      product: {type: object, properties: {name: {type: string}}, required: [name]}
%[2]s
  team-a:
    allowed_hosts: [127.0.0.1]
    allowed_ports: [%[1]s]
    budget: {max_steps: 2}
    schemas:
      review: {type: object, description: A reader's review, properties: {stars: {type: integer}}}
  team-b:
    allowed_hosts: [docs.example.com]
tokens:
  - {token_env: TEAM_A_TOKEN, actor: team-a}
  - {token_env: TEAM_B_TOKEN, actor: team-b}
`, u.Port(), more)
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
}

// hostHTTP serves host mode over HTTP on loopback under a policy file the
// test may rewrite and reload, with token as the operator's token;
// require serves the policy's tokens only.
func hostHTTP(t *testing.T, token string, require bool) (endpoint, siteURL, policyPath string, ps *host.Policies) {
	t.Helper()
	siteURL = hostSite(t)
	policyPath = filepath.Join(t.TempDir(), "policy.yaml")
	hostPolicyFile(t, policyPath, siteURL, "")
	env := map[string]string{"TEAM_A_TOKEN": hostTeamAToken, "TEAM_B_TOKEN": hostTeamBToken}
	ps, err := host.OpenPolicies(policyPath, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	engine, _, _ := hostEngine(t, ps)
	srv := NewHost(quiet, engine, ps, "", "test")
	if require {
		srv.RequireToken()
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis, token) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return "http://" + lis.Addr().String() + Path, siteURL, policyPath, ps
}

// headerTransport sends a bearer token and the run's header.
type headerTransport struct{ token, run string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.token)
	r.Header.Set(RunHeader, h.run)
	return http.DefaultTransport.RoundTrip(r)
}

func toolNames(t *testing.T, cs *mcpsdk.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func errorCode(env host.Envelope) host.Code {
	if env.Error == nil {
		return ""
	}
	return env.Error.Code
}

// initSession begins a session by hand with auth, and returns its id.
func initSession(t *testing.T, endpoint, auth string) string {
	t.Helper()
	res := post(t, endpoint, "", auth)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("initialize with %q: %s", auth, res.Status)
	}
	id := res.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session id")
	}
	return id
}

// inSession sends a tools/list request in session id with auth.
func inSession(t *testing.T, endpoint, id, auth string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Over HTTP each token runs as the actor the policy gives it: its own
// tools, allowlist and budget; the operator's token runs as default; any
// other token, or none, is refused; a session is its caller's alone.
func TestHostHTTPRunsAsTheTokensActor(t *testing.T) {
	endpoint, site, _, _ := hostHTTP(t, hostOperatorToken, false)

	teamA := httpClient(t, endpoint, hostTeamAToken)
	if got, want := toolNames(t, teamA), []string{"act", "extract_review", "inspect", "summarize"}; !slices.Equal(got, want) {
		t.Fatalf("team-a's tools %v, want %v", got, want)
	}
	texts, _ := call(t, teamA, "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); env.Status != host.StatusOK {
		t.Fatalf("team-a's inspect: %s", texts[0])
	}
	// team-a's run has two steps, one inspect: the next is refused.
	texts, _ = call(t, teamA, "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); errorCode(env) != host.BudgetExhausted {
		t.Fatalf("team-a past its steps: %s", texts[0])
	}
	if _, err := teamA.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "extract_product", Arguments: map[string]any{"url": site + "/"}}); err == nil {
		t.Fatal("team-a called default's extract_product")
	}

	// The host's client names the run (Distill-Run-Id): one budget across
	// its sessions, another for another run.
	inRun := func(run string) *mcpsdk.ClientSession {
		tr := &mcpsdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: headerTransport{token: hostTeamAToken, run: run}}}
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	texts, _ = call(t, inRun("run-x"), "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); env.Status != host.StatusOK {
		t.Fatalf("team-a in run-x: %s", texts[0])
	}
	texts, _ = call(t, inRun("run-x"), "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); errorCode(env) != host.BudgetExhausted {
		t.Fatalf("team-a in run-x again, in another session: %s", texts[0])
	}
	texts, _ = call(t, inRun("run-y"), "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); env.Status != host.StatusOK {
		t.Fatalf("team-a in run-y: %s", texts[0])
	}
	texts, _ = call(t, inRun(strings.Repeat("r", 129)), "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); errorCode(env) != host.InvalidInput {
		t.Fatalf("a run name too long: %s", texts[0])
	}

	teamB := httpClient(t, endpoint, hostTeamBToken)
	if got, want := toolNames(t, teamB), []string{"act", "inspect", "summarize"}; !slices.Equal(got, want) {
		t.Fatalf("team-b's tools %v, want %v", got, want)
	}
	texts, _ = call(t, teamB, "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); errorCode(env) != host.NotAuthorized {
		t.Fatalf("team-b off its allowlist: %s", texts[0])
	}

	operator := httpClient(t, endpoint, hostOperatorToken)
	if got, want := toolNames(t, operator), []string{"act", "extract_product", "inspect", "summarize"}; !slices.Equal(got, want) {
		t.Fatalf("default's tools %v, want %v", got, want)
	}
	texts, _ = call(t, operator, "inspect", map[string]any{"url": site + "/"})
	if env := envelopeOf(t, texts); env.Status != host.StatusOK {
		t.Fatalf("default's inspect: %s", texts[0])
	}

	for _, auth := range []string{"", "Bearer not-a-token-of-anyone-0123", "Basic " + hostTeamAToken} {
		if res := post(t, endpoint, "", auth); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("initialize with %q: %s, want 401", auth, res.Status)
		}
	}
	id := initSession(t, endpoint, "Bearer "+hostTeamAToken)
	if code := inSession(t, endpoint, id, "Bearer "+hostTeamAToken); code != http.StatusOK && code != http.StatusAccepted {
		t.Fatalf("team-a in its session: %d", code)
	}
	for _, auth := range []string{"Bearer " + hostTeamBToken, "Bearer " + hostOperatorToken} {
		if code := inSession(t, endpoint, id, auth); code != http.StatusForbidden {
			t.Errorf("team-a's session with %q: %d, want 403", auth, code)
		}
	}
}

// Without the operator's token, host mode serves the policy's tokens
// only; with --no-auth a request without a token runs as default, and an
// unknown token is still refused.
func TestHostHTTPWithoutTheOperatorsToken(t *testing.T) {
	t.Run("policy tokens only", func(t *testing.T) {
		endpoint, _, _, _ := hostHTTP(t, "", true)
		for _, auth := range []string{"", "Bearer not-a-token-of-anyone-0123"} {
			if res := post(t, endpoint, "", auth); res.StatusCode != http.StatusUnauthorized {
				t.Errorf("initialize with %q: %s, want 401", auth, res.Status)
			}
		}
		if got := toolNames(t, httpClient(t, endpoint, hostTeamAToken)); !slices.Contains(got, "extract_review") {
			t.Fatalf("team-a's tools %v", got)
		}
	})
	t.Run("no-auth", func(t *testing.T) {
		endpoint, _, _, _ := hostHTTP(t, "", false)
		if got := toolNames(t, httpClient(t, endpoint, "")); !slices.Contains(got, "extract_product") {
			t.Fatalf("without a token, default's tools: %v", got)
		}
		if got := toolNames(t, httpClient(t, endpoint, hostTeamAToken)); !slices.Contains(got, "extract_review") {
			t.Fatalf("team-a's tools %v", got)
		}
		if res := post(t, endpoint, "", "Bearer not-a-token-of-anyone-0123"); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("an unknown token: %s, want 401", res.Status)
		}
	})
}

// A reload adds, changes and removes extract tools of a connected client,
// which is told (notifications/tools/list_changed) and lists the new
// tools without reconnecting; a token the reload drops is refused.
func TestHostReloadChangesToolsLive(t *testing.T) {
	endpoint, site, policyPath, ps := hostHTTP(t, hostOperatorToken, false)
	changed := make(chan struct{}, 16)
	connect := func(token string) *mcpsdk.ClientSession {
		tr := &mcpsdk.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearerTransport{token}}}
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test", Version: "test"}, &mcpsdk.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcpsdk.ToolListChangedRequest) { changed <- struct{}{} },
		}).Connect(context.Background(), tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	cs := connect(hostOperatorToken)
	teamA := connect(hostTeamAToken)
	description := func(name string) string {
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name == name {
				return tool.Description
			}
		}
		return ""
	}
	waitChanged := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatalf("no tools/list_changed after %s", what)
		}
	}
	reload := func(more string) {
		t.Helper()
		hostPolicyFile(t, policyPath, site, more)
		if err := ps.Reload(); err != nil {
			t.Fatal(err)
		}
	}

	reload(`      offer: {type: object, title: Offer, properties: {price: {type: number}}}`)
	waitChanged("a schema was added")
	if got, want := toolNames(t, cs), []string{"act", "extract_offer", "extract_product", "inspect", "summarize"}; !slices.Equal(got, want) {
		t.Fatalf("after the reload %v, want %v", got, want)
	}
	if d := description("extract_offer"); !strings.Contains(d, "(Offer; fields price)") {
		t.Fatalf("extract_offer: %q", d)
	}
	texts, _ := call(t, cs, "extract_offer", map[string]any{"url": "https://example.com/"})
	if env := envelopeOf(t, texts); errorCode(env) != host.NotAuthorized {
		t.Fatalf("the new tool runs under the policy: %s", texts[0])
	}

	reload(`      offer: {type: object, title: Offer, description: What the shop asks, properties: {price: {type: number}}}`)
	waitChanged("a schema's description changed")
	if d := description("extract_offer"); !strings.Contains(d, "(Offer: What the shop asks; fields price)") {
		t.Fatalf("extract_offer after its schema changed: %q", d)
	}
	reload(`      offer: {type: object, title: Offer, description: What the shop asks, properties: {price: {type: number}, currency: {type: string}}}`)
	waitChanged("a schema's fields changed")
	if d := description("extract_offer"); !strings.Contains(d, "(Offer: What the shop asks; fields currency, price)") {
		t.Fatalf("extract_offer after its fields changed: %q", d)
	}

	// The schemas that remain: default's offer, team-a's none; and no
	// token for team-b.
	if err := os.WriteFile(policyPath, []byte(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    schemas:
      offer: {type: object, properties: {price: {type: number}}}
  team-a:
    allowed_hosts: [127.0.0.1]
tokens:
  - {token_env: TEAM_A_TOKEN, actor: team-a}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ps.Reload(); err != nil {
		t.Fatal(err)
	}
	waitChanged("schemas were removed")
	if got, want := toolNames(t, cs), []string{"act", "extract_offer", "inspect", "summarize"}; !slices.Equal(got, want) {
		t.Fatalf("after removing product %v, want %v", got, want)
	}
	if _, err := cs.CallTool(t.Context(), &mcpsdk.CallToolParams{Name: "extract_product", Arguments: map[string]any{"url": site + "/"}}); err == nil {
		t.Fatal("extract_product after the reload removed it")
	}
	waitChanged("team-a's schema was removed")
	if got, want := toolNames(t, teamA), []string{"act", "inspect", "summarize"}; !slices.Equal(got, want) {
		t.Fatalf("team-a after the reload %v, want %v", got, want)
	}
	if res := post(t, endpoint, "", "Bearer "+hostTeamBToken); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("team-b's token after the reload dropped it: %s", res.Status)
	}
}
