package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// These tests set OpenTelemetry's process-wide providers: none runs in
// parallel.

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// noExporter clears the environment that would make Setup export.
func noExporter(t *testing.T) {
	t.Helper()
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES"} {
		t.Setenv(k, "")
	}
}

func setup(t *testing.T, service string) {
	t.Helper()
	shutdown, err := telemetry.Setup(context.Background(), service)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
}

const incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestWithoutAnExporterTheTraceContextPassesThrough(t *testing.T) {
	for _, name := range []string{"none", ""} {
		t.Run("OTEL_TRACES_EXPORTER="+name, func(t *testing.T) {
			noExporter(t)
			t.Setenv("OTEL_TRACES_EXPORTER", name)
			setup(t, "fetcher")

			in := propagation.HeaderCarrier{}
			in.Set("traceparent", incoming)
			in.Set("baggage", "tenant=acme")
			ctx := otel.GetTextMapPropagator().Extract(context.Background(), in)
			ctx, span := telemetry.Start(ctx, "distill.job")
			if span.IsRecording() {
				t.Error("span is recorded with no exporter to send it to")
			}
			out := propagation.HeaderCarrier{}
			otel.GetTextMapPropagator().Inject(ctx, out)
			span.End()

			// A process that records nothing hands on the context it was
			// given, so the spans after it join the spans before it.
			if got := out.Get("traceparent"); got != incoming {
				t.Errorf("outgoing traceparent %q, want the incoming %q", got, incoming)
			}
			if got := baggage.FromContext(otel.GetTextMapPropagator().Extract(context.Background(), out)).Member("tenant").Value(); got != "acme" {
				t.Errorf("baggage tenant = %q, want acme", got)
			}
		})
	}
}

func TestSetupExportsOverOTLPHTTP(t *testing.T) {
	tests := []struct {
		name        string
		env         map[string]string
		wantService string
	}{
		{name: "plain", wantService: "fetcher"},
		{name: "gzip", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, wantService: "fetcher"},
		{name: "service name from the environment", env: map[string]string{"OTEL_SERVICE_NAME": "fetcher-eu"}, wantService: "fetcher-eu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rcv, err := telemetrytest.Start()
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			noExporter(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			shutdown, err := telemetry.Setup(context.Background(), "fetcher")
			if err != nil {
				t.Fatal(err)
			}
			ctx, root := telemetry.Start(context.Background(), "distill.pipeline",
				trace.WithAttributes(telemetry.URLAttributes("https://user:pw@example.com/a/b?token=secret#frag")...))
			_, child := telemetry.Start(ctx, "distill.fetch")
			child.End()
			telemetry.End(root, failure.New(failure.Timeout, "fetch https://example.com/a/b?token=secret: too slow"))
			// Shutdown flushes: no waiting on the batch delay.
			if err := shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}

			spans := rcv.Spans()
			if len(spans) != 2 {
				t.Fatalf("received %d spans, want 2: %v", len(spans), spans)
			}
			if err := telemetrytest.Connected(spans); err != nil {
				t.Error(err)
			}
			for _, s := range spans {
				if s.Service != tt.wantService {
					t.Errorf("span %s service %q, want %q", s.Name, s.Service, tt.wantService)
				}
			}
			root1 := telemetrytest.Named(spans, "distill.pipeline")[0]
			if got := root1.Attributes["url.full"]; got != "https://example.com/a/b" {
				t.Errorf("url.full = %q, want the URL without user, query and fragment", got)
			}
			if got := root1.Attributes["error.type"]; got != "timeout" {
				t.Errorf("error.type = %q, want timeout", got)
			}
			for _, secret := range []string{"secret", "pw"} {
				for _, leak := range telemetrytest.Carrying(spans, secret) {
					t.Errorf("a span carries a secret of the URL: %s", leak)
				}
			}
		})
	}
}

func TestSetupRejectsAnUnknownExporter(t *testing.T) {
	noExporter(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "carrier-pigeon")
	_, err := telemetry.Setup(context.Background(), "fetcher")
	if err == nil || !strings.Contains(err.Error(), "carrier-pigeon") {
		t.Fatalf("Setup = %v, want an error naming the exporter", err)
	}
}

