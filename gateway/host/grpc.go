package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Metadata of a HostService call: its run, the client's session an
// approval may be bound to, and, from an operator token only, the actor.
const (
	RunMetadata     = "distill-run-id"
	SessionMetadata = "distill-session-id"
	ActorMetadata   = "distill-actor"
)

// maxRunBytes bounds a run id.
const maxRunBytes = 128

// Server serves HostService over an Engine.
type Server struct {
	distillv1.UnimplementedHostServiceServer
	engine *Engine
	// open is true when the gRPC server takes calls without a token (its
	// own machine's): they run as the default actor.
	open bool
	// operator says whether a call carries an operator's token (or the
	// server is open): only those make the host's calls.
	operator func(context.Context) bool
}

// NewServer serves engine; open says the server admits calls without a
// token, which then run as DefaultActor. operator tells an operator's call
// (grpcauth.Guard.Operator): the guard admits only operators to the
// approval and operation calls, and the server asks again where one method
// serves both (an extraction with the host's own schema).
func NewServer(engine *Engine, open bool, operator func(context.Context) bool) *Server {
	return &Server{engine: engine, open: open, operator: operator}
}

// who names the caller from its token and its run from the metadata: an
// operator names the actor it calls for in distill-actor.
func (s *Server) who(ctx context.Context) (Who, *Envelope) {
	md, _ := metadata.FromIncomingContext(ctx)
	one := func(key string, required bool) (string, *Envelope) {
		v := md.Get(key)
		if len(v) == 0 && !required {
			return "", nil
		}
		if len(v) != 1 || v[0] == "" || len(v[0]) > maxRunBytes {
			return "", Refuse(InvalidInput, "the call needs one "+key+" metadata value of 1 to 128 bytes")
		}
		return v[0], nil
	}
	run, refused := one(RunMetadata, true)
	if refused != nil {
		return Who{}, refused
	}
	session, refused := one(SessionMetadata, false)
	if refused != nil {
		return Who{}, refused
	}
	named, refused := one(ActorMetadata, false)
	if refused != nil {
		return Who{}, refused
	}
	if actor, ok := s.engine.policies.Current().Names().Of(ctx); ok {
		if named != "" && named != actor {
			return Who{}, Refuse(NotAuthorized, "an actor's token calls for its own actor only")
		}
		return Who{Actor: actor, Run: run, Session: session}, nil
	}
	if named != "" && s.operator(ctx) {
		return Who{Actor: named, Run: run, Session: session}, nil
	}
	if named != "" {
		return Who{}, Refuse(NotAuthorized, ActorMetadata+" is an operator's to send")
	}
	if s.open {
		return Who{Actor: DefaultActor, Run: run, Session: session}, nil
	}
	return Who{}, Refuse(NotAuthorized, "this token is not one the host's policy maps to an actor")
}

func maxBytes(p *int64) int {
	if p == nil {
		return 0
	}
	if *p <= 0 {
		return -1 // the engine refuses it
	}
	return int(min(*p, math.MaxInt32))
}

