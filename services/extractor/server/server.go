// Package server serves the extractor over gRPC.
package server

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/platform/grpcserve"
)

// Config is how the extractor service is served.
type Config struct {
	// Addr is the host:port to listen on.
	Addr string
	// GRPCOptions are added to the server (telemetry).
	GRPCOptions []grpc.ServerOption
	// MemoryBudget is the memory, in bytes, extractions may hold at once;
	// zero means extract.DefaultMemoryBudget.
	MemoryBudget int64
}

// Run serves ExtractorService on cfg.Addr until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	budget := cfg.MemoryBudget
	if budget == 0 {
		budget = extract.DefaultMemoryBudget
	}
	return NewWith(logger, []extract.Option{extract.WithMemoryBudget(budget)}, cfg.GRPCOptions...).ListenAndServe(ctx, cfg.Addr)
}

// New returns the gRPC server with ExtractorService, health and reflection
// registered, for callers that bring their own listener.
func New(logger *slog.Logger, opts ...grpc.ServerOption) *grpcserve.Server {
	return NewWith(logger, nil, opts...)
}

// NewWith is New with the extractor's options.
func NewWith(logger *slog.Logger, exOpts []extract.Option, opts ...grpc.ServerOption) *grpcserve.Server {
	ex := extract.New(logger, exOpts...)
	return grpcserve.New(logger, func(s *grpc.Server) {
		internalv1.RegisterExtractorServiceServer(s, ex)
	}, opts...)
}
