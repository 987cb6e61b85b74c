package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// dial serves the extractor on an in-memory listener and returns a client
// connection to it.
func dial(t *testing.T) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(slog.New(slog.NewTextHandler(io.Discard, nil))).Serve(ctx, lis) }()

	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return conn
}

func TestExtractOverGRPC(t *testing.T) {
	t.Parallel()
	client := internalv1.NewExtractorServiceClient(dial(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	resp, err := client.Extract(ctx, &internalv1.ExtractRequest{
		Html:    []byte(`<html><head><title>Remote</title></head><body><article><h1>Remote</h1><p>Served over gRPC.</p></article></body></html>`),
		Url:     "https://example.com/remote",
		Status:  200,
		Options: &distillv1.FetchOptions{Diagnostics: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDistilled()
	if d.GetTitle() != "Remote" || !strings.Contains(d.GetMarkdown(), "Served over gRPC.") || d.GetDiagnostics().GetProfile() != "article" {
		t.Errorf("distilled = %v", d)
	}
}

func TestErrorsKeepTheirCode(t *testing.T) {
	t.Parallel()
	client := internalv1.NewExtractorServiceClient(dial(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	tests := []struct {
		name     string
		req      *internalv1.ExtractRequest
		wantCode distillv1.ErrorCode
		wantGRPC codes.Code
	}{
		{
			name:     "unsupported content",
			req:      &internalv1.ExtractRequest{Html: []byte{0x89, 'P', 'N', 'G'}, Url: "https://example.com/a.png", ContentType: "image/png"},
			wantCode: failure.UnsupportedContent,
			wantGRPC: codes.FailedPrecondition,
		},
		{
			name:     "invalid url",
			req:      &internalv1.ExtractRequest{Html: []byte("<p>x</p>"), Url: "not a url"},
			wantCode: failure.InvalidURL,
			wantGRPC: codes.InvalidArgument,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Extract(ctx, tt.req)
			if got := status.Code(err); got != tt.wantGRPC {
				t.Errorf("grpc code = %v, want %v", got, tt.wantGRPC)
			}
			if got := failure.CodeOf(failure.FromRemote(err)); got != tt.wantCode {
				t.Errorf("code = %v, want %v", got, tt.wantCode)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(dial(t)).Check(ctx, &healthpb.HealthCheckRequest{Service: internalv1.ExtractorService_ServiceDesc.ServiceName})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("status = %v", resp.GetStatus())
	}
}

func TestRunStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Config{Addr: "127.0.0.1:0"}, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestRunReportsListenErrors(t *testing.T) {
	t.Parallel()
	err := Run(context.Background(), Config{Addr: "256.0.0.1:bad"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		t.Fatal("Run succeeded on a bad address")
	}
}
