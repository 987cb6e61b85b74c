// Package crawl reads a site from a start URL (distill crawl): it follows
// links within a siteurl.Scope, breadth first or, given a question, best
// first, distils every page it reads with the caller's options, and
// delivers each page as it completes. Requests to one host are paced by a
// Pacer all the crawl's workers share; robots.txt and its Crawl-delay are
// obeyed unless the caller says not to, on every redirect hop too. A
// Journal keeps the crawl's progress so a crawl killed at any point
// resumes where it stopped. The CLI, the gRPC API and the MCP server share
// it.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/fetcher/siteurl"
)

const (
	// DefaultDepth is how many links from the start page a crawl follows.
	DefaultDepth = 2
	// DefaultMaxPages is how many pages a crawl reads unless told.
	DefaultMaxPages = 50
	// DefaultConcurrency is how many pages are read at once.
	DefaultConcurrency = fetchopts.DefaultConcurrency
	// DefaultDelay is the shortest time between two requests to one host.
	DefaultDelay = 100 * time.Millisecond
)

// Stop reasons, as Status.StopReason gives them.
const (
	StopDone     = "done"
	StopMaxPages = "max_pages"
	StopAnswered = "answered"
	StopCanceled = "canceled"
)

// Request is one crawl.
type Request struct {
	URL   string
	Scope siteurl.ScopeOptions
	// Depth is how many links from the start page are followed; 0 reads
	// the start page alone.
	Depth int
	// MaxPages bounds the pages read; 0 is no bound.
	MaxPages int
	// Concurrency is how many pages are read at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// Delay is the shortest time between the starts of two requests to one
	// host; a longer robots.txt Crawl-delay wins unless IgnoreRobots.
	Delay        time.Duration
	IgnoreRobots bool
	// Query makes the crawl best first and rates each page's relevance;
	// StopWhenAnswered ends it once the answer seems found.
	Query            string
	StopWhenAnswered bool
	// Options are what every page is distilled into (format, profile,
	// links, tables, limits, rendering), as for a fetch.
	Options *distillv1.FetchOptions `json:"-"`
	// JobID asks to resume the crawl of this id from its journal; a
	// journal that holds none is refused.
	JobID string `json:"-"`
}

// Page is one page of a crawl: its Result, or the Err that kept it from
// being read.
type Page struct {
	// URL is the URL the crawl asked for, in siteurl's one spelling.
	URL    string
	Depth  int
	Result *distillv1.Distilled
	Err    error
}

// Status is a crawl's progress.
type Status struct {
	ID                string
	URL               string
	Done, Failed      int
	InFlight, Queued  int
	StopReason        string
	Notes             []string
	Resumed, Finished bool
}

// RobotsReader reads the robots.txt that governs a URL; *fetch.Fetcher is
// one, and a FetcherService client through an adapter.
type RobotsReader interface {
	Robots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*robots.Robots, error)
}

// PageReader distils one page. follow, when the reader can apply it, judges
// each redirect before it is followed; a reader that cannot (a remote
// fetcher) ignores it, and the crawl judges the hops once the page is in.
type PageReader interface {
	Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, follow func(*url.URL) error) (*pipeline.Result, error)
}

// Crawler runs crawls. One Crawler serves a process: its Pacer paces
// every crawl it runs, so two crawls of one site share the site's pace.
type Crawler struct {
	logger *slog.Logger
	robots RobotsReader
	pages  PageReader
	pacer  Pacer
}

// Option configures a Crawler.
type Option func(*Crawler)

// WithPacer replaces the Crawler's LocalPacer, for workers across
// processes.
func WithPacer(p Pacer) Option { return func(c *Crawler) { c.pacer = p } }

