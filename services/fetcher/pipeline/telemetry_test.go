package pipeline

import (
	"context"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// Sets OpenTelemetry's process-wide providers: not parallel.
func TestRunRecordsItsFallback(t *testing.T) {
	telemetrytest.Setup(t, "distill")
	rec := telemetrytest.Record(t)

	renders := 0
	tests := []struct{ body, render string }{
		{"<div/>", "rendered app content"}, // thin, and the render is better: kept
		{"<div/>", "<p/>"},                 // thin, and the render is no better: dropped
	}
	for _, tt := range tests {
		p := New(quiet, page(tt.body), &charsExtractor{}, rendered(tt.render, &renders))
		if _, err := p.Run(context.Background(), "http://127.0.0.1/app?key=secret", &distillv1.FetchOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	spans := telemetrytest.Named(rec.Spans(), "distill.pipeline")
	if len(spans) != 2 {
		t.Fatalf("%d pipeline spans, want 2", len(spans))
	}
	for i, want := range []string{"true", "false"} {
		s := spans[i]
		if s.Attributes["distill.fallback.reason"] != ReasonJSApp || s.Attributes["distill.fallback.kept"] != want {
			t.Errorf("pipeline span %d attributes %v, want reason js_app kept %s", i, s.Attributes, want)
		}
		if got := s.Attributes["url.full"]; got != "http://127.0.0.1/app" {
			t.Errorf("url.full = %q, want the URL without its query", got)
		}
	}
	m, err := telemetrytest.Scrape(telemetry.MetricsHandler())
	if err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{"true", "false"} {
		if got, _ := m.Value("distill_pipeline_fallbacks_total", "distill_fallback_reason", ReasonJSApp, "distill_fallback_kept", kept); got != 1 {
			t.Errorf("fallbacks{js_app, kept=%s} = %v, want 1", kept, got)
		}
	}
	if got, _ := m.Value("distill_requests_total", "distill_service", "pipeline", "distill_outcome", "ok"); got != 2 {
		t.Errorf("pipeline requests = %v, want 2", got)
	}
}
