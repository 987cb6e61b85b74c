package render

import (
	"context"
	"net/http/httptest"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// Sets OpenTelemetry's process-wide providers: not parallel.
func TestRenderIsTracedAndCounted(t *testing.T) {
	requireChromium(t)
	telemetrytest.Setup(t, "renderer")
	rec := telemetrytest.Record(t)

	srv := httptest.NewServer(page("<p>rendered</p>"))
	defer srv.Close()
	r := shared
	if _, err := r.Render(context.Background(), localReq(srv.URL+"/?session=secret", nil)); err != nil {
		t.Fatal(err)
	}
	// Loopback without allow_local: refused before any browser work.
	if _, err := r.Render(context.Background(), &internalv1.RenderRequest{Url: srv.URL}); err == nil {
		t.Fatal("loopback render without allow_local succeeded")
	}

	renders := telemetrytest.Named(rec.Spans(), "distill.render")
	if len(renders) != 2 {
		t.Fatalf("%d distill.render spans, want 2: %v", len(renders), rec.Spans())
	}
	if got, want := renders[0].Attributes["url.full"], srv.URL+"/"; got != want {
		t.Errorf("url.full = %q, want %q, without the query", got, want)
	}
	if got := renders[1].Attributes["error.type"]; got != "blocked" {
		t.Errorf("refused render's error.type = %q, want blocked", got)
	}
	m, err := telemetrytest.Scrape(telemetry.MetricsHandler())
	if err != nil {
		t.Fatal(err)
	}
	for _, outcome := range []string{"ok", "blocked"} {
		if got, _ := m.Value("distill_renders_total", "distill_outcome", outcome); got != 1 {
			t.Errorf("distill_renders_total{%s} = %v, want 1", outcome, got)
		}
		if got, _ := m.Value("distill_render_duration_seconds", "distill_outcome", outcome); got != 1 {
			t.Errorf("distill_render_duration_seconds{%s} count = %v, want 1", outcome, got)
		}
	}
}
