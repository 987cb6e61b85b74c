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

	"distill.dev/proto/fetchopts"
)

// GracePeriod is how long in-flight calls get to finish on shutdown before
// they are cut.
const GracePeriod = 10 * time.Second

// MaxMessageBytes bounds one gRPC message, sent or received: a fetched
// body at the largest max_bytes a caller may ask for (larger than any
// rendered DOM), with 16 MiB of room for the rest of the message. gRPC's
// own default of 4 MiB would refuse ordinary pages.
const MaxMessageBytes = fetchopts.MaxBytesLimit + 16<<20

// Liveness is the health service name that answers SERVING as long as the
// process serves at all; the empty name is readiness, which also needs the
// process's dependencies. Kubernetes probes ask for each by name.
const Liveness = "liveness"

// ReadinessInterval is how often a readiness check runs, and how long one
// may take.
const ReadinessInterval = 2 * time.Second

// Server is a gRPC server with health and reflection registered.
type Server struct {
	GRPC   *grpc.Server
	Health *health.Server
	logger *slog.Logger
	ready  func(context.Context) error
	// readyEvery is ReadinessInterval, shorter in tests (export_test.go).
	readyEvery time.Duration
}

// SetReadiness makes readiness (health service "") follow check: SERVING
// while it returns nil, NOT_SERVING otherwise. Without a check the server
// is ready as soon as it serves. Call it before Serve.
func (s *Server) SetReadiness(check func(context.Context) error) {
	s.ready = check
}

// New builds a server; register adds the services. Once Serve starts,
// liveness is SERVING, and readiness too unless SetReadiness gave it a
// check to follow.
func New(logger *slog.Logger, register func(*grpc.Server), opts ...grpc.ServerOption) *Server {
	base := []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes), grpc.ChainUnaryInterceptor(allowlistsIn)}
	s := grpc.NewServer(append(base, opts...)...)
	register(s)
	h := health.NewServer()
	healthpb.RegisterHealthServer(s, h)
	reflection.Register(s)
	return &Server{GRPC: s, Health: h, logger: logger, readyEvery: ReadinessInterval}
}

// Serve accepts connections on lis until ctx ends, then stops gracefully.
func (s *Server) Serve(ctx context.Context, lis net.Listener) error {
	s.Health.SetServingStatus(Liveness, healthpb.HealthCheckResponse_SERVING)
	if s.ready == nil {
		s.setReady(true)
	} else {
		s.setReady(false)
		stop := s.watchReadiness(ctx)
		defer stop()
	}
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

func (s *Server) setReady(ok bool) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if ok {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.Health.SetServingStatus("", st)
	for name := range s.GRPC.GetServiceInfo() {
		s.Health.SetServingStatus(name, st)
	}
}

// watchReadiness runs the readiness check now and every interval until ctx
// ends or stop is called, logging each change.
func (s *Server) watchReadiness(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ready := false
		check := func() {
			cctx, ccancel := context.WithTimeout(ctx, s.readyEvery)
			err := s.ready(cctx)
			ccancel()
			if ctx.Err() != nil {
				return
			}
			switch {
			case err == nil && !ready:
				s.logger.Info("ready")
			case err != nil && ready:
				s.logger.Warn("not ready", "err", err.Error())
			case err != nil:
				s.logger.Debug("not ready yet", "err", err.Error())
			}
			ready = err == nil
			s.setReady(ready)
		}
		check()
		t := time.NewTicker(s.readyEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				check()
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// ListenAndServe listens on addr (host:port) and serves until ctx ends.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", addr, err)
	}
	return s.Serve(ctx, lis)
}
