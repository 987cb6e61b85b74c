// Package telemetry sets up OpenTelemetry for a distill process and holds
// what distill records: its spans and its distill.* metrics.
//
// A main calls Setup once and defers the shutdown it returns, serves
// MetricsHandler (or runs ServeMetrics) for Prometheus, and passes
// ServerOptions to grpcserve.New and DialOptions to grpc.NewClient. The
// other packages record through the functions here, which use the global
// providers Setup installs; before Setup, and in tests that never call it,
// they record nothing.
//
// Where traces go is set by the standard environment:
//
//	OTEL_TRACES_EXPORTER                otlp, console or none. Unset: otlp when
//	                                    an OTLP endpoint is set, else none.
//	                                    console prints spans on standard
//	                                    output, where the CLI prints pages.
//	OTEL_EXPORTER_OTLP_ENDPOINT         the collector, e.g. http://collector:4318
//	                                    (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
//	OTEL_EXPORTER_OTLP_PROTOCOL         http/protobuf (the default) or grpc
//	OTEL_EXPORTER_OTLP_HEADERS          e.g. the collector's credentials
//	OTEL_SERVICE_NAME                   replaces the service name given to Setup
//	OTEL_RESOURCE_ATTRIBUTES            more resource attributes, k=v,k=v
//	OTEL_TRACES_SAMPLER, ..._ARG        sampling; parentbased_always_on by default
//	OTEL_BSP_SCHEDULE_DELAY             milliseconds between span exports (5000);
//	                                    tests set it low. Shutdown flushes anyway.
//
// Without an exporter no span is recorded, yet the trace context still
// flows through the process, in and out: a process that exports nothing
// never breaks the trace of those around it, whose spans join over it.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"distill.dev/services/platform/version"
)

// scope is the instrumentation scope of distill's own spans and metrics.
const scope = "distill.dev"

// Setup installs the global tracer provider, W3C trace-context and baggage
// propagation, and a meter provider whose metrics MetricsHandler serves.
// service names the process (fetcher, extractor, renderer, distill...)
// unless OTEL_SERVICE_NAME says otherwise. The shutdown it returns flushes
// the spans not yet exported; call it once, on exit.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	res, err := newResource(ctx, service)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	exp, err := spanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("telemetry: trace exporter: %w", err)
	}
	shutdownMetrics, err := setupMetrics(res)
	if err != nil {
		if exp != nil {
			_ = exp.Shutdown(ctx)
		}
		return nil, fmt.Errorf("telemetry: metrics: %w", err)
	}
	shutdowns := []func(context.Context) error{shutdownMetrics}

	var tp trace.TracerProvider = noop.NewTracerProvider()
	if exp != nil {
		sdk := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithBatcher(exp))
		tp = sdk
		shutdowns = append(shutdowns, sdk.Shutdown)
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	return func(ctx context.Context) error {
		var errs []error
		for _, s := range shutdowns {
			errs = append(errs, s(ctx))
		}
		return errors.Join(errs...)
	}, nil
}

// spanExporter returns the exporter the environment asks for, or nil for
// none. Unlike autoexport's own default, an unset OTEL_TRACES_EXPORTER means
// none unless an OTLP endpoint is set: a laptop run has no collector to
// send to, and should not complain about it.
func spanExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	var opts []autoexport.SpanOption
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		opts = append(opts, autoexport.WithFallbackSpanExporter(func(context.Context) (sdktrace.SpanExporter, error) {
			return nil, nil
		}))
	}
	exp, err := autoexport.NewSpanExporter(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: %w", os.Getenv("OTEL_TRACES_EXPORTER"), err)
	}
	if exp == nil || autoexport.IsNoneSpanExporter(exp) {
		return nil, nil
	}
	return exp, nil
}

// newResource describes the process: service name and version, overridden
// by OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, host and pid so that
// replicas tell apart.
func newResource(ctx context.Context, service string) (*resource.Resource, error) {
	attrs := []resource.Option{
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithProcessPID(),
	}
	attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(version.String())))
	// Later options override earlier ones: the environment has the last word.
	attrs = append(attrs, resource.WithAttributes(semconv.ServiceName(service)), resource.WithFromEnv())
	res, err := resource.New(ctx, attrs...)
	if errors.Is(err, resource.ErrPartialResource) {
		// A detail no detector could find (a host name) is no reason to
		// run without telemetry.
		return res, nil
	}
	return res, err
}
