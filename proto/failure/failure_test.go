package failure_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

type failingExtractor struct {
	internalv1.UnimplementedExtractorServiceServer
	err error
}

func (f failingExtractor) Extract(context.Context, *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	return nil, f.err
}

// TestCodeSurvivesGRPC sends typed errors through a real gRPC connection and
// checks the client sees the same code and message as an in-process caller.
func TestCodeSurvivesGRPC(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		wantCode distillv1.ErrorCode
		wantGRPC codes.Code
	}{
		{"blocked", failure.New(failure.Blocked, "blocked by network policy: 10.0.0.1"), failure.Blocked, codes.PermissionDenied},
		{"too large wrapped", fmt.Errorf("fetch: %w", failure.New(failure.TooLarge, "body over 10 bytes")), failure.TooLarge, codes.ResourceExhausted},
		{"unsupported", failure.New(failure.UnsupportedContent, `unsupported content type "image/png"`), failure.UnsupportedContent, codes.FailedPrecondition},
		{"invalid argument", failure.New(failure.InvalidArgument, "bad selector"), failure.InvalidArgument, codes.InvalidArgument},
		{"deadline", context.DeadlineExceeded, failure.Timeout, codes.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := serve(t, failingExtractor{err: tt.err})
			_, err := client.Extract(context.Background(), &internalv1.ExtractRequest{})
			if got := status.Code(err); got != tt.wantGRPC {
				t.Errorf("grpc code = %v, want %v", got, tt.wantGRPC)
			}
			if got := failure.CodeOf(err); got != tt.wantCode {
				t.Errorf("CodeOf(remote) = %v, want %v", got, tt.wantCode)
			}
			local := failure.FromRemote(err)
			if got := failure.CodeOf(local); got != tt.wantCode {
				t.Errorf("CodeOf(FromRemote) = %v, want %v", got, tt.wantCode)
			}
			if local.Error() != tt.err.Error() && tt.wantCode != failure.Timeout {
				t.Errorf("message = %q, want %q", local.Error(), tt.err.Error())
			}
		})
	}
}

func TestIsMatchesByCode(t *testing.T) {
	err := fmt.Errorf("outer: %w", failure.Wrap(failure.Timeout, context.DeadlineExceeded, "fetch took too long"))
	if !errors.Is(err, &failure.Error{Code: failure.Timeout}) {
		t.Error("errors.Is by code failed")
	}
	if errors.Is(err, &failure.Error{Code: failure.Blocked}) {
		t.Error("errors.Is matched another code")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Error("cause not reachable through Unwrap")
	}
}

func TestProtoRoundTrip(t *testing.T) {
	pe := failure.Proto(failure.New(failure.Network, "connection refused"))
	back := failure.FromProto(pe)
	if back.Code != failure.Network || back.Message != "connection refused" {
		t.Fatalf("round trip = %+v", back)
	}
	if failure.Proto(nil) != nil || failure.FromProto(nil) != nil {
		t.Fatal("nil must stay nil")
	}
	if got := failure.CodeOf(errors.New("plain")); got != failure.Internal {
		t.Fatalf("plain error code = %v, want Internal", got)
	}
}

func serve(t *testing.T, srv internalv1.ExtractorServiceServer) internalv1.ExtractorServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	internalv1.RegisterExtractorServiceServer(s, srv)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return internalv1.NewExtractorServiceClient(conn)
}
