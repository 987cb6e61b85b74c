package render

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestRenderReportsUnavailable(t *testing.T) {
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, err := r.Render(context.Background(), &distillv1.RenderRequest{Url: "http://127.0.0.1/"})
	if got := failure.CodeOf(err); got != failure.RenderFailed {
		t.Fatalf("code = %v, want RenderFailed (err %v)", got, err)
	}
}

func TestRenderHonoursCancelledContext(t *testing.T) {
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := r.Render(ctx, &distillv1.RenderRequest{Url: "http://127.0.0.1/"})
	if got := failure.CodeOf(err); got != failure.Canceled {
		t.Fatalf("code = %v, want Canceled", got)
	}
}
