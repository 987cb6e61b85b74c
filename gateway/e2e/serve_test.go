package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

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
