// Package server runs the renderer as its own gRPC process.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"google.golang.org/grpc"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/renderer/render"
)

// Config is the renderer process's configuration.
type Config struct {
	// Addr is the gRPC listen address, host:port.
	Addr string
	// Chromium is the browser binary; empty means render.DefaultChromium.
	Chromium string
	// MaxPages caps concurrent renders; 0 means render.DefaultMaxPages.
	MaxPages int
	// NoSandbox runs Chromium without its own sandbox, for containers
	// that are the sandbox.
	NoSandbox bool
	// NoCookies renders every page anonymously, whatever cookies a
	// request carries.
	NoCookies bool
	// AllowLocal lets requests ask for loopback (allow_local); without it
	// they are refused.
	AllowLocal bool
	// Own holds the process's listening addresses, which no render may
	// reach; Run adds its gRPC listener. Nil starts an empty set.
	Own *netpolicy.Own
	// GRPCOptions are added to the server (telemetry).
	GRPCOptions []grpc.ServerOption
}

// Run serves RendererService on cfg.Addr until ctx ends, then closes the
// browser: no Chromium outlives the process's serving.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	lis, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	return serve(ctx, lis, cfg, logger)
}

// serve is Run on a listener of the caller's.
func serve(ctx context.Context, lis net.Listener, cfg Config, logger *slog.Logger) error {
	if cfg.Own == nil {
		cfg.Own = netpolicy.NewOwn()
	}
	cfg.Own.Add(lis.Addr(), "gRPC port")
	r := newRenderer(cfg, logger)
	defer func() { _ = r.Close() }()
	srv := New(logger, r, cfg.GRPCOptions...)
	srv.SetReadiness(r.Ready)
	return srv.Serve(ctx, lis)
}

// newRenderer returns the Renderer cfg describes.
func newRenderer(cfg Config, logger *slog.Logger) *render.Renderer {
	opts := []render.Option{render.WithMaxPages(cfg.MaxPages), render.WithAllowLocal(cfg.AllowLocal), render.WithOwn(cfg.Own)}
	if cfg.Chromium != "" {
		opts = append(opts, render.WithChromium(cfg.Chromium))
	}
	if cfg.NoSandbox {
		opts = append(opts, render.WithoutSandbox())
	}
	if cfg.NoCookies {
		opts = append(opts, render.WithoutCookies())
	}
	return render.New(logger, opts...)
}

// New returns the gRPC server with r as RendererService, and health and
// reflection, for callers that bring their own listener. The caller closes
// r.
func New(logger *slog.Logger, r *render.Renderer, opts ...grpc.ServerOption) *grpcserve.Server {
	return grpcserve.New(logger, func(s *grpc.Server) {
		internalv1.RegisterRendererServiceServer(s, r)
	}, opts...)
}