// New returns a Crawler reading robots.txt through rr and pages through
// pr, which should share one fetcher, so robots.txt is read once.
func New(logger *slog.Logger, rr RobotsReader, pr PageReader, opts ...Option) *Crawler {
	c := &Crawler{logger: logger, robots: rr, pages: pr, pacer: NewLocalPacer()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Job is one crawl, begun and not yet run, or running.
type Job struct {
	c        *Crawler
	req      Request
	journal  Journal
	id       string
	start    *url.URL
	scope    *siteurl.Scope
	opts     *distillv1.FetchOptions
	userOpts *distillv1.FetchOptions
	rank     *ranker

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced when a page finishes or the job stops
	front    *frontier
	inflight map[string]Entry
	started  int // pages counted against MaxPages
	done     int
	failed   int
	finals   map[string]bool // keys of pages delivered, after redirects
	answer   answered
	stop     string
	notes    []string
	resumed  bool
	finished bool
	hosts    map[string]*hostRules
	rebased  bool
	// disallowed holds the links robots.txt kept the crawl from, for its
	// summary.
	disallowed map[string]bool
}

// hostRules is what robots.txt says of one host, read once per job.
type hostRules struct {
	once     sync.Once
	agent    robots.Agent
	interval time.Duration
}

// Begin checks req and opens its journal: a journal of another crawl is
// refused, one of this crawl resumes it. A nil journal keeps nothing.
func (c *Crawler) Begin(req Request, journal Journal) (*Job, error) {
	if journal == nil {
		journal = memoryJournal{}
	}
	switch {
	case req.Depth < 0, req.MaxPages < 0, req.Concurrency < 0, req.Delay < 0:
		return nil, failure.New(failure.InvalidArgument, "crawl %s: --depth, --max-pages, --concurrency and --delay cannot be negative", display(req.URL))
	case req.StopWhenAnswered && strings.TrimSpace(req.Query) == "":
		return nil, failure.New(failure.InvalidArgument, "crawl %s: --stop-when-answered needs --query", display(req.URL))
	}
	if req.Concurrency == 0 {
		req.Concurrency = DefaultConcurrency
	}
	start, err := siteurl.Canonical(req.URL)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidURL, err, "crawl %s", display(req.URL))
	}
	scope, err := siteurl.NewScope(start.String(), req.Scope)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "crawl %s", display(req.URL))
	}
	userOpts := cloneOpts(req.Options)
	if err := fetchopts.Validate(userOpts); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "crawl %s", display(req.URL))
	}
	j := &Job{
		c: c, req: req, journal: journal, start: start, scope: scope,
		userOpts: userOpts, opts: pageOptions(req, userOpts),
		rank:     newRanker(req.Query),
		changed:  make(chan struct{}),
		inflight: map[string]Entry{},
		finals:   map[string]bool{},
		hosts:    map[string]*hostRules{},

		disallowed: map[string]bool{},
	}
	j.front = newFrontier(j.rank != nil)
	if err := j.load(); err != nil {
		return nil, err
	}
	return j, nil
}

// pageOptions are what each page is read with: the caller's options, and
// what the crawl needs besides. Every link of the page is extracted, to be
// followed (and dropped again from what the caller did not ask for);
// robots.txt is obeyed on every hop unless the crawl ignores it; the
// fetcher paces a page's own hops (a redirect, a robots.txt) at the
// crawl's delay. The extractor's query block filter (FetchOptions.query)
// is to be set here from req.Query, once the extractor has it.
func pageOptions(req Request, user *distillv1.FetchOptions) *distillv1.FetchOptions {
	o := cloneOpts(user)
	o.ExtractLinks = true
	o.LinksFull = true
	o.RespectRobots = !req.IgnoreRobots
	if req.Delay > 0 {
		if perSec := 1 / req.Delay.Seconds(); o.RateLimit == 0 || perSec < o.RateLimit {
			o.RateLimit = perSec
		}
	}
	return o
}

