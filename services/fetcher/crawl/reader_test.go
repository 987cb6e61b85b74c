package crawl

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"testing"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/robots"
)

type renderLog struct{ calls *[]string }

func (r renderLog) Render(context.Context, *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	*r.calls = append(*r.calls, "render")
	return &internalv1.RenderResponse{Html: []byte("<p>rendered</p>")}, nil
}

type pageFetch struct{}

func (pageFetch) Fetch(_ context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
	return &internalv1.FetcherServiceFetchResponse{FinalUrl: r.GetUrl(), Status: 200, ContentType: "text/html", Body: []byte("<p>x</p>")}, nil
}

type pageExtract struct{}

func (pageExtract) Extract(_ context.Context, r *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	return &internalv1.ExtractResponse{Distilled: &distillv1.Distilled{FinalUrl: r.GetUrl(), Markdown: string(r.GetHtml())}}, nil
}

// loggedVisit notes what a reading asks of it; render is what its
// BeforeRender answers.
type loggedVisit struct {
	calls  *[]string
	render error
}

func (v loggedVisit) Follow(context.Context, *url.URL) error { return nil }
func (v loggedVisit) Turn(context.Context, *url.URL) error {
	*v.calls = append(*v.calls, "turn")
	return nil
}
func (v loggedVisit) Sent(context.Context, *url.URL, time.Time) { *v.calls = append(*v.calls, "sent") }
func (v loggedVisit) BeforeRender(context.Context) error {
	*v.calls = append(*v.calls, "render turn")
	return v.render
}
func (v loggedVisit) Robots(context.Context, *url.URL) (*robots.Robots, bool, error) {
	return nil, false, nil
}
func (v loggedVisit) Work() Work { return Work{} }

// TestPacedRenderWaitsItsTurn: a headless render loads the page again, so
// it takes the host's turn first; a turn refused (the crawl's end) is no
// render. One reader serves every visit.
func TestPacedRenderWaitsItsTurn(t *testing.T) {
	var calls []string
	r := NewStagesReader(slog.New(slog.DiscardHandler), pageFetch{}, pageExtract{}, renderLog{&calls})
	always := &distillv1.FetchOptions{Js: distillv1.JsMode_JS_MODE_ALWAYS}
	if _, err := r.Read(t.Context(), "http://example.test/", always, loggedVisit{calls: &calls}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"turn", "render turn", "render", "sent"}; !slices.Equal(calls, want) {
		t.Errorf("calls %q; want %q: the page's turn, the render's, the render", calls, want)
	}
	calls = nil
	refused := loggedVisit{calls: &calls, render: errors.New("canceled")}
	if _, err := r.Read(t.Context(), "http://example.test/", always, refused); err == nil || slices.Contains(calls, "render") {
		t.Errorf("calls %q, %v; want no render once the turn is refused", calls, err)
	}
}
