// Package grpcserve runs a distill gRPC server the same way in every
// process: health checking, server reflection, and a graceful stop when the
// context ends.
package grpcserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
)

// GracePeriod is how long in-flight calls get to finish on shutdown before
// they are cut.
const GracePeriod = 10 * time.Second

// Server is a gRPC server with health and reflection registered.
type Server struct {
	GRPC   *grpc.Server
	Health *health.Server
	logger *slog.Logger
}

// New builds a server; register adds the services. Every registered service
// is reported SERVING once Serve starts.
func New(logger *slog.Logger, register func(*grpc.Server), opts ...grpc.ServerOption) *Server {
	s := grpc.NewServer(opts...)
	register(s)
	h := health.NewServer()
	healthpb.RegisterHealthServer(s, h)
	reflection.Register(s)
	return &Server{GRPC: s, Health: h, logger: logger}
}

// Serve accepts connections on lis until ctx ends, then stops gracefully.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	for name := range s.GRPC.GetServiceInfo() {
		s.Health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	s.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.logger.Info("grpc serving", "addr", lis.Addr().String())

	errc := make(chan error, 1)
	go func() { errc <- s.GRPC.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("grpc serve: %w", err)
	case <-ctx.Done():
	}
	s.Health.Shutdown()
	stopped := make(chan struct{})
	go func() {
		s.GRPC.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(GracePeriod):
		s.GRPC.Stop()
	}
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("grpc serve: %w", err)
	}
	s.logger.Info("grpc stopped", "addr", lis.Addr().String())
	return nil
}

// ListenAndServe listens on addr (host:port) and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return s.Serve(ctx, lis)
}
