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
	// PDFCacheDir keeps the compiled PDF engine between processes; empty
	// compiles it once per process.
	PDFCacheDir string
}

// Run serves ExtractorService on cfg.Addr until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	budget := cfg.MemoryBudget
	if budget == 0 {
		budget = extract.DefaultMemoryBudget
	}
	ex := extract.New(logger, extract.WithMemoryBudget(budget), extract.WithPDFCacheDir(cfg.PDFCacheDir))
	defer ex.Close()
	return NewWith(logger, ex, cfg.GRPCOptions...).ListenAndServe(ctx, cfg.Addr)
}

// New returns the gRPC server with ExtractorService, health and reflection
// registered, for callers that bring their own listener. Its extractor's
// PDF engine, if a PDF starts it, lasts as long as the process; NewWith
// leaves closing it to the caller.
func New(logger *slog.Logger, opts ...grpc.ServerOption) *grpcserve.Server {
	return NewWith(logger, extract.New(logger), opts...)
}

// NewWith is New serving ex.
func NewWith(logger *slog.Logger, ex *extract.Extractor, opts ...grpc.ServerOption) *grpcserve.Server {
	return grpcserve.New(logger, func(s *grpc.Server) {
		internalv1.RegisterExtractorServiceServer(s, ex)
	}, opts...)
}
