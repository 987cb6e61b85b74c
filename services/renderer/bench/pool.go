package bench

import (
	"context"
	"fmt"
	"log/slog"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/renderer/render"
)

// measurePool renders the page through distill's renderer: one Chromium,
// launched by the warm-up, with an incognito context per render. The
// browser is closed before it returns, so it costs the next measurement
// nothing.
func measurePool(ctx context.Context, cfg Config, logger *slog.Logger, base string) (summary, error) {
	r := render.New(logger, render.WithChromium(cfg.Chromium), render.WithMaxPages(cfg.Concurrency), render.WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	opts := &distillv1.FetchOptions{AllowLocal: true, TimeoutSecs: proto.Int32(30), JsWaitFor: "#ready"}
	renderer := func(phase string) func(ctx context.Context, i int) error {
		return func(ctx context.Context, i int) error {
			// A distinct URL per render keeps anything keyed on it from
			// helping a later one.
			u := fmt.Sprintf("%s/?pool=%s-%d", base, phase, i)
			res, err := r.Render(ctx, &internalv1.RenderRequest{Url: u, Options: opts})
			if err != nil {
				return fmt.Errorf("distill pool: %w", err)
			}
			if err := checkDOM(res.GetHtml()); err != nil {
				return fmt.Errorf("distill pool %s: %w", u, err)
			}
			return nil
		}
	}
	if _, _, err := measure(ctx, cfg.WarmUp, cfg.Concurrency, renderer("warm")); err != nil {
		return summary{}, fmt.Errorf("warm-up: %w", err)
	}
	lat, wall, err := measure(ctx, cfg.Renders, cfg.Concurrency, renderer("run"))
	if err != nil {
		return summary{}, err
	}
	return summarize(lat, wall), nil
}
