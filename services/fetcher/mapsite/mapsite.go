// Package mapsite lists a site's URLs without distilling them (distill
// map): the site's sitemaps, and a short breadth-first crawl of its links
// when they list few, deduplicated by siteurl's identity rules and kept to
// a siteurl.Scope. Every request goes through distill's fetcher (its
// policy, robots.txt, limits) and waits its turn per host. The CLI, the
// MCP server and the API share it.
package mapsite

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pace"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/fetcher/sitemap"
	"distill.dev/services/fetcher/siteurl"
)

const (
	// DefaultPages is how many pages the short crawl reads: enough to
	// reach the pages a site links from its home and section pages, and
	// at the default delay a few seconds of a site's time.
	DefaultPages = 50
	// DefaultDelay is the shortest time between two requests to one host.
	DefaultDelay = 100 * time.Millisecond
	// DefaultLimit is how many URLs a map returns unless asked otherwise.
	DefaultLimit = 5000
	// CrawlBelow is the number of URLs from sitemaps under which the short
	// crawl runs: a site that lists fewer has likely left pages out.
	CrawlBelow = 200
	// MaxURLs bounds the URLs one map collects, whatever the limit: the
	// pool a --query ranks.
	MaxURLs = 100_000
)

// Fetcher reads what a map reads besides pages; *fetch.Fetcher is one.
type Fetcher interface {
	Resource(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error)
	Robots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*robots.Robots, error)
}

// Pages reads pages for their links; a *pipeline.Pipeline is one.
type Pages interface {
	Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
}

// Request is one map.
type Request struct {
	URL   string
	Scope siteurl.ScopeOptions
	// Limit is how many URLs to return; 0 returns every URL collected.
	Limit int
	// Query ranks the URLs by the words of their paths.
	Query string
	// Pages is the short crawl's budget of pages; 0 means DefaultPages.
	// NoCrawl turns the crawl off.
	Pages   int
	NoCrawl bool
	// IgnoreRobots neither obeys robots.txt nor drops the URLs it
	// disallows; its Sitemap lines are read either way.
	IgnoreRobots bool
	// Delay is the shortest time between two requests to one host; zero
	// waits not at all.
	Delay time.Duration
	// AllowLocal and TimeoutSecs are the fetch options of the same names.
	AllowLocal  bool
	TimeoutSecs int32
	// Browser is the network identity of every request of the map
	// (FetchOptions.browser): sitemaps, robots.txt and pages.
	Browser string
}

// Result is a site's URLs and how they were found.
type Result struct {
	URLs []string
	// FromSitemaps and FromCrawl count the distinct URLs in scope each
	// source found, before ranking and the limit.
	FromSitemaps, FromCrawl int
	// PagesRead is how many pages the crawl fetched.
	PagesRead int
	// Found is how many URLs the map kept before Limit cut them, so a
	// caller that shows fewer can say how many it left out.
	Found int
	// StoppedAtLimit says the map stopped looking once it held Limit URLs
	// (without a query nothing is ranked, so the first found are enough):
	// the site may have more than Found.
	StoppedAtLimit bool
	// Notes say, one line each, what was skipped or cut and why.
	Notes []string
}

// Mapper maps sites.
type Mapper struct {
	logger  *slog.Logger
	fetcher Fetcher
	pages   Pages
	limits  sitemap.Limits
}

// Option configures a Mapper.
type Option func(*Mapper)

// WithSitemapLimits replaces sitemap.DefaultLimits.
func WithSitemapLimits(l sitemap.Limits) Option {
	return func(m *Mapper) { m.limits = l }
}

