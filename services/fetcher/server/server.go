// Package server runs the fetcher service: FetcherService over gRPC, with
// the health and reflection services every distill server has.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"google.golang.org/grpc"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/proto/grpcserve"
	"distill.dev/services/fetcher/fetch"
)

// Config is what the fetcher process needs to run.
type Config struct {
	// Addr is the gRPC listen address, host:port.
	Addr string
	// UserAgentVersion is the version sent in the User-Agent header.
	UserAgentVersion string
}

// Run serves until ctx ends, then stops gracefully.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	lis, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	return serve(ctx, lis, cfg, logger)
}

func serve(ctx context.Context, lis net.Listener, cfg Config, logger *slog.Logger) error {
	f := fetch.New(logger, fetch.WithUserAgent(cfg.UserAgentVersion))
	defer f.Close()
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterFetcherServiceServer(s, f)
	})
	return srv.Serve(ctx, lis)
}
