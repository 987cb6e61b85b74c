package crawl

import (
	"context"
	"log/slog"
	"net/url"
	"time"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/fetcher/siteurl"
)

// Hooks are what a crawl asks of a page's reading besides the page.
type Hooks struct {
	// Follow judges each redirect before it is followed, when the reader
	// can apply it; a reader that cannot (a remote fetcher) ignores it,
	// and the crawl judges the hops once the page is in.
	Follow func(to *url.URL) error
	// BeforeRender waits the host's turn before a headless render loads
	// the page again. The render's own subresources are not paced.
	BeforeRender func(ctx context.Context) error
	// Pace waits for a host's turn before each request the page's reading
	// sends, once the request is ready to go: a reader whose fetcher is in
	// this process applies it to every request (fetch.PaceWith); one that
	// cannot calls it once before the page.
	Pace func(ctx context.Context, u *url.URL) error
	// Sent hears when a request Pace gave a turn to was written.
	Sent func(u *url.URL, at time.Time)
	// Robots, when set, gives the robots.txt of each hop's origin in
	// place of the reader's own fetch of it: a crawl's workers in several
	// processes share one copy per host.
	Robots func(ctx context.Context, u *url.URL) (*robots.Robots, error)
	// Work describes the page for a reader that hands it to a worker in
	// another process, which applies Follow and Pace itself from it.
	Work Work
}

// Work is what a worker in another process needs to read one page of a
// crawl as the crawl would: its identity, its scope, and its hosts' pace.
type Work struct {
	JobID string `json:"job"`
	Key   string `json:"key"`
	URL   string `json:"url"`
	Depth int    `json:"depth"`
	// Start is the crawl's start URL and ScopeURL the URL its scope is
	// rooted at now (the start page's www. twin, once it moved there).
	Start    string               `json:"start"`
	ScopeURL string               `json:"scope_url"`
	Scope    siteurl.ScopeOptions `json:"scope"`
	// FromStart: the page is the start page, which may move to its host's
	// www. twin.
	FromStart bool `json:"from_start,omitempty"`
	// Interval paces the page's host; Delay any other host a redirect
	// leads to.
	Interval time.Duration `json:"interval"`
	Delay    time.Duration `json:"delay"`
}

// Judge is the judge of redirects a worker reading w applies: the one the
// crawl applies in its own process.
func (w Work) Judge() (func(to *url.URL) error, error) {
	start, err := siteurl.Canonical(w.Start)
	if err != nil {
		return nil, err
	}
	scope, err := siteurl.NewScope(w.ScopeURL, w.Scope)
	if err != nil {
		return nil, err
	}
	return func(to *url.URL) error { return mayFollow(scope, start, to, w.FromStart) }, nil
}

// LocalReader reads pages through a pipeline whose fetch stage is a
// *fetch.Fetcher in this process, which judges each redirect with the
// crawl's Follow before taking it.
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
func (l *LocalReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, h Hooks) (*pipeline.Result, error) {
	calls := l.calls[:len(l.calls):len(l.calls)]
	if h.Follow != nil {
		calls = append(calls, fetch.FollowIf(h.Follow))
	}
	if h.Pace != nil {
		calls = append(calls, fetch.PaceWith(h.Pace, h.Sent))
	}
	if h.Robots != nil {
		calls = append(calls, fetch.RobotsFrom(h.Robots))
	}
	// A pipeline is a few pointers: one per page carries that page's
	// hooks to its stages.
	p := pipeline.New(l.logger, judged{l.fetcher, calls}, l.extractor, paced{l.renderer, h.BeforeRender}, l.opts...)
	return p.Do(ctx, pipeline.Request{URL: rawURL, Options: opts})
}

// ReadRobots reads the robots.txt that governs rawURL through the
// reader's fetcher, its request paced by h.Pace and h.Sent: a crawl's
// worker reads it for every worker of the crawl.
func (l *LocalReader) ReadRobots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, h Hooks) (*robots.Robots, error) {
	calls := l.calls[:len(l.calls):len(l.calls)]
	if h.Pace != nil {
		calls = append(calls, fetch.PaceWith(h.Pace, h.Sent))
	}
	return l.fetcher.RobotsWith(ctx, rawURL, opts, calls...)
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

// paced is a renderer that waits a turn before each render.
type paced struct {
	r      pipeline.Renderer
	before func(ctx context.Context) error
}

func (p paced) Render(ctx context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	if p.before != nil {
		if err := p.before(ctx); err != nil {
			return nil, err
		}
	}
	return p.r.Render(ctx, req)
}

// StagesReader reads pages through a pipeline over any stages, a
// gateway's remote services among them. It cannot hand Follow to a
// fetcher in another process: the crawl judges the redirects once the
// page is in.
type StagesReader struct {
	logger    *slog.Logger
	fetcher   pipeline.Fetcher
	extractor pipeline.Extractor
	renderer  pipeline.Renderer
	opts      []pipeline.Option
}

// NewStagesReader returns a StagesReader over the given stages.
func NewStagesReader(logger *slog.Logger, f pipeline.Fetcher, e pipeline.Extractor, r pipeline.Renderer, opts ...pipeline.Option) *StagesReader {
	return &StagesReader{logger: logger, fetcher: f, extractor: e, renderer: r, opts: opts}
}

// Read distils rawURL.
func (s *StagesReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, h Hooks) (*pipeline.Result, error) {
	if h.Pace != nil {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, failure.Wrap(failure.InvalidURL, err, "crawl %s", display(rawURL))
		}
		if err := h.Pace(ctx, u); err != nil {
			return nil, failure.Wrap(failure.Canceled, err, "crawl %s", display(rawURL))
		}
		if h.Sent != nil {
			// Its requests went out somewhere before the answer: the
			// next turn counts from the answer.
			defer func() { h.Sent(u, time.Now()) }()
		}
	}
	p := pipeline.New(s.logger, s.fetcher, s.extractor, paced{s.renderer, h.BeforeRender}, s.opts...)
	return p.Do(ctx, pipeline.Request{URL: rawURL, Options: opts})
}