// load rebuilds the job from its journal, or writes the journal's first
// record.
func (j *Job) load() error {
	recs, err := j.journal.Load()
	if err != nil {
		return err
	}
	fp := Fingerprint(j.req)
	first := Entry{URL: j.start.String(), Key: siteurl.KeyOf(j.start)}
	if len(recs) == 0 {
		if j.req.JobID != "" {
			return failure.New(failure.NotFound, "no crawl with job id %q to resume", j.req.JobID)
		}
		j.id = NewID()
		if named, ok := j.journal.(interface{ JobID() string }); ok {
			j.id = named.JobID()
		}
		j.front.push(first)
		return j.journal.Append(Record{Begin: &Begin{ID: j.id, Fingerprint: fp, URL: j.req.URL, Start: first}})
	}
	b := recs[0].Begin
	if b == nil {
		return failure.New(failure.InvalidArgument, "the crawl state does not begin with a crawl's record")
	}
	if b.Fingerprint != fp {
		return failure.New(failure.Conflict, "the crawl state is of another crawl (%s, or other flags): give another file, or the same URL and flags", b.URL)
	}
	j.id, j.resumed = b.ID, true
	j.front.push(b.Start)
	for _, r := range recs[1:] {
		switch {
		case r.Start != nil:
			j.front.started(r.Start.Key)
			j.inflight[r.Start.Key] = *r.Start
		case r.Done != nil:
			d := r.Done
			delete(j.inflight, d.Key)
			j.started++
			j.count(d)
			for _, e := range d.Queued {
				j.front.push(e)
			}
		case r.End != "":
			j.stop, j.finished = r.End, true
		}
	}
	// Pages that were being read when the crawl stopped are read again:
	// their answers never reached the caller.
	for _, e := range j.inflight {
		j.front.requeue(e)
	}
	clear(j.inflight)
	return nil
}

// count takes in a finished page's outcome. Called with j.mu held, or
// before the job runs.
func (j *Job) count(d *Done) {
	j.done++
	if d.Failed {
		j.failed++
		return
	}
	final := d.Key
	if d.Final != "" {
		final = d.Final
		j.front.started(final)
	}
	j.finals[final] = true
	if j.rank != nil {
		j.rank.seen(d.Present)
		if j.answer.page(d.Relevance) && j.req.StopWhenAnswered && j.stop == "" {
			j.stop = StopAnswered
		}
	}
}

// ID is the crawl's job id, kept across resumes.
func (j *Job) ID() string { return j.id }

// Status reports the job's progress.
func (j *Job) Status() Status {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := Status{
		ID: j.id, URL: j.start.String(),
		Done: j.done, Failed: j.failed, InFlight: len(j.inflight), Queued: j.front.len(),
		StopReason: j.stop, Notes: append([]string(nil), j.notes...),
		Resumed: j.resumed, Finished: j.finished,
	}
	if n := len(j.disallowed); n > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("links robots.txt disallows, not read: %d", n))
	}
	if j.stop == StopMaxPages && j.front.len() > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("stopped at --max-pages %d; links found and not read: %d", j.req.MaxPages, j.front.len()))
	}
	return st
}

// Cancel stops the job starting pages; those in flight finish.
func (j *Job) Cancel() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.stop == "" {
		j.stop = StopCanceled
	}
	j.wake()
}

func (j *Job) wake() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *Job) note(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.notes = append(j.notes, fmt.Sprintf(format, args...))
}

// Run reads the site, calling deliver once per page as it completes, from
// one goroutine at a time. It returns when no page is left to start and
// none is in flight, when the job is canceled, or when ctx ends (then the
// pages in flight are abandoned, and a resumed crawl reads them again). A
// deliver error stops the crawl and is returned.
func (j *Job) Run(ctx context.Context, deliver func(Page) error) (Status, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var deliverMu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, j.req.Concurrency)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		e, ok := j.next(ctx)
		if !ok {
			<-slots
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			p, d := j.read(ctx, e)
			if ctx.Err() != nil {
				// Abandoned: not delivered, not journalled as done.
				return
			}
			deliverMu.Lock()
			defer deliverMu.Unlock()
			if ctx.Err() != nil {
				return
			}
			if p != nil {
				if err := deliver(*p); err != nil {
					cancel(err)
					return
				}
			}
			if err := j.finish(d); err != nil {
				cancel(err)
			}
		}()
	}
	wg.Wait()
	st := j.Status()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return st, cause
	}
	if err := ctx.Err(); err != nil {
		return st, failure.Wrap(failure.Canceled, err, "crawl %s", display(j.req.URL))
	}
	j.mu.Lock()
	if j.stop == "" {
		j.stop = StopDone
	}
	if !j.finished {
		j.finished = true
		stop := j.stop
		j.mu.Unlock()
		if err := j.journal.Append(Record{End: stop}); err != nil {
			return st, err
		}
	} else {
		j.mu.Unlock()
	}
	return j.Status(), nil
}

