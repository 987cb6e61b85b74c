package host

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/grpcserve"
)

const apiToken = "api-token-0123456789abcdef"

// HostService over gRPC, behind the guard distill serve --policy builds:
// the actor's token reaches HostService only, and names the actor.
func TestHostServiceOverGRPC(t *testing.T) {
	r := newRig(t, "", "", "tokens: [{token_env: TEAM_TOKEN, actor: default}]")
	guard, err := grpcauth.New(grpcauth.Config{
		Tokens: []string{apiToken}, ScopedTokens: r.engine.Policies().Current().Tokens(),
		ScopedPrefix: "/" + distillv1.HostService_ServiceDesc.ServiceName + "/",
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserve.New(slog.New(slog.NewTextHandler(io.Discard, nil)), func(s *grpc.Server) {
		distillv1.RegisterHostServiceServer(s, NewServer(r.engine, false))
		distillv1.RegisterDistillServiceServer(s, distillv1.UnimplementedDistillServiceServer{})
	}, guard.ServerOptions()...)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() { cancel(); <-done })

	dial := func(token string) *grpc.ClientConn {
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(token))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	team := dial(teamToken)
	client := distillv1.NewHostServiceClient(team)
	runCtx := metadata.AppendToOutgoingContext(t.Context(), RunMetadata, "grpc-run-1")

	res, err := client.Inspect(runCtx, &distillv1.HostServiceInspectRequest{Url: r.site.onURL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	env := res.GetEnvelope()
	if env.GetStatus() != StatusOK || len(env.GetData().GetListValue().GetValues()) == 0 {
		t.Fatalf("envelope %v", env)
	}
	// The digest is that of the data as it arrived.
	data := env.GetData().AsInterface()
	if d, _ := Digest(data); d != env.GetDigest() {
		t.Fatalf("digest %s, data's %s", env.GetDigest(), d)
	}

	res, err = client.Inspect(t.Context(), &distillv1.HostServiceInspectRequest{Url: r.site.onURL + "/"})
	if err != nil || res.GetEnvelope().GetError().GetCode() != string(InvalidInput) {
		t.Fatalf("a call without a run: %v, %v", res, err)
	}
	// An actor's token reaches nothing else.
	_, err = distillv1.NewDistillServiceClient(team).Fetch(runCtx, &distillv1.FetchRequest{Url: r.site.onURL})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("an actor's token called Fetch: %v", err)
	}
	// An API token the policy maps to no actor is not one.
	res, err = distillv1.NewHostServiceClient(dial(apiToken)).Inspect(runCtx, &distillv1.HostServiceInspectRequest{Url: r.site.onURL + "/"})
	if err != nil || res.GetEnvelope().GetError().GetCode() != string(NotAuthorized) {
		t.Fatalf("an API token without an actor: %v, %v", res, err)
	}
}
