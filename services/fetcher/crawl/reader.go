package crawl

import (
	"context"
	"log/slog"
	"net/url"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pipeline"
)

// LocalReader reads pages through a pipeline whose fetch stage is a
// *fetch.Fetcher in this process, which judges each redirect with the
// crawl's follow before taking it.
type LocalReader struct {
	logger    *slog.Logger
	fetcher   *fetch.Fetcher
	extractor pipeline.Extractor
	renderer  pipeline.Renderer
	opts      []pipeline.Option
	calls     []fetch.CallOption
}

// NewLocalReader returns a LocalReader over the given stages.
func NewLocalReader(logger *slog.Logger, f *fetch.Fetcher, e pipeline.Extractor, r pipeline.Renderer, opts ...pipeline.Option) *LocalReader {
	return &LocalReader{logger: logger, fetcher: f, extractor: e, renderer: r, opts: opts}
}

// WithCallOptions adds fetch.CallOptions to every page's fetch: the seam
// for what must see each HTTP exchange of a crawl's pages as it happens
// (a WARC recorder), besides the crawl's own judge of redirects.
func (l *LocalReader) WithCallOptions(opts ...fetch.CallOption) *LocalReader {
	l.calls = append(l.calls, opts...)
	return l
}

// Read distils rawURL.
func (l *LocalReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, follow func(*url.URL) error) (*pipeline.Result, error) {
	// A pipeline is a few pointers: one per page carries that page's
	// judge of redirects to the fetch.
	calls := l.calls
	if follow != nil {
		calls = append(calls[:len(calls):len(calls)], fetch.FollowIf(follow))
	}
	p := pipeline.New(l.logger, judged{l.fetcher, calls}, l.extractor, l.renderer, l.opts...)
	return p.Do(ctx, pipeline.Request{URL: rawURL, Options: opts})
}

// judged is a pipeline fetch stage that hands its fetches the call
// options of one page.
type judged struct {
	f     *fetch.Fetcher
	calls []fetch.CallOption
}

func (j judged) Fetch(ctx context.Context, req *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
	return j.f.FetchWith(ctx, req, j.calls...)
}

// PipelineReader reads pages through any pipeline, a gateway's over
// remote services among them. It cannot hand follow to a fetcher in
// another process: the crawl judges the redirects once the page is in,
// and drops a page whose redirects left its scope.
type PipelineReader struct{ P *pipeline.Pipeline }

// Read distils rawURL.
func (r PipelineReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, _ func(*url.URL) error) (*pipeline.Result, error) {
	return r.P.Do(ctx, pipeline.Request{URL: rawURL, Options: opts})
}