// next waits for the next page to start: it returns false when the crawl
// is to start no more.
func (j *Job) next(ctx context.Context) (Entry, bool) {
	for {
		j.mu.Lock()
		if j.finished {
			j.mu.Unlock()
			return Entry{}, false
		}
		if j.stop == "" && j.req.MaxPages > 0 && j.started >= j.req.MaxPages {
			j.stop = StopMaxPages
		}
		if j.stop != "" {
			j.mu.Unlock()
			return Entry{}, false
		}
		if e, ok := j.front.pop(); ok {
			j.started++
			j.inflight[e.Key] = e
			j.mu.Unlock()
			if err := j.journal.Append(Record{Start: &e}); err != nil {
				j.note("crawl state: %v", err)
			}
			return e, true
		}
		if len(j.inflight) == 0 {
			j.mu.Unlock()
			return Entry{}, false
		}
		changed := j.changed
		j.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Entry{}, false
		}
	}
}

// finish journals a page's outcome and wakes the scheduler.
func (j *Job) finish(d *Done) error {
	err := j.journal.Append(Record{Done: d})
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.inflight, d.Key)
	j.count(d)
	for _, e := range d.Queued {
		j.front.push(e)
	}
	j.wake()
	return err
}

// read fetches one page in its host's turn, follows what it links to and
// returns the page to deliver (nil for none) and its journal record.
func (j *Job) read(ctx context.Context, e Entry) (*Page, *Done) {
	d := &Done{Key: e.Key}
	u, err := url.Parse(e.URL)
	if err != nil {
		d.Failed = true
		return &Page{URL: e.URL, Depth: e.Depth, Err: failure.Wrap(failure.InvalidURL, err, "crawl %s", display(e.URL))}, d
	}
	rules := j.rules(ctx, u)
	if !j.req.IgnoreRobots {
		if v := rules.agent.Check(u); !v.Allowed {
			d.Failed = true
			return &Page{URL: e.URL, Depth: e.Depth, Err: failure.New(failure.RobotsDisallowed, "crawl %s: disallowed by robots.txt (%s)", e.URL, v)}, d
		}
	}
	isStart := e.Depth == 0
	res, err := j.readPage(ctx, e.URL, rules.interval, isStart)
	if err != nil {
		d.Failed = true
		return &Page{URL: e.URL, Depth: e.Depth, Err: failure.FromRemote(err)}, d
	}
	dist := res.Distilled
	final, ferr := siteurl.Canonical(dist.GetFinalUrl())
	if ferr != nil {
		final = u
	}
	if isStart {
		j.rebase(final)
	}
	// The page is claimed under the URL it ended at: a page reached again
	// by a redirect from another URL is delivered once, and a link to it
	// still waiting is not read.
	fk := siteurl.KeyOf(final)
	j.mu.Lock()
	dup := j.finals[fk]
	j.finals[fk] = true
	j.front.started(fk)
	j.mu.Unlock()
	if fk != e.Key {
		d.Final = fk
	}
	if dup {
		return nil, d
	}
	var rel float64
	if j.rank != nil {
		text := pageText(dist)
		d.Present = j.rank.present(text)
		j.mu.Lock()
		rel = j.rank.relevance(words(dist.GetTitle()), text, d.Present)
		j.mu.Unlock()
		d.Relevance = rel
		dist.Relevance = &rel
	}
	if dist.GetStatus() < 400 && e.Depth < j.req.Depth {
		d.Queued = j.links(ctx, dist, e.Depth+1, rel, d.Present)
	}
	j.trimLinks(dist)
	page := &Page{URL: e.URL, Depth: e.Depth, Result: dist}
	if !j.scope.Contains(final) {
		// Read for its links only: outside --include-paths.
		return nil, d
	}
	return page, d
}

// unavailableRetries are the waits before asking again for a page when a
// service it goes through (a fetcher, an extractor) is away: a service
// restarting, or a fetcher killed mid-crawl, must not cost the crawl its
// pages. A service that went away during the call (failure.Internal) may
// have been killed by the page itself, so such a page is asked for once
// more only.
var unavailableRetries = []time.Duration{time.Second, 3 * time.Second, 5 * time.Second}

