package telemetrytest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/telemetry"
)

// Setup runs telemetry.Setup for a test that reads metrics through
// telemetry.MetricsHandler, exporting no spans, and shuts it down when the
// test ends. Tests that use it must not run in parallel.
func Setup(t testing.TB, service string) {
	t.Helper()
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	shutdown, err := telemetry.Setup(context.Background(), service)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := shutdown(context.Background()); err != nil {
			t.Errorf("telemetry shutdown: %v", err)
		}
	})
}

// GRPC serves the services register adds on a loopback port with
// telemetry.ServerOptions, as a distill process serves them, and returns a
// client connection to it made with telemetry.DialOptions. Both stop when
// the test ends.
func GRPC(t testing.TB, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserve.New(slog.New(slog.DiscardHandler), register, telemetry.ServerOptions()...)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("grpc server: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), append(telemetry.DialOptions(), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// Carrying lists the span attributes whose values contain text, such as a
// secret a URL's query held, as "span: key=value" lines.
func Carrying(spans []Span, text string) []string {
	var out []string
	for _, s := range spans {
		for k, v := range s.Attributes {
			if strings.Contains(v, text) {
				out = append(out, fmt.Sprintf("%v: %s=%q", s, k, v))
			}
		}
	}
	return out
}
