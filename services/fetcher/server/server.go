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
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/fetch"
)

// Config is what the fetcher process needs to run.
type Config struct {
	// Addr is the gRPC listen address, host:port.
	Addr string
	// UserAgentVersion is the version sent in the User-Agent header.
	UserAgentVersion string
	// CacheDir holds the fetch cache; empty means cache.DefaultDir.
	CacheDir string
	// NoCache runs without the on-disk cache.
	NoCache bool
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
	opts := []fetch.Option{fetch.WithUserAgent(cfg.UserAgentVersion)}
	if !cfg.NoCache {
		// A cache that cannot be opened costs repeated fetches, not the
		// service.
		if c, err := cache.Open(cfg.CacheDir); err != nil {
			logger.Warn("fetching without a cache", "err", err.Error())
		} else {
			opts = append(opts, fetch.WithCache(c))
		}
	}
	f := fetch.New(logger, opts...)
	defer f.Close()
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterFetcherServiceServer(s, f)
	})
	return srv.Serve(ctx, lis)
}
