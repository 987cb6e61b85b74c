package telemetrytest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// A process given the receiver's environment sends its spans within the
// short batch delay, without waiting for its shutdown.
func TestEnvMakesAProcessExportPromptly(t *testing.T) {
	rcv, err := telemetrytest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	t.Setenv("OTEL_SERVICE_NAME", "")
	for _, kv := range rcv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	shutdown, err := telemetry.Setup(context.Background(), "renderer")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(context.Background()) }()

	ctx, root := telemetry.Start(context.Background(), "distill.render")
	_, child := telemetry.Start(ctx, "distill.render.page")
	child.End()
	root.End()

	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spans, err := rcv.Wait(wait, func(s []telemetrytest.Span) bool { return len(s) >= 2 })
	if err != nil {
		t.Fatal(err)
	}
	if err := telemetrytest.Connected(spans); err != nil {
		t.Error(err)
	}
	if spans[0].Service != "renderer" {
		t.Errorf("service %q, want renderer", spans[0].Service)
	}
}

func TestConnected(t *testing.T) {
	span := func(trace, id, parent string) telemetrytest.Span {
		return telemetrytest.Span{TraceID: trace, SpanID: id, ParentSpanID: parent, Name: "s" + id, Service: "svc"}
	}
	tests := []struct {
		name    string
		spans   []telemetrytest.Span
		wantErr string
	}{
		{name: "one tree", spans: []telemetrytest.Span{span("t", "1", ""), span("t", "2", "1"), span("t", "3", "2")}},
		{name: "root under a process that exports nothing", spans: []telemetrytest.Span{span("t", "1", "f0"), span("t", "2", "1")}},
		{name: "none", wantErr: "no spans"},
		{name: "two traces", spans: []telemetrytest.Span{span("t", "1", ""), span("u", "2", "")}, wantErr: "2 traces"},
		{name: "a span whose parent is missing", spans: []telemetrytest.Span{span("t", "1", ""), span("t", "2", "1"), span("t", "3", "9")},
			wantErr: "s3 (svc, span 3), parent \"9\""},
		{name: "a span id twice", spans: []telemetrytest.Span{span("t", "1", ""), span("t", "1", "")}, wantErr: "appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := telemetrytest.Connected(tt.spans)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Connected = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Connected = %v, want an error saying %q", err, tt.wantErr)
			}
		})
	}
}
