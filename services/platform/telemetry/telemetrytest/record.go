package telemetrytest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Recorder keeps the spans of one test in memory.
type Recorder struct {
	exp *tracetest.InMemoryExporter
}

// Record makes the global tracer provider record every span, sampled, in
// memory, and the global propagator W3C trace context's, until the test
// ends. Tests that use it must not run in parallel.
func Record(t testing.TB) *Recorder {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		_ = tp.Shutdown(context.Background())
	})
	return &Recorder{exp: exp}
}

// Spans returns the spans ended so far.
func (r *Recorder) Spans() []Span {
	var out []Span
	for _, s := range r.exp.GetSpans() {
		attrs := make(map[string]string, len(s.Attributes))
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		var service string
		if s.Resource != nil {
			if v, ok := s.Resource.Set().Value("service.name"); ok {
				service = v.String()
			}
		}
		var links []string
		for _, l := range s.Links {
			links = append(links, l.SpanContext.SpanID().String())
		}
		var parent string
		if s.Parent.HasSpanID() {
			parent = s.Parent.SpanID().String()
		}
		out = append(out, Span{
			TraceID:      s.SpanContext.TraceID().String(),
			SpanID:       s.SpanContext.SpanID().String(),
			ParentSpanID: parent,
			Name:         s.Name,
			Service:      service,
			Attributes:   attrs,
			Links:        links,
		})
	}
	return out
}

// Wait returns the spans ended so far once done says they are enough, or
// an error naming what had ended when ctx ends. A gRPC server ends its
// span after the answer is on its way, so a client can hold the answer
// before the server's span is recorded.
func (r *Recorder) Wait(ctx context.Context, done func([]Span) bool) ([]Span, error) {
	for {
		spans := r.Spans()
		if done(spans) {
			return spans, nil
		}
		select {
		case <-time.After(10 * time.Millisecond):
		case <-ctx.Done():
			return spans, fmt.Errorf("telemetrytest: %w waiting for spans; %d ended: %v", ctx.Err(), len(spans), spans)
		}
	}
}

// Named returns the spans called name.
func Named(spans []Span, name string) []Span {
	var out []Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}
