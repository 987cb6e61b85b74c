// Package render owns headless Chromium: it renders a page in an isolated
// browser context under the network policy and hands the DOM back for
// extraction.
//
// This build has no browser driver yet: Render reports that rendering is
// unavailable, which the pipeline treats like any failed render (js=auto
// keeps the fetched page; js=always fails with a clear error).
package render

import (
	"context"
	"log/slog"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// ErrUnavailable is returned while no browser driver is built in.
var ErrUnavailable = failure.New(failure.RenderFailed, "headless rendering is not available in this build of distill")

// Renderer is the RendererService.
type Renderer struct {
	distillv1.UnimplementedRendererServiceServer
	logger *slog.Logger
}

// New returns a Renderer.
func New(logger *slog.Logger) *Renderer {
	return &Renderer{logger: logger}
}

// Render renders req.Url headless. It is both the gRPC method and the
// in-process entry point.
func (r *Renderer) Render(ctx context.Context, req *distillv1.RenderRequest) (*distillv1.RenderResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, ErrUnavailable
}