// Inspect implements HostService.
func (s *Server) Inspect(ctx context.Context, req *distillv1.HostServiceInspectRequest) (*distillv1.HostServiceInspectResponse, error) {
	who, refused := s.who(ctx)
	env := refused
	if env == nil {
		env = s.engine.Inspect(ctx, who, Input{URL: req.GetUrl(), Instruction: req.GetInstruction(), MaxBytes: maxBytes(req.MaxBytes), OperationID: req.GetOperationId()})
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceInspectResponse{Envelope: pe}, err
}

// Extract implements HostService.
func (s *Server) Extract(ctx context.Context, req *distillv1.HostServiceExtractRequest) (*distillv1.HostServiceExtractResponse, error) {
	who, refused := s.who(ctx)
	env := refused
	in := Input{URL: req.GetUrl(), Instruction: req.GetInstruction(), MaxBytes: maxBytes(req.MaxBytes), OperationID: req.GetOperationId()}
	switch {
	case env != nil:
	case req.GetInlineSchema() != nil && req.GetSchema() != "":
		env = Refuse(InvalidInput, "name a schema or give one, not both")
	case req.GetInlineSchema() != nil && !s.operator(ctx):
		env = Refuse(NotAuthorized, "only the host's operator token may give a schema; name one of the policy's")
	case req.GetInlineSchema() != nil:
		raw, err := protojson.Marshal(req.GetInlineSchema())
		if err != nil {
			env = Refuse(InvalidInput, "the schema cannot be read")
		} else {
			env = s.engine.ExtractWith(ctx, who, raw, in)
		}
	default:
		env = s.engine.Extract(ctx, who, req.GetSchema(), in)
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceExtractResponse{Envelope: pe}, err
}

// Summarize implements HostService.
func (s *Server) Summarize(ctx context.Context, req *distillv1.HostServiceSummarizeRequest) (*distillv1.HostServiceSummarizeResponse, error) {
	who, refused := s.who(ctx)
	env := refused
	if env == nil {
		env = s.engine.Summarize(ctx, who, Input{URL: req.GetUrl(), Instruction: req.GetInstruction(), MaxBytes: maxBytes(req.MaxBytes), Length: req.GetLength(), OperationID: req.GetOperationId()})
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceSummarizeResponse{Envelope: pe}, err
}

// Act implements HostService.
func (s *Server) Act(ctx context.Context, req *distillv1.HostServiceActRequest) (*distillv1.HostServiceActResponse, error) {
	who, refused := s.who(ctx)
	env := refused
	if env == nil {
		env = s.engine.Act(ctx, who, ActInput{
			URL: req.GetUrl(), ApprovalID: req.GetApprovalId(), Method: req.GetMethod(), Selector: req.GetSelector(),
			Description: req.GetDescription(), Arguments: req.GetArguments(), MaxBytes: maxBytes(req.MaxBytes), OperationID: req.GetOperationId(),
		})
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceActResponse{Envelope: pe}, err
}

// The host's calls answer gRPC errors, not envelopes: their caller is the
// platform, not a model.

// CreateApproval implements HostService.
func (s *Server) CreateApproval(ctx context.Context, req *distillv1.HostServiceCreateApprovalRequest) (*distillv1.HostServiceCreateApprovalResponse, error) {
	if err := s.host(ctx); err != nil {
		return nil, err
	}
	if _, ok := s.engine.policies.Current().Actor(req.GetActor()); !ok {
		return nil, status.Errorf(codes.InvalidArgument, "the policy names no actor %q", req.GetActor())
	}
	action := Action{Method: req.GetMethod(), Selector: req.GetSelector(), Arguments: req.GetArguments()}
	if _, err := actSteps(action); err != nil {
		return nil, grpcError(err)
	}
	ttl := time.Duration(req.GetTtlSeconds()) * time.Second
	ap, err := s.engine.approvals.Create(ctx, req.GetActor(), req.GetRun(), req.GetUrl(), action, ttl, Bindings{
		OperationID: req.GetOperationId(), PageDigest: req.GetPageDigest(), SessionID: req.GetSessionId(),
	}, req.GetAllowUnsafe())
	if err != nil {
		return nil, grpcError(err)
	}
	return &distillv1.HostServiceCreateApprovalResponse{Approval: approvalProto(ap)}, nil
}

// RevokeApproval implements HostService.
func (s *Server) RevokeApproval(ctx context.Context, req *distillv1.HostServiceRevokeApprovalRequest) (*distillv1.HostServiceRevokeApprovalResponse, error) {
	if err := s.host(ctx); err != nil {
		return nil, err
	}
	ap, err := s.engine.approvals.Revoke(ctx, req.GetId())
	if err != nil {
		return nil, grpcError(err)
	}
	return &distillv1.HostServiceRevokeApprovalResponse{Approval: approvalProto(ap)}, nil
}

// ReserveOperation implements HostService.
func (s *Server) ReserveOperation(ctx context.Context, req *distillv1.HostServiceReserveOperationRequest) (*distillv1.HostServiceReserveOperationResponse, error) {
	if err := s.host(ctx); err != nil {
		return nil, err
	}
	if _, ok := s.engine.policies.Current().Actor(req.GetActor()); !ok {
		return nil, status.Errorf(codes.InvalidArgument, "the policy names no actor %q", req.GetActor())
	}
	if req.GetRun() == "" || len(req.GetRun()) > maxRunBytes {
		return nil, status.Error(codes.InvalidArgument, "run must be 1 to 128 bytes")
	}
	op, err := s.engine.operations.Reserve(ctx, req.GetActor(), req.GetRun())
	if err != nil {
		return nil, grpcError(err)
	}
	return &distillv1.HostServiceReserveOperationResponse{Operation: operationProto(op)}, nil
}

// GetOperation implements HostService.
func (s *Server) GetOperation(ctx context.Context, req *distillv1.HostServiceGetOperationRequest) (*distillv1.HostServiceGetOperationResponse, error) {
	if err := s.host(ctx); err != nil {
		return nil, err
	}
	op, err := s.engine.operations.Get(ctx, req.GetId())
	if err != nil {
		return nil, grpcError(err)
	}
	return &distillv1.HostServiceGetOperationResponse{Operation: operationProto(op)}, nil
}

// host refuses a host call from anyone but the operator, and one this
// gateway has no store for.
func (s *Server) host(ctx context.Context) error {
	if !s.operator(ctx) {
		return status.Error(codes.PermissionDenied, "this is the host's call: it needs an operator token")
	}
	if s.engine.approvals == nil || s.engine.operations == nil {
		return status.Error(codes.FailedPrecondition, "this gateway keeps no approvals or operations")
	}
	return nil
}

// grpcError maps a safe code onto a gRPC status.
func grpcError(err error) error {
	var he *Error
	if !errors.As(err, &he) {
		return status.Error(codes.Unavailable, "the host store cannot be reached")
	}
	code := map[Code]codes.Code{
		InvalidInput: codes.InvalidArgument, NotAuthorized: codes.PermissionDenied,
		ApprovalRequired: codes.NotFound, SessionUnknown: codes.NotFound, ApprovalStale: codes.FailedPrecondition,
	}[he.Code]
	if code == codes.OK {
		code = codes.FailedPrecondition
	}
	return status.Error(code, he.Error())
}

func approvalProto(ap *Approval) *distillv1.HostApproval {
	return &distillv1.HostApproval{
		Id: ap.ID, Actor: ap.Actor, Run: ap.Run, Url: ap.URL, ActionDigest: ap.ActionDigest,
		ExpiresAt: ap.Expires.UTC().Format(time.RFC3339Nano), OperationId: ap.OperationID,
		PageDigest: ap.PageDigest, SessionId: ap.SessionID, Revoked: ap.Revoked, Consumed: ap.Consumed, AllowUnsafe: ap.AllowUnsafe,
	}
}

func operationProto(op *Operation) *distillv1.HostOperation {
	return &distillv1.HostOperation{
		Id: op.ID, Actor: op.Actor, Run: op.Run, Tool: op.Tool, Url: op.URL, State: op.State,
		ErrorCode: string(op.ErrorCode), CreatedAt: op.Created.UTC().Format(time.RFC3339Nano),
		UpdatedAt: op.Updated.UTC().Format(time.RFC3339Nano),
	}
}

// toProto carries the envelope over: locator and data through their JSON,
// so a number is the double the digest was computed over.
func toProto(env *Envelope) (*distillv1.HostEnvelope, error) {
	out := &distillv1.HostEnvelope{
		Status: env.Status, OperationId: env.OperationID, FinalUrl: env.FinalURL,
		CapturedAt: env.CapturedAt, Digest: env.Digest, Truncated: env.Truncated,
		Locator: &structpb.Struct{}, Data: &structpb.Value{},
	}
	if err := viaJSON(env.Locator, out.Locator); err != nil {
		return nil, err
	}
	if err := viaJSON(env.Data, out.Data); err != nil {
		return nil, err
	}
	if env.Error != nil {
		out.Error = &distillv1.HostError{Code: string(env.Error.Code), Message: env.Error.Message}
	}
	return out, nil
}

func viaJSON(v any, dst proto.Message) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	if err := protojson.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	return nil
}
