package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"distill.dev/gateway/host"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
)

const hostTeamToken = "team-a-e2e-token-0123456789"

// Two gateway processes, one budget: the steps and the concurrency slot of
// an actor are shared through NATS, whichever gateway a call reaches.
func TestHostBudgetsAcrossTwoGateways(t *testing.T) {
	p := newPages(t, 0)
	u, _ := url.Parse(p.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  team-a:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
    budget: {max_steps: 4, max_concurrent: 1}
tokens:
  - {token_env: TEAM_A_TOKEN, actor: team-a}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, clusterOpts{Gateways: 2, NoRenderer: true,
		Env: []string{"DISTILL_POLICY=" + policy, "TEAM_A_TOKEN=" + hostTeamToken}})
	client := func(i int) distillv1.HostServiceClient {
		cc, err := grpc.NewClient(c.Gateways[i].Addr, grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(hostTeamToken))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		return distillv1.NewHostServiceClient(cc)
	}
	g0, g1 := client(0), client(1)
	inspect := func(g distillv1.HostServiceClient, run, path string) *distillv1.HostEnvelope {
		ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), host.RunMetadata, run), 60*time.Second)
		defer cancel()
		res, err := g.Inspect(ctx, &distillv1.HostServiceInspectRequest{Url: p.URL + path})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetEnvelope()
	}

	// Concurrency: a call held on gateway 0 keeps the actor's one slot, so
	// gateway 1 refuses another run's call.
	release := make(chan struct{})
	p.hold("/p/held", release)
	held := make(chan *distillv1.HostEnvelope, 1)
	go func() { held <- inspect(g0, "run-held", "/p/held") }()
	for deadline := time.Now().Add(30 * time.Second); p.hitsOf("/p/held") == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the held page was never asked for")
		}
	}
	if env := inspect(g1, "run-other", "/p/1"); env.GetError().GetCode() != string(host.BudgetExhausted) {
		t.Fatalf("a second call while the slot is held: %v", env)
	}
	close(release)
	if env := <-held; env.GetStatus() != host.StatusOK {
		t.Fatalf("the held call: %v", env)
	}

	// Steps: four per run, two per inspect, on either gateway.
	if env := inspect(g0, "run-steps", "/p/1"); env.GetStatus() != host.StatusOK {
		t.Fatalf("first inspect: %v", env)
	}
	if env := inspect(g1, "run-steps", "/p/2"); env.GetStatus() != host.StatusOK {
		t.Fatalf("second inspect, other gateway: %v", env)
	}
	if env := inspect(g0, "run-steps", "/p/3"); env.GetError().GetCode() != string(host.BudgetExhausted) {
		t.Fatalf("a third inspect past max_steps: %v", env)
	}
}

func (p *pages) hitsOf(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hits[path]
}
