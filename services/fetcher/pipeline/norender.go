package pipeline

import (
	"context"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// NoRenderer stands in for a renderer a process was not given: js=auto
// keeps pages as fetched, and js=always fails clearly.
type NoRenderer struct{}

// Render fails.
func (NoRenderer) Render(context.Context, *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	return nil, failure.New(failure.RenderFailed, "no renderer is configured (give the renderer's address)")
}
