// Package server runs the renderer as its own gRPC process.
package server

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/proto/grpcserve"
	"distill.dev/services/renderer/render"
)

// Config is the renderer process's configuration.
type Config struct {
	// Addr is the gRPC listen address, host:port.
	Addr string
}

// Run serves RendererService on cfg.Addr until ctx ends.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	r := render.New(logger)
	defer func() { _ = r.Close() }()
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterRendererServiceServer(s, r)
	})
	return srv.ListenAndServe(ctx, cfg.Addr)
}