// New returns a Mapper reading through f and p, which should share one
// fetcher so that robots.txt is read once and per-host limits are shared.
func New(logger *slog.Logger, f Fetcher, p Pages, opts ...Option) *Mapper {
	m := &Mapper{logger: logger, fetcher: f, pages: p, limits: sitemap.DefaultLimits()}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Map lists req.URL's site. What could not be read is noted, not failed:
// the error is for a request that cannot start (a bad URL or pattern, a
// refused address) and for a map that found nothing because its start
// page failed.
func (m *Mapper) Map(ctx context.Context, req Request) (*Result, error) {
	if req.Pages < 0 || req.Limit < 0 || req.Delay < 0 {
		return nil, failure.New(failure.InvalidArgument, "map %s: --map-pages, --map-limit and --delay cannot be negative", display(req.URL))
	}
	start, err := siteurl.Canonical(req.URL)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidURL, err, "map %s", display(req.URL))
	}
	scope, err := siteurl.NewScope(start.String(), req.Scope)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "map %s", display(req.URL))
	}
	r := &run{
		m: m, req: req, start: start, scope: scope,
		pacer:  newPacer(req.Delay),
		seen:   map[string]int{},
		agents: map[string]robots.Agent{},
		res:    &Result{},
	}
	r.capacity = MaxURLs
	if req.Query == "" && req.Limit > 0 {
		r.capacity = req.Limit
	}
	r.base = &distillv1.FetchOptions{AllowLocal: req.AllowLocal, RespectRobots: !req.IgnoreRobots, Browser: req.Browser}
	if req.TimeoutSecs > 0 {
		r.base.TimeoutSecs = &req.TimeoutSecs
	}
	if err := fetchopts.Validate(r.base); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "map %s", display(req.URL))
	}
	if req.Delay > 0 {
		// Hops inside one fetch (robots.txt of a host met on a redirect,
		// the redirect itself) are paced by the fetcher at this rate.
		r.base.RateLimit = pace.PerSecond(req.Delay)
	}
	return r.do(ctx)
}

// run is one map's state.
type run struct {
	m        *Mapper
	req      Request
	start    *url.URL
	scope    *siteurl.Scope
	base     *distillv1.FetchOptions
	pacer    *pacer
	capacity int
	// seen maps an identity key to its index in urls, or -1 once dropped.
	seen   map[string]int
	urls   []string
	agents map[string]robots.Agent
	full   bool
	res    *Result
}

func (r *run) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

func (r *run) do(ctx context.Context) (*Result, error) {
	file, err := r.robots(ctx, r.start)
	if err != nil {
		return nil, err
	}
	// The start page is read first, crawl or not: where it redirects to
	// says which host the site is on.
	start := r.read(ctx, r.start)
	if r.rebase(start) {
		if file, err = r.robots(ctx, r.start); err != nil {
			return nil, err
		}
	}
	r.sitemaps(ctx, file)
	r.res.FromSitemaps = len(r.urls)
	pages := r.req.Pages
	if pages == 0 {
		pages = DefaultPages
	}
	startErr := start.err
	if !r.req.NoCrawl && !r.full && len(r.urls) < CrawlBelow {
		startErr = r.crawl(ctx, pages, start)
	}
	if err := ctx.Err(); err != nil {
		return nil, failure.Wrap(failure.Canceled, err, "map %s", display(r.req.URL))
	}
	urls := r.kept()
	r.res.FromCrawl = len(urls) - r.res.FromSitemaps + r.droppedBefore(r.res.FromSitemaps)
	if len(urls) == 0 && startErr != nil {
		return nil, startErr
	}
	r.res.Found = len(urls)
	r.res.StoppedAtLimit = r.full && r.capacity == r.req.Limit && r.capacity < MaxURLs
	if r.req.Query != "" {
		urls = Rank(urls, r.req.Query)
	}
	if r.req.Limit > 0 && len(urls) > r.req.Limit {
		urls = urls[:r.req.Limit]
	}
	r.res.URLs = urls
	return r.res, nil
}

// robots reads the robots.txt of u's host, paced as any request to it.
// A file that cannot be had is an answer; the error is a URL the policy
// refuses, or the end of ctx.
func (r *run) robots(ctx context.Context, u *url.URL) (*robots.Robots, error) {
	var file *robots.Robots
	err := r.pacer.do(ctx, u.Hostname(), func() error {
		var err error
		file, err = r.m.fetcher.Robots(ctx, u.String(), r.base)
		return err
	})
	if err != nil {
		return nil, failure.FromRemote(err)
	}
	agent := file.For(fetch.ProductToken)
	r.agents[u.Host] = agent
	if !r.req.IgnoreRobots {
		// A site's Crawl-delay, when longer than the map's own, is the
		// host's; the fetcher holds a page's own hops to it as well.
		r.pacer.atLeast(ctx, u.Hostname(), agent.CrawlDelay())
	}
	return file, nil
}

