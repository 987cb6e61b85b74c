package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/renderer/render"
)

// TestRenderOverGRPC serves the renderer on a loopback port, as the
// renderer process does, and renders through a gRPC client.
func TestRenderOverGRPC(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><title>t</title><div id="app"></div><script>
			setTimeout(() => { document.getElementById('app').innerHTML = '<p id="done">built remotely</p>' }, 100)</script>`)
	}))
	defer page.Close()

	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := render.New(logger)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(logger, r).Serve(ctx, lis) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		_ = r.Close()
	}()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := internalv1.NewRendererServiceClient(conn)
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()

	health, err := healthpb.NewHealthClient(conn).Check(rctx, &healthpb.HealthCheckRequest{})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", health, err)
	}

	res, err := client.Render(rctx, &internalv1.RenderRequest{
		Url:     page.URL,
		Options: &distillv1.FetchOptions{AllowLocal: true, JsWaitFor: "#done", TimeoutSecs: proto.Int32(20)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.GetHtml()), "built remotely") || res.GetStatus() != 200 {
		t.Fatalf("render = %d %s", res.GetStatus(), res.GetHtml())
	}

	// A policy refusal crosses the wire as PermissionDenied with distill's
	// own code attached.
	_, err = client.Render(rctx, &internalv1.RenderRequest{Url: page.URL})
	if status.Code(err) != codes.PermissionDenied || failure.CodeOf(err) != failure.Blocked {
		t.Fatalf("err = %v (grpc %v, distill %v), want PermissionDenied/Blocked", err, status.Code(err), failure.CodeOf(err))
	}
}
