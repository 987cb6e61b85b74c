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
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
)

// startRenderer serves a renderer process's gRPC on a loopback port until
// the test ends.
func startRenderer(t *testing.T, cfg Config) (addr string, client internalv1.RendererServiceClient) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, lis, cfg, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return lis.Addr().String(), internalv1.NewRendererServiceClient(conn)
}

// A renderer process honours allow_local only when its operator started
// it with -allow-local, and never renders its own ports.
func TestRendererAllowLocalIsTheOperators(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><title>t</title><p id="done">hi</p>`)
	}))
	defer page.Close()
	opts := &distillv1.FetchOptions{AllowLocal: true, TimeoutSecs: proto.Int32(20)}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	t.Run("refused without -allow-local", func(t *testing.T) {
		_, client := startRenderer(t, Config{})
		_, err := client.Render(ctx, &internalv1.RenderRequest{Url: page.URL, Options: opts})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), failure.AllowLocalMessage) {
			t.Fatalf("err = %v (grpc %v), want InvalidArgument naming --allow-local", err, status.Code(err))
		}
	})
	t.Run("own ports refused with -allow-local", func(t *testing.T) {
		own := netpolicy.NewOwn()
		metrics := httptest.NewServer(http.NotFoundHandler())
		defer metrics.Close()
		own.Add(metrics.Listener.Addr(), "metrics port")
		addr, client := startRenderer(t, Config{AllowLocal: true, Own: own})
		if _, err := client.Render(ctx, &internalv1.RenderRequest{Url: page.URL, Options: opts}); err != nil {
			t.Fatalf("a loopback page with -allow-local: %v", err)
		}
		for url, want := range map[string]string{
			"http://" + addr + "/": "distill's own gRPC port",
			metrics.URL + "/":      "distill's own metrics port",
		} {
			_, err := client.Render(ctx, &internalv1.RenderRequest{Url: url, Options: opts})
			if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: err = %v, want Blocked naming %q", url, err, want)
			}
		}
	})
}
