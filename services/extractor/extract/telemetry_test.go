package extract

import (
	"context"
	"io"
	"log/slog"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// Sets OpenTelemetry's process-wide tracer provider: not parallel.
func TestExtractIsTraced(t *testing.T) {
	rec := telemetrytest.Record(t)
	e := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, root := telemetry.Start(context.Background(), "test")
	req := htmlReq(articlePage, nil)
	req.Url += "?reader=secret"
	if _, err := e.Extract(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Extract(ctx, &internalv1.ExtractRequest{Url: "mailto:someone"}); err == nil {
		t.Fatal("extract of a mailto: URL succeeded")
	}
	root.End()

	spans := rec.Spans()
	if err := telemetrytest.Connected(spans); err != nil {
		t.Fatal(err)
	}
	extracts := telemetrytest.Named(spans, "distill.extract")
	if len(extracts) != 2 {
		t.Fatalf("%d distill.extract spans, want 2: %v", len(extracts), spans)
	}
	if got := extracts[0].Attributes["url.full"]; got != pageURLForTests {
		t.Errorf("url.full = %q, want %q, without the query", got, pageURLForTests)
	}
	if got := extracts[1].Attributes["error.type"]; got != "invalid_url" {
		t.Errorf("failed extract's error.type = %q, want invalid_url", got)
	}
}
