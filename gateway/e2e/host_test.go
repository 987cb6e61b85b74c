package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"distill.dev/gateway/host"
	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
)

const hostTeamToken = "team-a-e2e-token-0123456789"

// Two gateway processes, one budget: every kind of an actor's budget is
// kept in NATS, so it holds whichever gateway each call reaches, with
// calls racing on both at once.
func TestHostBudgetsAcrossTwoGateways(t *testing.T) {
	p := newPages(t, 0)
	u, _ := url.Parse(p.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
defaults:
  allowed_schemes: [http]
  allowed_ports: [%s]
actors:
  team-steps:
    allowed_hosts: [127.0.0.1]
    budget: {max_steps: 6, max_concurrent: 8}
  team-conc:
    allowed_hosts: [127.0.0.1]
    budget: {max_steps: 40, max_concurrent: 2}
  team-time:
    allowed_hosts: [127.0.0.1]
    budget: {max_seconds: 10, max_concurrent: 8}
  team-bytes:
    allowed_hosts: [127.0.0.1]
    budget: {max_bytes: 120}
tokens:
  - {token_env: TEAM_STEPS_TOKEN, actor: team-steps}
  - {token_env: TEAM_CONC_TOKEN, actor: team-conc}
  - {token_env: TEAM_TIME_TOKEN, actor: team-time}
  - {token_env: TEAM_BYTES_TOKEN, actor: team-bytes}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{
		"team-steps": "team-steps-e2e-token-0123456789", "team-conc": "team-conc-e2e-token-0123456789",
		"team-time": "team-time-e2e-token-0123456789", "team-bytes": "team-bytes-e2e-token-0123456789",
	}
	c := startCluster(t, clusterOpts{Gateways: 2, NoRenderer: true, Env: []string{"DISTILL_POLICY=" + policy,
		"TEAM_STEPS_TOKEN=" + tokens["team-steps"], "TEAM_CONC_TOKEN=" + tokens["team-conc"],
		"TEAM_TIME_TOKEN=" + tokens["team-time"], "TEAM_BYTES_TOKEN=" + tokens["team-bytes"]}})
	// gateways returns the actor's client of each gateway.
	gateways := func(actor string) [2]distillv1.HostServiceClient {
		var out [2]distillv1.HostServiceClient
		for i := range out {
			cc, err := grpc.NewClient(c.Gateways[i].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(tokens[actor]))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cc.Close() })
			out[i] = distillv1.NewHostServiceClient(cc)
		}
		return out
	}
	inspect := func(g distillv1.HostServiceClient, run, path string) *distillv1.HostEnvelope {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), host.RunMetadata, run), 60*time.Second)
		defer cancel()
		res, err := g.Inspect(ctx, &distillv1.HostServiceInspectRequest{Url: p.URL + path})
		if err != nil {
			t.Error(err)
		}
		return res.GetEnvelope()
	}
	exhausted := func(env *distillv1.HostEnvelope) bool {
		return env.GetStatus() == host.StatusError && env.GetError().GetCode() == string(host.BudgetExhausted)
	}
	hitsUnder := func(prefix string) int {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for path, h := range p.hits {
			if strings.HasPrefix(path, prefix) {
				n += h
			}
		}
		return n
	}

	t.Run("steps", func(t *testing.T) {
		t.Parallel()
		// Seven inspects of two steps each race on both gateways for a
		// run of six steps: three pass, and the four refused never load
		// their page.
		g := gateways("team-steps")
		results := make(chan *distillv1.HostEnvelope, 7)
		for i := range 7 {
			go func() { results <- inspect(g[i%2], "run-steps", fmt.Sprintf("/p/steps-%d", i)) }()
		}
		ok, refused := 0, 0
		for range 7 {
			switch env := <-results; {
			case env.GetStatus() == host.StatusOK:
				ok++
			case exhausted(env):
				refused++
			default:
				t.Errorf("an inspect: %v", env)
			}
		}
		if ok != 3 || refused != 4 || hitsUnder("/p/steps-") != 3 {
			t.Fatalf("%d passed, %d refused, %d pages loaded; want 3, 4 and 3", ok, refused, hitsUnder("/p/steps-"))
		}
		for i := range g {
			if env := inspect(g[i], "run-steps", "/p/steps-late"); !exhausted(env) {
				t.Fatalf("gateway %d past max_steps: %v", i, env)
			}
		}
		if env := inspect(g[1], "run-steps-2", "/p/steps-fresh"); env.GetStatus() != host.StatusOK {
			t.Fatalf("another run: %v", env)
		}
	})

	t.Run("concurrency", func(t *testing.T) {
		t.Parallel()
		// Six calls of six runs on both gateways, each held at the site
		// once it gets there: two slots, so two are held and four are
		// refused while they are.
		g := gateways("team-conc")
		release := make(chan struct{})
		for i := range 6 {
			p.hold(fmt.Sprintf("/p/conc-%d", i), release)
		}
		results := make(chan *distillv1.HostEnvelope, 6)
		for i := range 6 {
			go func() { results <- inspect(g[i%2], fmt.Sprintf("run-conc-%d", i), fmt.Sprintf("/p/conc-%d", i)) }()
		}
		for range 4 {
			if env := <-results; !exhausted(env) {
				close(release)
				t.Fatalf("a call past max_concurrent: %v", env)
			}
		}
		for deadline := time.Now().Add(30 * time.Second); hitsUnder("/p/conc-") < 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				close(release)
				t.Fatal("the calls holding the slots never reached the site")
			}
		}
		for i := range g {
			if env := inspect(g[i], "run-conc-late", "/p/conc-late"); !exhausted(env) {
				close(release)
				t.Fatalf("gateway %d while both slots are held: %v", i, env)
			}
		}
		close(release)
		for range 2 {
			if env := <-results; env.GetStatus() != host.StatusOK {
				t.Fatalf("a call holding a slot: %v", env)
			}
		}
		if n := hitsUnder("/p/conc-"); n != 2 {
			t.Fatalf("%d pages loaded, want the 2 that held the slots", n)
		}
		for i := range g {
			if env := inspect(g[i], "run-conc-after", fmt.Sprintf("/p/after-%d", i)); env.GetStatus() != host.StatusOK {
				t.Fatalf("gateway %d after the slots were given back: %v", i, env)
			}
		}
	})

	t.Run("time", func(t *testing.T) {
		t.Parallel()
		// The run's first call starts its ten seconds and is held at the
		// site past them: it is cut off there, and the run's next calls
		// are refused on both gateways before they load anything. (Ten,
		// not two: a fresh run's one call must fit in them on a loaded
		// machine, where the extractor's answer alone once took two.)
		g := gateways("team-time")
		release := make(chan struct{})
		defer close(release)
		p.hold("/p/time-held", release)
		if env := inspect(g[0], "run-time", "/p/time-held"); !exhausted(env) {
			t.Fatalf("a call past the run's time: %v", env)
		}
		for i := range g {
			if env := inspect(g[i], "run-time", fmt.Sprintf("/p/time-late-%d", i)); !exhausted(env) {
				t.Fatalf("gateway %d after the run's time: %v", i, env)
			}
		}
		if n := hitsUnder("/p/time-late-"); n != 0 {
			t.Fatalf("%d pages loaded after the run's time", n)
		}
		if env := inspect(g[1], "run-time-2", "/p/time-fresh"); env.GetStatus() != host.StatusOK {
			t.Fatalf("another run: %v", env)
		}
	})

	t.Run("bytes", func(t *testing.T) {
		t.Parallel()
		// The sign-in form's candidates take more than the run's 120 and
		// are cut to fit; the same run on the other gateway gets what is
		// left, a new run the whole again.
		g := gateways("team-bytes")
		size := func(env *distillv1.HostEnvelope) int {
			c, err := host.Canonical(env.GetData().AsInterface())
			if err != nil {
				t.Fatal(err)
			}
			return len(c)
		}
		first := inspect(g[1], "run-bytes", "/login")
		if first.GetStatus() != host.StatusTruncated || size(first) > 120 {
			t.Fatalf("an inspect past max_bytes: %v", first)
		}
		second := inspect(g[0], "run-bytes", "/login")
		if second.GetStatus() != host.StatusTruncated || size(second) > max(2, 120-size(first)) {
			t.Fatalf("the same run on the other gateway kept %d bytes after %d: %v", size(second), size(first), second)
		}
		if fresh := inspect(g[0], "run-bytes-2", "/login"); size(fresh) != size(first) {
			t.Fatalf("a new run kept %d bytes, the first %d", size(fresh), size(first))
		}
	})
}

