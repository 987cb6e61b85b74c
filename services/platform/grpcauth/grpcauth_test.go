package grpcauth_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/grpcserve"
)

const (
	apiToken      = "api-token-0123456789abcdef"
	otherAPIToken = "api-token-second-0123456789"
	operatorToken = "operator-token-0123456789abcdef"
)

// serve runs DistillService, every call unimplemented, behind guard: a call
// that passes the guard answers Unimplemented.
func serve(t *testing.T, cfg grpcauth.Config) string {
	t.Helper()
	g, err := grpcauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return serveGuard(t, g)
}

func serveGuard(t *testing.T, g *grpcauth.Guard) string {
	t.Helper()
	srv := grpcserve.New(slog.New(slog.NewTextHandler(io.Discard, nil)), func(s *grpc.Server) {
		distillv1.RegisterDistillServiceServer(s, distillv1.UnimplementedDistillServiceServer{})
	}, g.ServerOptions()...)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return lis.Addr().String()
}

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, append([]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

var guarded = grpcauth.Config{
	Tokens:          []string{apiToken, otherAPIToken},
	OperatorTokens:  []string{operatorToken},
	OperatorMethods: []string{distillv1.DistillService_CacheClear_FullMethodName, distillv1.DistillService_CachePrune_FullMethodName},
}

func TestCallsNeedAToken(t *testing.T) {
	addr := serve(t, guarded)
	tests := []struct {
		name  string
		token string
		// unary and stream are the codes of Fetch and FetchBatch; operator
		// that of CacheClear and CachePrune.
		unary, operator codes.Code
	}{
		{"no token", "", codes.Unauthenticated, codes.Unauthenticated},
		{"a wrong token", "not-a-token-anyone-was-given", codes.Unauthenticated, codes.Unauthenticated},
		{"a token's prefix", apiToken[:len(apiToken)-1], codes.Unauthenticated, codes.Unauthenticated},
		{"an API token", apiToken, codes.Unimplemented, codes.PermissionDenied},
		{"another API token", otherAPIToken, codes.Unimplemented, codes.PermissionDenied},
		{"an operator token", operatorToken, codes.Unimplemented, codes.Unimplemented},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []grpc.DialOption
			if tt.token != "" {
				opts = append(opts, grpcauth.DialOption(tt.token))
			}
			client := distillv1.NewDistillServiceClient(dial(t, addr, opts...))
			ctx := t.Context()
			_, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: "https://example.com/"})
			if status.Code(err) != tt.unary {
				t.Errorf("Fetch: %v, want %v", err, tt.unary)
			}
			stream, err := client.FetchBatch(ctx, &distillv1.FetchBatchRequest{Urls: []string{"https://example.com/"}})
			if err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != tt.unary {
				t.Errorf("FetchBatch: %v, want %v", err, tt.unary)
			}
			_, err = client.CacheClear(ctx, &distillv1.CacheClearRequest{})
			if status.Code(err) != tt.operator {
				t.Errorf("CacheClear: %v, want %v", err, tt.operator)
			}
			_, err = client.CachePrune(ctx, &distillv1.CachePruneRequest{})
			if status.Code(err) != tt.operator {
				t.Errorf("CachePrune: %v, want %v", err, tt.operator)
			}
			if tt.operator == codes.PermissionDenied && !strings.Contains(status.Convert(err).Message(), "operator token") {
				t.Errorf("CachePrune refused with %q, want it to say an operator token is needed", status.Convert(err).Message())
			}
			if tt.unary == codes.Unauthenticated && !strings.Contains(status.Convert(err).Message(), "bearer token") {
				t.Errorf("refused with %q, want it to name the bearer token", status.Convert(err).Message())
			}
		})
	}
}

func TestHealthAndReflectionStayOpen(t *testing.T) {
	conn := dial(t, serve(t, guarded))
	res, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health without a token = %v, %v; want SERVING", res, err)
	}
	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	got, err := stream.Recv()
	if err != nil {
		t.Fatalf("reflection without a token: %v", err)
	}
	var names []string
	for _, s := range got.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !slices.Contains(names, "distill.v1.DistillService") {
		t.Errorf("reflection lists %v, want DistillService among them", names)
	}
}

// Without tokens the guard lets everything through, operator calls too:
// the server is then on loopback, for its own machine's user.
func TestNoTokensNoGuard(t *testing.T) {
	client := distillv1.NewDistillServiceClient(dial(t, serve(t, grpcauth.Config{OperatorMethods: guarded.OperatorMethods})))
	if _, err := client.CacheClear(t.Context(), &distillv1.CacheClearRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("CacheClear without tokens configured: %v, want it to reach the service", err)
	}
}

func TestBadTokensAreRefused(t *testing.T) {
	for _, tt := range []struct{ name, token, want string }{
		{"short", "abc", "3 characters, want at least 16"},
		{"spaces", "a token with spaces in it", "white space"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := grpcauth.New(grpcauth.Config{Tokens: []string{apiToken, tt.token}})
			if err == nil || !strings.Contains(err.Error(), "token 2: ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error naming token 2 and %q", err, tt.want)
			}
		})
	}
}

func TestTokenLists(t *testing.T) {
	if got := grpcauth.ParseList(" a , b,,c "); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("ParseList = %q", got)
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# the CI's\n"+apiToken+"\n\n  "+otherAPIToken+"  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := grpcauth.ReadFile(path)
	if err != nil || !slices.Equal(got, []string{apiToken, otherAPIToken}) {
		t.Errorf("ReadFile = %q, %v", got, err)
	}
	if _, err := grpcauth.ReadFile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("ReadFile of a missing file: no error")
	}
}

func TestLoopback(t *testing.T) {
	loopback := []string{"127.0.0.1:7000", "127.1.2.3:7000", "[::1]:7000", "localhost:7000", "[::ffff:127.0.0.1]:7000"}
	elsewhere := []string{":7000", "0.0.0.0:7000", "[::]:7000", "10.0.0.1:7000", "example.com:7000", "7000"}
	for _, addr := range loopback {
		if !grpcauth.Loopback(addr) {
			t.Errorf("Loopback(%q) = false, want true", addr)
		}
	}
	for _, addr := range elsewhere {
		if grpcauth.Loopback(addr) {
			t.Errorf("Loopback(%q) = true, want false", addr)
		}
	}
}

func TestCheckHeader(t *testing.T) {
	g, err := grpcauth.New(guarded)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, header string
		want         error
	}{
		{"api token", "Bearer " + apiToken, nil},
		{"operator token", "bearer " + operatorToken, nil},
		{"none", "", grpcauth.ErrNoToken},
		{"other scheme", "Basic " + apiToken, grpcauth.ErrNoToken},
		{"unknown token", "Bearer " + apiToken + "x", grpcauth.ErrUnknownToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := g.CheckHeader(tc.header); err != tc.want {
				t.Errorf("CheckHeader(%q) = %v, want %v", tc.header, err, tc.want)
			}
		})
	}
	open, err := grpcauth.New(grpcauth.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := open.CheckHeader(""); err != nil {
		t.Errorf("a guard without tokens refused a request: %v", err)
	}
}
