package telemetry

import (
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	"google.golang.org/grpc"
)

// notHealth leaves health checks out of traces and RPC metrics: probes
// every few seconds would bury the calls that matter.
var notHealth = otelgrpc.WithFilter(filters.Not(filters.HealthCheck()))

// ServerOptions trace and measure every call a gRPC server serves, joining
// the caller's trace. Pass them to grpcserve.New, after Setup.
func ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(notHealth))}
}

// DialOptions trace and measure every call a gRPC client makes, carrying
// the trace context to the server. Pass them to grpc.NewClient, after Setup.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler(notHealth))}
}
