package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// RunMetadata names a call's run in its gRPC metadata.
const RunMetadata = "distill-run-id"

// maxRunBytes bounds a run id.
const maxRunBytes = 128

// Server serves HostService over an Engine.
type Server struct {
	distillv1.UnimplementedHostServiceServer
	engine *Engine
	// open is true when the gRPC server takes calls without a token (its
	// own machine's): they run as the default actor.
	open bool
}

// NewServer serves engine; open says the server admits calls without a
// token, which then run as DefaultActor.
func NewServer(engine *Engine, open bool) *Server { return &Server{engine: engine, open: open} }

// who names the caller from its token and its run from the metadata.
func (s *Server) who(ctx context.Context) (Who, *Envelope) {
	md, _ := metadata.FromIncomingContext(ctx)
	runs := md.Get(RunMetadata)
	if len(runs) != 1 || runs[0] == "" || len(runs[0]) > maxRunBytes {
		return Who{}, Refuse(InvalidInput, "the call needs one "+RunMetadata+" metadata value of 1 to 128 bytes naming its run")
	}
	if actor, ok := s.engine.policies.Current().Names().Of(ctx); ok {
		return Who{Actor: actor, Run: runs[0]}, nil
	}
	if s.open {
		return Who{Actor: DefaultActor, Run: runs[0]}, nil
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
		env = s.engine.Inspect(ctx, who, Input{URL: req.GetUrl(), Instruction: req.GetInstruction(), MaxBytes: maxBytes(req.MaxBytes)})
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceInspectResponse{Envelope: pe}, err
}

// Extract implements HostService.
func (s *Server) Extract(ctx context.Context, req *distillv1.HostServiceExtractRequest) (*distillv1.HostServiceExtractResponse, error) {
	who, refused := s.who(ctx)
	env := refused
	if env == nil {
		env = s.engine.Extract(ctx, who, req.GetSchema(), Input{URL: req.GetUrl(), Instruction: req.GetInstruction(), MaxBytes: maxBytes(req.MaxBytes)})
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceExtractResponse{Envelope: pe}, err
}

// Summarize implements HostService.
func (s *Server) Summarize(ctx context.Context, req *distillv1.HostServiceSummarizeRequest) (*distillv1.HostServiceSummarizeResponse, error) {
	who, refused := s.who(ctx)
	env := refused
	if env == nil {
		env = s.engine.Summarize(ctx, who, Input{URL: req.GetUrl(), Instruction: req.GetInstruction(), MaxBytes: maxBytes(req.MaxBytes), Length: req.GetLength()})
	}
	pe, err := toProto(env)
	return &distillv1.HostServiceSummarizeResponse{Envelope: pe}, err
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