// readPage reads one page in its host's turn, judging its redirects, and
// asks again, in a new turn, while a service it goes through is away.
func (j *Job) readPage(ctx context.Context, raw string, interval time.Duration, isStart bool) (*pipeline.Result, error) {
	for attempt := 0; ; attempt++ {
		if err := j.c.pacer.Turn(ctx, hostOf(raw), interval); err != nil {
			return nil, failure.Wrap(failure.Canceled, err, "crawl %s", raw)
		}
		res, err := j.c.pages.Read(ctx, raw, j.opts, func(to *url.URL) error { return j.mayFollow(to, isStart) })
		if err == nil {
			return res, j.judgeHops(res, isStart)
		}
		code := failure.CodeOf(err)
		again := code == failure.Unavailable && attempt < len(unavailableRetries) ||
			code == failure.Internal && attempt == 0
		if !again || ctx.Err() != nil {
			return nil, err
		}
		if j.c.logger != nil {
			j.c.logger.Info("crawl page: a service is away; asking again", "url", raw, "err", err.Error())
		}
		if err := sleepUntil(ctx, time.Now().Add(unavailableRetries[attempt])); err != nil {
			return nil, failure.Wrap(failure.Canceled, err, "crawl %s", raw)
		}
	}
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// rules returns what robots.txt says of u's host, reading it the first
// time the crawl meets the host, in the host's turn like any request.
func (j *Job) rules(ctx context.Context, u *url.URL) *hostRules {
	j.mu.Lock()
	h := j.hosts[u.Host]
	if h == nil {
		h = &hostRules{interval: j.req.Delay, agent: robots.AllowAll("").For(fetch.ProductToken)}
		j.hosts[u.Host] = h
	}
	j.mu.Unlock()
	if j.req.IgnoreRobots {
		return h
	}
	h.once.Do(func() {
		file, err := j.readRobots(ctx, u)
		if err != nil {
			// The page's own fetch reads robots.txt again and fails with
			// the reason, which is what the caller will see.
			return
		}
		h.agent = file.For(fetch.ProductToken)
		if d := h.agent.CrawlDelay(); d > h.interval {
			h.interval = d
			j.note("%s asks for a Crawl-delay of %s, longer than --delay; it is kept", u.Host, d)
		}
	})
	return h
}

func (j *Job) readRobots(ctx context.Context, u *url.URL) (*robots.Robots, error) {
	if err := j.c.pacer.Turn(ctx, u.Hostname(), j.req.Delay); err != nil {
		return nil, err
	}
	return j.c.robots.Robots(ctx, u.String(), j.opts)
}

// errOutOfScope is a redirect to a URL the crawl does not cover.
var errOutOfScope = errors.New("outside the crawl's scope")

// mayFollow judges a redirect hop: within the scope (the start page may
// also move to its host's www. twin), and allowed by robots.txt.
func (j *Job) mayFollow(to *url.URL, fromStart bool) error {
	u, err := siteurl.Canonical(to.String())
	if err != nil {
		return err
	}
	j.mu.Lock()
	scope := j.scope
	j.mu.Unlock()
	if !scope.MayVisit(u) && !(fromStart && (scope.OnSite(u) || siteurl.WWWTwins(u, j.start))) {
		return errOutOfScope
	}
	return nil
}

// judgeHops applies mayFollow to a page's redirects after the fact, for a
// reader that could not ask it before each hop.
func (j *Job) judgeHops(res *pipeline.Result, fromStart bool) error {
	hops := append(append([]string(nil), res.RedirectHistory...), res.Distilled.GetFinalUrl())
	for i := 1; i < len(hops); i++ {
		u, err := url.Parse(hops[i])
		if err != nil {
			continue
		}
		if err := j.mayFollow(u, fromStart); err != nil {
			return failure.Wrap(failure.Blocked, err, "fetch %s: redirect to %s not followed", display(hops[i-1]), display(hops[i]))
		}
	}
	return nil
}

// rebase moves the crawl to the host its start page redirected to, when
// that is the same site under its www. name or without it.
func (j *Job) rebase(final *url.URL) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.rebased || final.Host == j.start.Host || !siteurl.WWWTwins(final, j.start) {
		return
	}
	scope, err := siteurl.NewScope(final.String(), j.req.Scope)
	if err != nil {
		return
	}
	j.rebased = true
	j.scope = scope
	j.notes = append(j.notes, fmt.Sprintf("%s redirects to %s; crawled %s", j.start, final, final.Host))
}