func TestMetricsHandlerServesDistillMetrics(t *testing.T) {
	telemetrytest.Setup(t, "fetcher")
	ctx := context.Background()
	telemetry.CountRequest(ctx, "fetcher", "Fetch", nil)
	telemetry.CountRequest(ctx, "fetcher", "Fetch", failure.New(failure.Timeout, "slow"))
	telemetry.RecordFetch(ctx, 250*time.Millisecond, false, nil)
	telemetry.CountCacheLookup(ctx, telemetry.CacheHit)
	telemetry.RecordHostWait(ctx, telemetry.LimitRate, 2*time.Second)
	stop, err := telemetry.ObserveJobsPending(func(context.Context) (int64, int64, error) { return 3, 1, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()

	m, err := telemetrytest.Scrape(telemetry.MetricsHandler())
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		family string
		labels []string
		want   float64
	}{
		{"distill_requests_total", []string{"distill_service", "fetcher", "distill_method", "Fetch", "distill_outcome", "ok"}, 1},
		{"distill_requests_total", []string{"distill_outcome", "timeout"}, 1},
		{"distill_fetch_duration_seconds", []string{"distill_outcome", "ok", "distill_fetch_source", "network"}, 1},
		{"distill_cache_lookups_total", []string{"distill_cache_result", "hit"}, 1},
		{"distill_fetch_host_waits_total", []string{"distill_host_limit", "rate"}, 1},
		{"distill_jobs_pending", []string{"distill_jobs_state", "queued"}, 3},
		{"distill_jobs_pending", []string{"distill_jobs_state", "held"}, 1},
	}
	for _, c := range checks {
		if got, ok := m.Value(c.family, c.labels...); !ok || got != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.family, c.labels, got, ok, c.want)
		}
	}
	if got := m.Sum("distill_fetch_host_wait_duration_seconds"); got != 2 {
		t.Errorf("host wait seconds = %v, want 2", got)
	}
	if _, ok := m.Value("go_goroutines"); !ok {
		t.Error("no Go runtime metrics")
	}
}

func TestServeMetrics(t *testing.T) {
	telemetrytest.Setup(t, "fetcher")
	telemetry.CountRequest(context.Background(), "renderer", "Render", nil)

	// A port in use is an error that names it.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	err = telemetry.ServeMetrics(context.Background(), busy.Addr().String(), quiet)
	if err == nil || !strings.Contains(err.Error(), busy.Addr().String()) {
		t.Errorf("ServeMetrics on a busy port = %v, want an error naming %s", err, busy.Addr())
	}

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- telemetry.ServeMetrics(ctx, addr, quiet) }()

	var body string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		break
	}
	if !strings.Contains(body, `distill_requests_total{distill_method="Render"`) {
		t.Errorf("/metrics lacks the renderer's request count:\n%s", body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeMetrics after its context ended = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeMetrics did not return after its context ended")
	}
}

// extractor answers every call with an error, enough to carry a trace.
type extractor struct {
	internalv1.UnimplementedExtractorServiceServer
}

func (extractor) Extract(ctx context.Context, _ *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	_, span := telemetry.Start(ctx, "distill.extract")
	span.End()
	return nil, failure.New(failure.UnsupportedContent, "no")
}

func TestGRPCOptionsCarryTheTrace(t *testing.T) {
	telemetrytest.Setup(t, "extractor")
	rec := telemetrytest.Record(t)

	conn := telemetrytest.GRPC(t, func(s *grpc.Server) {
		internalv1.RegisterExtractorServiceServer(s, extractor{})
	})

	// Health probes are left out of traces.
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	root, span := telemetry.Start(context.Background(), "test")
	_, err := internalv1.NewExtractorServiceClient(conn).Extract(root, &internalv1.ExtractRequest{Url: "https://example.com/"})
	span.End()
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("Extract = %v, want the server's FailedPrecondition", err)
	}

	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spans, _ := rec.Wait(wait, func(s []telemetrytest.Span) bool { return len(s) >= 4 })
	if len(spans) != 4 {
		t.Fatalf("%d spans, want 4 (test, client, server, distill.extract): %v", len(spans), spans)
	}
	if err := telemetrytest.Connected(spans); err != nil {
		t.Error(err)
	}
	for _, s := range spans {
		if strings.Contains(s.Name, "Health") {
			t.Errorf("health check traced: %v", s)
		}
	}
}

func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, "ok"},
		{failure.New(failure.RobotsDisallowed, "no"), "robots_disallowed"},
		{context.DeadlineExceeded, "timeout"},
		{errors.New("boom"), "internal"},
	}
	for _, tt := range tests {
		if got := telemetry.OutcomeOf(tt.err); got != tt.want {
			t.Errorf("OutcomeOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
