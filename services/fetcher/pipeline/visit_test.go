package pipeline

import (
	"context"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// TestVisitReachesEveryStage: one pipeline serves requests of different
// visits, and each stage sees its own request's, or none.
func TestVisitReachesEveryStage(t *testing.T) {
	var seen []any
	note := func(ctx context.Context) { seen = append(seen, VisitOf(ctx)) }
	fetcher := fetchFunc(func(ctx context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
		note(ctx)
		return page("<p>x</p>")(ctx, r)
	})
	renders := 0
	renderer := renderFunc(func(ctx context.Context, r *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
		note(ctx)
		return rendered("<p>a page as rendered</p>", &renders)(ctx, r)
	})
	p := New(quiet, fetcher, &charsExtractor{}, renderer)
	always := &distillv1.FetchOptions{Js: distillv1.JsMode_JS_MODE_ALWAYS}
	for _, visit := range []any{"page a", nil, "page b"} {
		seen = nil
		if _, err := p.Do(t.Context(), Request{URL: "http://example.test/", Options: always, Visit: visit}); err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0] != visit || seen[1] != visit {
			t.Errorf("a request of visit %v: the fetch and the render saw %v", visit, seen)
		}
	}
}
