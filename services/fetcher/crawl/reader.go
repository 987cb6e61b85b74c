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

// Visit is one page's visit within its crawl: what the crawl asks of the
// page's reading besides the page. A reader hands it to its stages on the
// pipeline's request (pipeline.Request.Visit); each side of a crawl has
// its own: the crawl's process (Job), and a worker reading the page for
// it in another (crawljs).
type Visit interface {
	// Turns paces each request the page's reading sends, once the request
	// is ready to go: a reader whose fetcher is in this process applies it
	// to every request (fetch.PaceWith); one that cannot takes one turn
	// before the page.
	Turns
	// Follow judges each redirect before it is followed, when the reader
	// can apply it; a reader that cannot (a remote fetcher) ignores it,
	// and the crawl judges the hops once the page is in.
	Follow(ctx context.Context, to *url.URL) error
	// BeforeRender waits the host's turn before a headless render loads
	// the page again. The render's own subresources are not paced.
	BeforeRender(ctx context.Context) error
	// Robots gives the robots.txt of u's origin in place of the reader's
	// own fetch of it: a crawl's workers in several processes share one
	// copy per host. ok is false when the reader is to read it itself.
	Robots(ctx context.Context, u *url.URL) (file *robots.Robots, ok bool, err error)
	// Work describes the page for a reader that hands it to a worker in
	// another process, whose own Visit applies Follow and Turns from it.
	Work() Work
}

// Turns paces the requests of a reading: Turn waits for u's host's turn,
// and Sent hears when the request it gave the turn to was written (zero:
// never).
type Turns interface {
	Turn(ctx context.Context, u *url.URL) error
	Sent(ctx context.Context, u *url.URL, at time.Time)
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
// visit's Follow before taking it and paces each request by its Turns.
type LocalReader struct {
	fetcher  *fetch.Fetcher
	calls    []fetch.CallOption
	pipeline *pipeline.Pipeline
}

// NewLocalReader returns a LocalReader over the given stages.
func NewLocalReader(logger *slog.Logger, f *fetch.Fetcher, e pipeline.Extractor, r pipeline.Renderer, opts ...pipeline.Option) *LocalReader {
	l := &LocalReader{fetcher: f}
	l.pipeline = pipeline.New(logger, visitFetcher{l}, e, gated{r}, opts...)
	return l
}

// WithCallOptions adds fetch.CallOptions to every page's fetch: the seam
// for what must see each HTTP exchange of a crawl's pages as it happens
// (a WARC recorder), besides the crawl's own judge of redirects.
func (l *LocalReader) WithCallOptions(opts ...fetch.CallOption) *LocalReader {
	l.calls = append(l.calls, opts...)
	return l
}

// Read distils rawURL in the course of v.
func (l *LocalReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, v Visit) (*pipeline.Result, error) {
	return l.pipeline.Do(ctx, pipeline.Request{URL: rawURL, Options: opts, Visit: v})
}

// ReadRobots reads the robots.txt that governs rawURL through the
// reader's fetcher, its request paced by t: a crawl's worker reads it for
// every worker of the crawl.
func (l *LocalReader) ReadRobots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, t Turns) (*robots.Robots, error) {
	calls := l.calls[:len(l.calls):len(l.calls)]
	if t != nil {
		calls = append(calls, paceWith(ctx, t))
	}
	return l.fetcher.RobotsWith(ctx, rawURL, opts, calls...)
}

// paceWith paces a fetch call by t; ctx is the one t hears Sent in.
func paceWith(ctx context.Context, t Turns) fetch.CallOption {
	return fetch.PaceWith(t.Turn, func(u *url.URL, at time.Time) { t.Sent(ctx, u, at) })
}

// visitFetcher is the LocalReader's pipeline fetch stage: it hands each
// fetch the reader's call options and those of the request's visit.
type visitFetcher struct{ l *LocalReader }

func (s visitFetcher) Fetch(ctx context.Context, req *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
	calls := s.l.calls[:len(s.l.calls):len(s.l.calls)]
	if v, ok := pipeline.VisitOf(ctx).(Visit); ok {
		calls = append(calls,
			fetch.FollowIf(func(to *url.URL) error { return v.Follow(ctx, to) }),
			paceWith(ctx, v),
			fetch.RobotsFrom(v.Robots))
	}
	return s.l.fetcher.FetchWith(ctx, req, calls...)
}

// gated is a renderer that waits for the request's visit to let it render.
type gated struct{ r pipeline.Renderer }

func (g gated) Render(ctx context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	if v, ok := pipeline.VisitOf(ctx).(Visit); ok {
		if err := v.BeforeRender(ctx); err != nil {
			return nil, err
		}
	}
	return g.r.Render(ctx, req)
}

// StagesReader reads pages through a pipeline over any stages, a
// gateway's remote services among them. It cannot hand Follow to a
// fetcher in another process: the crawl judges the redirects once the
// page is in.
type StagesReader struct {
	pipeline *pipeline.Pipeline
}

// NewStagesReader returns a StagesReader over the given stages.
func NewStagesReader(logger *slog.Logger, f pipeline.Fetcher, e pipeline.Extractor, r pipeline.Renderer, opts ...pipeline.Option) *StagesReader {
	return &StagesReader{pipeline: pipeline.New(logger, f, e, gated{r}, opts...)}
}

// Read distils rawURL in the course of v, in one turn of its host.
func (s *StagesReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, v Visit) (*pipeline.Result, error) {
	if v != nil {
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, failure.Wrap(failure.InvalidURL, err, "crawl %s", display(rawURL))
		}
		if err := v.Turn(ctx, u); err != nil {
			return nil, failure.Wrap(failure.Canceled, err, "crawl %s", display(rawURL))
		}
		// Its requests went out somewhere before the answer: the next
		// turn counts from the answer.
		defer func() { v.Sent(ctx, u, time.Now()) }()
	}
	return s.pipeline.Do(ctx, pipeline.Request{URL: rawURL, Options: opts, Visit: v})
}
