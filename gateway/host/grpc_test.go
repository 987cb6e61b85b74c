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
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"distill.dev/gateway/host/llm"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/grpcserve"
)

const (
	apiToken      = "api-token-0123456789abcdef"
	operatorToken = "operator-token-0123456789abcdef"
)

// serveHost serves r's engine as distill serve --policy does, behind a
// guard with an API, an operator and the policy's tokens, and returns a
// dialer.
func serveHost(t *testing.T, r *rig) func(token string) *grpc.ClientConn {
	t.Helper()
	guard, err := grpcauth.New(grpcauth.Config{
		Tokens: []string{apiToken}, OperatorTokens: []string{operatorToken},
		OperatorMethods: []string{
			distillv1.HostService_CreateApproval_FullMethodName, distillv1.HostService_RevokeApproval_FullMethodName,
			distillv1.HostService_ReserveOperation_FullMethodName, distillv1.HostService_GetOperation_FullMethodName,
		},
		ScopedTokens: r.engine.Policies().Current().Tokens(),
		ScopedPrefix: "/" + distillv1.HostService_ServiceDesc.ServiceName + "/",
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserve.New(slog.New(slog.NewTextHandler(io.Discard, nil)), func(s *grpc.Server) {
		distillv1.RegisterHostServiceServer(s, NewServer(r.engine, false, guard.Operator))
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
	return func(token string) *grpc.ClientConn {
		conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(token))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
}

// HostService over gRPC, behind the guard distill serve --policy builds:
// the actor's token reaches HostService only, and names the actor.
func TestHostServiceOverGRPC(t *testing.T) {
	r := newRig(t, "", "", "tokens: [{token_env: TEAM_TOKEN, actor: default}]")
	dial := serveHost(t, r)
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

// The host's calls over gRPC: approvals and operations are the operator's,
// act uses an approval once, and a schema given in the call is the
// operator's too.
func TestHostServiceHostCalls(t *testing.T) {
	r := newRig(t, llm.OpenAI, "    budget: {max_steps: 40}", "tokens: [{token_env: TEAM_TOKEN, actor: default}]")
	dial := serveHost(t, r)
	team, operator := distillv1.NewHostServiceClient(dial(teamToken)), distillv1.NewHostServiceClient(dial(operatorToken))
	shop := r.site.onURL + "/shop"
	run := metadata.AppendToOutgoingContext(t.Context(), RunMetadata, "grpc-act", SessionMetadata, "sess-1")

	create := &distillv1.HostServiceCreateApprovalRequest{Actor: DefaultActor, Run: "grpc-act", Url: shop, Method: "click", Selector: "#buy", TtlSeconds: 60, SessionId: "sess-1", AllowUnsafe: true}
	for name, c := range map[string]distillv1.HostServiceClient{"actor": team, "api": distillv1.NewHostServiceClient(dial(apiToken))} {
		if _, err := c.CreateApproval(t.Context(), create); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("%s token created an approval: %v", name, err)
		}
		if _, err := c.ReserveOperation(t.Context(), &distillv1.HostServiceReserveOperationRequest{Actor: DefaultActor, Run: "grpc-act"}); status.Code(err) != codes.PermissionDenied {
			t.Fatalf("%s token reserved an operation: %v", name, err)
		}
	}
	for name, bad := range map[string]*distillv1.HostServiceCreateApprovalRequest{
		"no ttl":       {Actor: DefaultActor, Run: "r", Url: shop, Method: "click", Selector: "#buy"},
		"ghost actor":  {Actor: "ghost", Run: "r", Url: shop, Method: "click", Selector: "#buy", TtlSeconds: 60},
		"bad method":   {Actor: DefaultActor, Run: "r", Url: shop, Method: "drag", Selector: "#buy", TtlSeconds: 60},
		"no selector":  {Actor: DefaultActor, Run: "r", Url: shop, Method: "click", TtlSeconds: 60},
		"over a day":   {Actor: DefaultActor, Run: "r", Url: shop, Method: "click", Selector: "#buy", TtlSeconds: 86401},
		"no run given": {Actor: DefaultActor, Url: shop, Method: "click", Selector: "#buy", TtlSeconds: 60},
	} {
		if _, err := operator.CreateApproval(t.Context(), bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v", name, err)
		}
	}
	op, err := operator.ReserveOperation(t.Context(), &distillv1.HostServiceReserveOperationRequest{Actor: DefaultActor, Run: "grpc-act"})
	if err != nil || op.GetOperation().GetState() != OpReserved {
		t.Fatalf("reserve: %v, %v", op, err)
	}
	create.OperationId = op.GetOperation().GetId()
	ap, err := operator.CreateApproval(t.Context(), create)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := ActionDigest(Action{Method: "click", Selector: "#buy"})
	if ap.GetApproval().GetActionDigest() != digest || ap.GetApproval().GetExpiresAt() == "" {
		t.Fatalf("approval %v", ap)
	}
	act := &distillv1.HostServiceActRequest{Url: shop, ApprovalId: ap.GetApproval().GetId(), Method: "click", Selector: "#buy", OperationId: proto.String(op.GetOperation().GetId())}
	res, err := team.Act(run, act)
	if err != nil || res.GetEnvelope().GetStatus() != StatusOK || r.site.orders.Load() != 1 {
		t.Fatalf("act: %v, %v, %d orders", res, err, r.site.orders.Load())
	}
	got, err := operator.GetOperation(t.Context(), &distillv1.HostServiceGetOperationRequest{Id: op.GetOperation().GetId()})
	if err != nil || got.GetOperation().GetState() != OpClosed || got.GetOperation().GetTool() != "act" {
		t.Fatalf("operation after act: %v, %v", got, err)
	}
	if res, _ := team.Act(run, act); res.GetEnvelope().GetError().GetCode() != string(ApprovalStale) {
		t.Fatalf("a second act: %v", res)
	}

	// Revoked before use.
	create.OperationId = ""
	ap, err = operator.CreateApproval(t.Context(), create)
	if err != nil {
		t.Fatal(err)
	}
	if rv, err := operator.RevokeApproval(t.Context(), &distillv1.HostServiceRevokeApprovalRequest{Id: ap.GetApproval().GetId()}); err != nil || !rv.GetApproval().GetRevoked() {
		t.Fatalf("revoke: %v, %v", rv, err)
	}
	act.ApprovalId, act.OperationId = ap.GetApproval().GetId(), nil
	if res, _ := team.Act(run, act); res.GetEnvelope().GetError().GetCode() != string(ApprovalStale) {
		t.Fatalf("a revoked approval: %v", res)
	}
	if _, err := operator.RevokeApproval(t.Context(), &distillv1.HostServiceRevokeApprovalRequest{Id: "never-made"}); status.Code(err) != codes.NotFound {
		t.Fatalf("revoking nothing: %v", err)
	}
	if _, err := operator.GetOperation(t.Context(), &distillv1.HostServiceGetOperationRequest{Id: "never-made"}); status.Code(err) != codes.NotFound {
		t.Fatalf("reading nothing: %v", err)
	}
	if r.site.orders.Load() != 1 {
		t.Fatalf("%d orders, want 1", r.site.orders.Load())
	}

	// A schema in the call: the operator's, for the actor it names.
	schema, _ := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}})
	r.wire.Set(`{"name":"Widget"}`, "", 0)
	ext := &distillv1.HostServiceExtractRequest{Url: shop, InlineSchema: schema}
	if res, err := team.Extract(run, ext); err != nil || res.GetEnvelope().GetError().GetCode() != string(NotAuthorized) {
		t.Fatalf("an actor's token gave a schema: %v, %v", res, err)
	}
	opRun := metadata.AppendToOutgoingContext(t.Context(), RunMetadata, "grpc-op", ActorMetadata, DefaultActor)
	res2, err := operator.Extract(opRun, ext)
	if err != nil || res2.GetEnvelope().GetStatus() != StatusOK || res2.GetEnvelope().GetData().GetStructValue().GetFields()["name"].GetStringValue() != "Widget" {
		t.Fatalf("the operator's schema: %v, %v", res2, err)
	}
	if res, _ := team.Extract(metadata.AppendToOutgoingContext(run, ActorMetadata, "someone"), &distillv1.HostServiceExtractRequest{Url: shop, Schema: "product"}); res.GetEnvelope().GetError().GetCode() != string(NotAuthorized) {
		t.Fatalf("an actor's token named another actor: %v", res)
	}
	deep, _ := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"$ref": "https://evil.example/s.json"}}})
	if res, _ := operator.Extract(opRun, &distillv1.HostServiceExtractRequest{Url: shop, InlineSchema: deep}); res.GetEnvelope().GetError().GetCode() != string(InvalidInput) {
		t.Fatalf("a remote reference: %v", res)
	}
}