// allowed reports whether robots.txt lets distill have u, when the map
// obeys it. Hosts other than the start's (subdomains) have their file read
// the first time one of their URLs is met.
func (r *run) allowed(ctx context.Context, u *url.URL) bool {
	if r.req.IgnoreRobots {
		return true
	}
	agent, ok := r.agents[u.Host]
	if !ok {
		if _, err := r.robots(ctx, u); err != nil {
			r.agents[u.Host] = robots.DisallowAll(err.Error()).For(fetch.ProductToken)
		}
		agent = r.agents[u.Host]
	}
	return agent.Check(u).Allowed
}

// add keeps u when it is in scope, allowed and new; it returns false once
// the map holds all it may.
func (r *run) add(ctx context.Context, u *url.URL) bool {
	if r.full {
		return false
	}
	key := siteurl.KeyOf(u)
	if _, dup := r.seen[key]; dup || !r.scope.Contains(u) || !r.allowed(ctx, u) {
		return true
	}
	r.seen[key] = len(r.urls)
	r.urls = append(r.urls, u.String())
	if len(r.urls) >= r.capacity {
		r.full = true
		if r.capacity == MaxURLs {
			r.note("collected %d URLs, the most one map holds; stopped looking", MaxURLs)
		}
		return false
	}
	return true
}

// drop takes back a URL found dead by the crawl.
func (r *run) drop(u *url.URL) {
	if i, ok := r.seen[siteurl.KeyOf(u)]; ok && i >= 0 {
		r.urls[i] = ""
		r.seen[siteurl.KeyOf(u)] = -1
	}
}

// droppedBefore counts the URLs taken back among the first n found.
func (r *run) droppedBefore(n int) int {
	d := 0
	for _, u := range r.urls[:n] {
		if u == "" {
			d++
		}
	}
	return d
}

func (r *run) kept() []string {
	out := make([]string, 0, len(r.urls))
	for _, u := range r.urls {
		if u != "" {
			out = append(out, u)
		}
	}
	return out
}

// sitemaps walks the sitemaps robots.txt declares or, when it declares
// none, the first of the usual places that holds one.
func (r *run) sitemaps(ctx context.Context, file *robots.Robots) {
	get := r.sitemapGetter()
	emit := func(u *url.URL) bool { return r.add(ctx, u) }
	var declared []sitemap.Source
	for _, s := range file.Sitemaps() {
		declared = append(declared, sitemap.Source{URL: s, DeclaredBy: r.start.Host})
	}
	if len(declared) > 0 {
		rep := sitemap.Walk(ctx, get, declared, r.m.limits, emit)
		r.res.Notes = append(r.res.Notes, rep.Notes...)
		return
	}
	for _, guess := range r.guesses() {
		rep := sitemap.Walk(ctx, get, []sitemap.Source{{URL: guess, Guessed: true}}, r.m.limits, emit)
		r.res.Notes = append(r.res.Notes, rep.Notes...)
		if rep.Read > 0 || r.full || ctx.Err() != nil {
			return
		}
	}
}

// guesses are the usual places of a site's sitemap: the start page's own
// folder first when it is not the root (a site kept under a path), then
// the root's.
func (r *run) guesses() []string {
	root := &url.URL{Scheme: r.start.Scheme, Host: r.start.Host}
	var out []string
	if dir := path.Dir(r.start.EscapedPath() + "x"); dir != "/" {
		out = append(out, root.String()+dir+"/sitemap.xml")
	}
	return append(out, root.String()+"/sitemap.xml", root.String()+"/sitemap_index.xml")
}

func (r *run) sitemapGetter() sitemap.Getter {
	opts := proto.CloneOf(r.base)
	maxBytes := r.m.limits.FileBytes
	opts.MaxBytes = &maxBytes
	return func(ctx context.Context, raw string) (*sitemap.Fetched, error) {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, err
		}
		var f *sitemap.Fetched
		err = r.pacer.do(ctx, u.Hostname(), func() error {
			resp, err := r.m.fetcher.Resource(ctx, raw, opts)
			if err != nil {
				return err
			}
			f = &sitemap.Fetched{Status: int(resp.GetStatus()), Body: resp.GetBody(), Truncated: resp.GetTruncatedBody()}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return f, nil
	}
}

// display keeps a URL on one line in messages: one with spaces or control
// characters is quoted.
func display(raw string) string {
	if strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return strconv.Quote(raw)
	}
	return raw
}
