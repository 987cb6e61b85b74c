package fetch

import (
	"context"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/platform/telemetry"
)

// ProductToken is the name robots.txt groups address distill by.
const ProductToken = productToken

// Resource GETs rawURL as Fetch gets a page (the same policy on every hop,
// robots.txt when opts respect it, retries, per-host limits, timeout and
// max_bytes cap) but takes a body of any media type and neither reads nor
// writes the cache: it is for what a crawl reads besides pages, sitemaps
// above all, which are often served gzipped as application/x-gzip. The
// body is decoded from its Content-Encoding only; what the file itself
// is, the caller knows.
func (f *Fetcher) Resource(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (resp *internalv1.FetcherServiceFetchResponse, err error) {
	start := time.Now()
	ctx, done := telemetry.StartRequest(ctx, "distill.fetch.resource", "fetcher", "Resource", telemetry.URLAttributes(rawURL)...)
	defer func() { done(err) }()
	c, err := f.newCall(ctx, rawURL, plainGet, opts)
	if err != nil {
		return nil, err
	}
	c.anyType = true
	return f.run(ctx, c, start)
}

// Robots returns the robots.txt that governs rawURL, read as a page fetch
// under opts would read it and from the same cache, so asking costs no
// request when a fetch already has. A file that cannot be had is an
// answer (allow all or disallow all, RFC 9309), not an error; errors are
// bad URLs, policy refusals and the caller's deadline.
func (f *Fetcher) Robots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*robots.Robots, error) {
	return f.RobotsWith(ctx, rawURL, opts)
}

// RobotsWith is Robots with call options: a crawl's worker paces the
// robots.txt request as it paces its pages (PaceWith).
func (f *Fetcher) RobotsWith(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, calls ...CallOption) (*robots.Robots, error) {
	c, err := f.newCall(ctx, rawURL, robotsGet, opts)
	if err != nil {
		return nil, err
	}
	for _, o := range calls {
		o(c)
	}
	where := "robots.txt of " + display(rawURL)
	u, err := c.policy.CheckURL(rawURL)
	if err != nil {
		return nil, c.classify(ctx, where, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	defer cancel()
	file, err := f.robots.of(c).Get(ctx, u, f.robotsGetter(c))
	if err != nil {
		return nil, c.classify(ctx, where, err)
	}
	return file, nil
}
