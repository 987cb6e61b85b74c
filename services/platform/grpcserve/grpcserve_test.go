package grpcserve_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/grpcserve"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestServeReportsHealthAndStopsWithContext(t *testing.T) {
	srv := grpcserve.New(quiet, func(s *grpc.Server) {
		internalv1.RegisterRendererServiceServer(s, internalv1.UnimplementedRendererServiceServer{})
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	for _, service := range []string{"", "distill.internal.v1.RendererService"} {
		res, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
		if err != nil || res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health(%q) = %v, %v; want SERVING", service, res, err)
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve = %v after its context ended, want nil", err)
		}
	case <-time.After(grpcserve.GracePeriod + 5*time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
}

func TestListenErrorNamesTheAddress(t *testing.T) {
	srv := grpcserve.New(quiet, func(*grpc.Server) {})
	err := srv.ListenAndServe(context.Background(), "256.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "listen 256.0.0.1:1") {
		t.Fatalf("err = %v, want a listen error naming the address", err)
	}
}

func TestReadinessFollowsItsCheckAndLivenessDoesNot(t *testing.T) {
	var mu sync.Mutex
	depErr := errors.New("extractor unreachable")
	srv := grpcserve.New(quiet, func(*grpc.Server) {})
	grpcserve.SetReadinessInterval(srv, 20*time.Millisecond)
	srv.SetReadiness(func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return depErr
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	defer func() {
		cancel()
		<-done
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	waitFor := func(service string, want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			res, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
			if err == nil && res.GetStatus() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("health(%q) = %v, %v; want %v", service, res, err, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor(grpcserve.Liveness, healthpb.HealthCheckResponse_SERVING)
	waitFor("", healthpb.HealthCheckResponse_NOT_SERVING)
	mu.Lock()
	depErr = nil
	mu.Unlock()
	waitFor("", healthpb.HealthCheckResponse_SERVING)
	mu.Lock()
	depErr = errors.New("extractor gone again")
	mu.Unlock()
	waitFor("", healthpb.HealthCheckResponse_NOT_SERVING)
	waitFor(grpcserve.Liveness, healthpb.HealthCheckResponse_SERVING)
}
