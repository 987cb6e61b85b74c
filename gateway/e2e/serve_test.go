package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// `distill serve` without --cluster, every service in its one process, as
// a user runs it: it answers the public API over gRPC, and stops cleanly
// on SIGTERM, as Kubernetes stops it.
func TestServeInOneProcess(t *testing.T) {
	t.Parallel()
	site := newPages(t, 0)
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	serve := &localcluster.Proc{
		Name: "distill",
		Args: []string{"--cache-dir", t.TempDir(), "serve", "--allow-local", "--listen", addr, "--log-level", "info"},
	}
	serve.SetBin(binDir(t))
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if serve.Running() {
			_ = serve.Signal(syscall.SIGKILL)
		}
		checkProc(t, serve)
	}()

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The call waits for the server to listen.
	res, err := distillv1.NewDistillServiceClient(conn).Fetch(ctx, &distillv1.FetchRequest{
		Url: site.URL + "/p/1", Options: &distillv1.FetchOptions{AllowLocal: true},
	}, grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if res.GetDistilled().GetTitle() != "Page 1" {
		t.Errorf("title = %q", res.GetDistilled().GetTitle())
	}

	if err := serve.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := serve.Exit(); err != nil {
		t.Errorf("serve exited with %v after SIGTERM, want 0", err)
	}
}

// A serve with API tokens answers `distill fetch --server` that sends one
// in DISTILL_API_TOKEN, and refuses one that does not, saying what to set.
func TestFetchThroughAServeWithTokens(t *testing.T) {
	t.Parallel()
	site := newPages(t, 0)
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	const token = "e2e-api-token-0123456789"
	serve := &localcluster.Proc{
		Name: "distill",
		Args: []string{"--cache-dir", t.TempDir(), "serve", "--allow-local", "--listen", addr},
		Env:  []string{"DISTILL_API_TOKENS=" + token},
	}
	serve.SetBin(binDir(t))
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = serve.Signal(syscall.SIGTERM)
		checkProc(t, serve)
	}()

	fetch := func(env ...string) (string, error) {
		cmd := exec.Command(filepath.Join(binDir(t), "distill"), "fetch", "--server", addr, "--allow-local", site.URL+"/p/1")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Health needs no token: it says when the server is up.
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("health without a token: %v", err)
	}
	out, err := fetch("DISTILL_API_TOKEN=" + token)
	if err != nil || !strings.Contains(out, "Page 1") {
		t.Fatalf("fetch --server with DISTILL_API_TOKEN: %v\n%s", err, out)
	}
	out, err = fetch("DISTILL_API_TOKEN=")
	if err == nil || !strings.Contains(out, "set DISTILL_API_TOKEN") {
		t.Errorf("fetch --server without a token: %v\n%s; want a failure naming DISTILL_API_TOKEN", err, out)
	}
}