func (p *pages) hitsOf(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}

const (
	hostTeamBToken   = "team-b-e2e-token-0123456789"
	hostOperatorE2E  = "operator-e2e-token-0123456789"
	hostPolicyFormat = `
actors:
  team-a:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%[1]s]
    budget: {max_steps: 40, max_concurrent: 8}
%[2]s
tokens:
  - {token_env: TEAM_A_TOKEN, actor: team-a}
%[3]s
`
)

// Two gateway processes, one approval: the host creates it on one, acts
// race for it on both, and it fires once, in real Chromium. A SIGHUP then
// has one gateway admit a token its reloaded policy added, without a
// restart, while the other, not reloaded, still refuses it.
func TestHostApprovalsAndReloadAcrossTwoGateways(t *testing.T) {
	p := newPages(t, 0)
	u, _ := url.Parse(p.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(teamB bool) {
		actor, token := "", ""
		if teamB {
			actor = fmt.Sprintf("  team-b:\n    allowed_hosts: [127.0.0.1]\n    allowed_schemes: [http]\n    allowed_ports: [%s]", u.Port())
			token = "  - {token_env: TEAM_B_TOKEN, actor: team-b}"
		}
		if err := os.WriteFile(policy, []byte(fmt.Sprintf(hostPolicyFormat, u.Port(), actor, token)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(false)
	c := startCluster(t, clusterOpts{Gateways: 2, Env: []string{"DISTILL_POLICY=" + policy,
		"TEAM_A_TOKEN=" + hostTeamToken, "TEAM_B_TOKEN=" + hostTeamBToken, "DISTILL_OPERATOR_TOKENS=" + hostOperatorE2E}})
	client := func(i int, token string) distillv1.HostServiceClient {
		cc, err := grpc.NewClient(c.Gateways[i].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(token))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return distillv1.NewHostServiceClient(cc)
	}
	ctx := func(run string) context.Context {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), host.RunMetadata, run), 90*time.Second)
		t.Cleanup(cancel)
		return ctx
	}

	login := p.URL + "/login"
	args := map[string]string{"text": "alice", "key": "Enter"}
	ap, err := client(0, hostOperatorE2E).CreateApproval(ctx(""), &distillv1.HostServiceCreateApprovalRequest{
		Actor: "team-a", Run: "run-act", Url: login, Method: "type", Selector: "input[name=user]", Arguments: args, TtlSeconds: 300,
		AllowUnsafe: true, // signing in is a POST
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client(1, hostTeamToken).CreateApproval(ctx(""), &distillv1.HostServiceCreateApprovalRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("an actor's token created an approval: %v", err)
	}
	acts := []distillv1.HostServiceClient{client(0, hostTeamToken), client(1, hostTeamToken)}
	results := make(chan *distillv1.HostEnvelope, 4)
	for i := range 4 {
		go func() {
			res, err := acts[i%2].Act(ctx("run-act"), &distillv1.HostServiceActRequest{
				Url: login, ApprovalId: ap.GetApproval().GetId(), Method: "type", Selector: "input[name=user]", Arguments: args,
			})
			if err != nil {
				t.Error(err)
			}
			results <- res.GetEnvelope()
		}()
	}
	var fired *distillv1.HostEnvelope
	stale := 0
	for range 4 {
		env := <-results
		switch {
		case env.GetStatus() == host.StatusOK:
			fired = env
		case env.GetError().GetCode() == string(host.ApprovalStale):
			stale++
		default:
			t.Errorf("an act: %v", env)
		}
	}
	if fired == nil || stale != 3 || p.hitsOf("/members") != 1 {
		t.Fatalf("fired %v, %d stale, %d sign-ins; want one of each and 3 stale", fired, stale, p.hitsOf("/members"))
	}
	if title := fired.GetData().GetStructValue().GetFields()["title"].GetStringValue(); title != "Members area" {
		t.Fatalf("after the act: %q", title)
	}
	rec, err := client(1, hostOperatorE2E).GetOperation(ctx(""), &distillv1.HostServiceGetOperationRequest{Id: fired.GetOperationId()})
	if err != nil || rec.GetOperation().GetState() != host.OpClosed || rec.GetOperation().GetActor() != "team-a" {
		t.Fatalf("the act's operation on the other gateway: %v, %v", rec, err)
	}

	// The reload.
	inspect := func(i int) (*distillv1.HostEnvelope, error) {
		res, err := client(i, hostTeamBToken).Inspect(ctx("run-b"), &distillv1.HostServiceInspectRequest{Url: p.URL + "/p/1"})
		return res.GetEnvelope(), err
	}
	if _, err := inspect(1); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("team-b before the reload: %v", err)
	}
	write(true)
	if err := c.Gateways[1].Notify(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		env, err := inspect(1)
		if err == nil {
			if env.GetStatus() != host.StatusOK {
				t.Fatalf("team-b after the reload: %v", env)
			}
			break
		}
		if status.Code(err) != codes.Unauthenticated || time.Now().After(deadline) {
			t.Fatalf("team-b after the reload: %v", err)
		}
	}
	if _, err := inspect(0); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("team-b on the gateway not reloaded: %v", err)
	}
}

// Host mode's MCP sidecar (distill mcp --policy --run --http --cluster)
// beside a gateway the host calls over gRPC, sharing the cluster's NATS:
// the host approves an action and reserves an operation for the sidecar's
// run, and the agent's MCP client uses both, once.
func TestHostMCPSidecarUsesTheHostsApprovals(t *testing.T) {
	site := newPages(t, 0)
	u, _ := url.Parse(site.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
    budget: {max_steps: 40}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, clusterOpts{Env: []string{"DISTILL_POLICY=" + policy, "DISTILL_OPERATOR_TOKENS=" + hostOperatorE2E}})
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const token, run = "host-sidecar-token-0123456789", "agent-run-7"
	sidecar := &localcluster.Proc{
		Name: "distill",
		Args: []string{"mcp", "--allow-local", "--policy", policy, "--run", run, "--http", addr, "--cluster", "--nats", "nats://" + c.NATS.Addr,
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cc, err := grpc.NewClient(c.Gateways[0].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(hostOperatorE2E))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	operator := distillv1.NewHostServiceClient(cc)
	envelope := func(res *mcpsdk.CallToolResult, err error) host.Envelope {
		t.Helper()
		var env host.Envelope
		if err != nil || json.Unmarshal([]byte(text(res)), &env) != nil {
			t.Fatalf("not an envelope: %v %s", err, text(res))
		}
		return env
	}

	login := site.URL + "/login"
	act := map[string]any{"url": login, "method": "type", "selector": "input[name=user]", "arguments": map[string]any{"text": "alice", "key": "Enter"}}
	ap, err := operator.CreateApproval(ctx, &distillv1.HostServiceCreateApprovalRequest{
		Actor: host.DefaultActor, Run: run, Url: login, Method: "type", Selector: "input[name=user]",
		Arguments: map[string]string{"text": "alice", "key": "Enter"}, TtlSeconds: 300, AllowUnsafe: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	act["approval_id"] = ap.GetApproval().GetId()
	env := envelope(cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "act", Arguments: act}))
	if env.Status != host.StatusOK || env.Data.(map[string]any)["title"] != "Members area" || site.hitsOf("/members") != 1 {
		t.Fatalf("act with the host's approval: %+v, %d sign-ins", env, site.hitsOf("/members"))
	}
	if env := envelope(cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "act", Arguments: act})); env.Error == nil || env.Error.Code != host.ApprovalStale {
		t.Fatalf("the approval used again: %+v", env)
	}

	op, err := operator.ReserveOperation(ctx, &distillv1.HostServiceReserveOperationRequest{Actor: host.DefaultActor, Run: run})
	if err != nil {
		t.Fatal(err)
	}
	inspect := map[string]any{"url": site.URL + "/p/1", "operation_id": op.GetOperation().GetId()}
	env = envelope(cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "inspect", Arguments: inspect}))
	if env.Status != host.StatusOK || env.OperationID != op.GetOperation().GetId() {
		t.Fatalf("inspect starting the reserved operation: %+v", env)
	}
	rec, err := operator.GetOperation(ctx, &distillv1.HostServiceGetOperationRequest{Id: op.GetOperation().GetId()})
	if err != nil || rec.GetOperation().GetState() != host.OpClosed || rec.GetOperation().GetTool() != "inspect" {
		t.Fatalf("the reserved operation: %v, %v", rec, err)
	}
	if env := envelope(cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "inspect", Arguments: inspect})); env.Error == nil || env.Error.Code != host.SessionUnknown {
		t.Fatalf("the operation started again: %+v", env)
	}
}