// links queues what a page links to that the crawl may read, scored when
// it has a query. Links are read from the page's extracted links; their
// paragraphs from its Markdown or text.
func (j *Job) links(ctx context.Context, d *distillv1.Distilled, depth int, parent float64, present []string) []Entry {
	var paras []string
	if j.rank != nil {
		paras = paragraphs(d.GetMarkdown() + "\n\n" + d.GetText())
	}
	j.mu.Lock()
	scope := j.scope
	j.mu.Unlock()
	var out []Entry
	seen := map[string]int{}
	for _, l := range d.GetLinks().GetItems() {
		lu, err := siteurl.Canonical(l.GetHref())
		if err != nil || !scope.MayVisit(lu) || !looksLikePage(lu) {
			continue
		}
		if !j.req.IgnoreRobots && !j.rules(ctx, lu).agent.Check(lu).Allowed {
			j.mu.Lock()
			j.disallowed[siteurl.KeyOf(lu)] = true
			j.mu.Unlock()
			continue
		}
		e := Entry{URL: lu.String(), Key: siteurl.KeyOf(lu), Depth: depth}
		if j.rank != nil {
			j.mu.Lock()
			e.Score = j.rank.link(l.GetText(), lu.Path, contextOf(paras, l.GetHref(), l.GetText()), parent, present)
			j.mu.Unlock()
		}
		if i, ok := seen[e.Key]; ok {
			out[i].Score = max(out[i].Score, e.Score)
			continue
		}
		j.mu.Lock()
		known := j.front.known(e.Key) && !j.improves(e)
		j.mu.Unlock()
		if known {
			continue
		}
		seen[e.Key] = len(out)
		out = append(out, e)
	}
	return out
}

// improves reports whether e would move up a URL still waiting. Called
// with j.mu held.
func (j *Job) improves(e Entry) bool {
	old := j.front.found[e.Key]
	return old != nil && (e.Score > old.Score || e.Depth < old.Depth)
}

// trimLinks takes back out of a page the links the crawl asked for and
// the caller did not: all of them without --links, the ones outside the
// main content with --links alone.
func (j *Job) trimLinks(d *distillv1.Distilled) {
	switch {
	case !j.userOpts.GetExtractLinks():
		d.Links = nil
	case !j.userOpts.GetLinksFull():
		content := d.GetMarkdown()
		var kept []*distillv1.Link
		for _, l := range d.GetLinks().GetItems() {
			if strings.Contains(content, "]("+l.GetHref()) {
				kept = append(kept, l)
			}
		}
		d.Links.Items = kept
	}
}

// pageText is the words a page is rated by: its title and content.
func pageText(d *distillv1.Distilled) []string {
	return words(d.GetTitle() + "\n" + d.GetMarkdown() + "\n" + d.GetText())
}

// files names extensions of links that are not pages: a crawl does not
// read them.
var files = map[string]bool{
	".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".7z": true, ".rar": true,
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".avif": true,
	".mp3": true, ".mp4": true, ".webm": true, ".mov": true, ".avi": true, ".wav": true, ".ogg": true,
	".css": true, ".js": true, ".woff": true, ".woff2": true, ".ttf": true, ".exe": true, ".dmg": true, ".apk": true,
	".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true, ".csv": true,
	".xml": true, ".json": true, ".txt": true,
}

func looksLikePage(u *url.URL) bool {
	return !files[strings.ToLower(pathExt(u.Path))]
}

func pathExt(p string) string {
	i := strings.LastIndexAny(p, "./")
	if i < 0 || p[i] != '.' {
		return ""
	}
	return p[i:]
}

// display keeps a URL on one line in messages.
func display(raw string) string {
	if strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Sprintf("%q", raw)
	}
	return raw
}
