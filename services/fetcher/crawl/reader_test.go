package crawl

import (
	"context"
	"errors"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

type renderLog struct{ calls *[]string }

func (r renderLog) Render(context.Context, *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	*r.calls = append(*r.calls, "render")
	return &internalv1.RenderResponse{}, nil
}

// TestPacedRenderWaitsItsTurn: a headless render loads the page again, so
// it takes the host's turn first; a turn refused (the crawl's end) is no
// render.
func TestPacedRenderWaitsItsTurn(t *testing.T) {
	var calls []string
	p := paced{renderLog{&calls}, func(context.Context) error { calls = append(calls, "turn"); return nil }}
	if _, err := p.Render(t.Context(), &internalv1.RenderRequest{}); err != nil || len(calls) != 2 || calls[0] != "turn" {
		t.Errorf("calls %q, %v; want a turn, then the render", calls, err)
	}
	calls = nil
	stop := errors.New("canceled")
	p.before = func(context.Context) error { return stop }
	if _, err := p.Render(t.Context(), &internalv1.RenderRequest{}); !errors.Is(err, stop) || len(calls) != 0 {
		t.Errorf("calls %q, %v; want no render once the turn is refused", calls, err)
	}
}