// The single binary, no cluster: two distill mcp processes over stdio
// (two MCP clients of one user) and the host's distill host approve share
// the user's host state folder. An approval the CLI made fires once, from
// either server; when the process serving the folder exits, the other
// takes it over, and the next approval reaches it.
func TestHostStdioMCPActsWithTheCLIsApprovals(t *testing.T) {
	bin := filepath.Join(binDir(t), "distill")
	site := newPages(t, 0)
	u, _ := url.Parse(site.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
    budget: {max_steps: 40}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "host-state")
	const run = "desktop-run"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	server := func() (*mcpsdk.ClientSession, *bytes.Buffer) {
		cmd := exec.Command(bin, "--cache-dir", t.TempDir(), "mcp", "--allow-local", "--policy", policy, "--run", run, "--host-state", state)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cs, err := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "agent", Version: "test"}, nil).Connect(ctx, &mcpsdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("distill mcp: %v\n%s", err, stderr.String())
		}
		return cs, &stderr
	}
	first, firstLog := server()
	firstOpen := true
	defer func() {
		if firstOpen {
			first.Close()
		}
	}()
	second, secondLog := server()
	defer second.Close()
	defer func() {
		if t.Failed() {
			t.Logf("first server:\n%s\nsecond server:\n%s", firstLog, secondLog)
		}
	}()

	login := site.URL + "/login"
	args := map[string]any{"url": login, "method": "type", "selector": "input[name=user]", "arguments": map[string]any{"text": "alice", "key": "Enter"}}
	approve := func() string {
		t.Helper()
		out, stderr, code := runCLI(t, "host", "approve", "--policy", policy, "--host-state", state, "--run", run,
			"--method", "type", "--selector", "input[name=user]", "--arg", "text=alice", "--arg", "key=Enter", "--allow-unsafe", login)
		var ap host.Approval
		if code != 0 || json.Unmarshal([]byte(out), &ap) != nil || ap.ID == "" {
			t.Fatalf("distill host approve: exit %d, %s %s", code, out, stderr)
		}
		return ap.ID
	}
	act := func(cs *mcpsdk.ClientSession) host.Envelope {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcpsdk.CallToolParams{Name: "act", Arguments: args})
		var env host.Envelope
		if err != nil || json.Unmarshal([]byte(text(res)), &env) != nil {
			t.Fatalf("act: %v %s", err, text(res))
		}
		return env
	}

	args["approval_id"] = approve()
	if env := act(first); env.Status != host.StatusOK || site.hitsOf("/members") != 1 {
		t.Fatalf("act with the CLI's approval: %+v, %d sign-ins", env, site.hitsOf("/members"))
	}
	if env := act(second); env.Error == nil || env.Error.Code != host.ApprovalStale || site.hitsOf("/members") != 1 {
		t.Fatalf("the approval used again from the other server: %+v, %d sign-ins", env, site.hitsOf("/members"))
	}

	// The first server, which served the folder, ends (its client hangs
	// up); the second goes on with the same records.
	firstOpen = false
	if err := first.Close(); err != nil {
		t.Logf("closing the first server: %v", err)
	}
	args["approval_id"] = approve()
	if env := act(second); env.Status != host.StatusOK || site.hitsOf("/members") != 2 {
		t.Fatalf("act after the first server ended: %+v, %d sign-ins", env, site.hitsOf("/members"))
	}
}
