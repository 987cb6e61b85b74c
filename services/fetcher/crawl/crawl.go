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
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pace"
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

// WorkRobotsReader is a RobotsReader that hands a crawl's robots.txt to a
// worker (crawljs.WorkReader): the worker paces the request, and keeps the
// file for the crawl's other workers.
type WorkRobotsReader interface {
	WorkRobots(ctx context.Context, w Work, opts *distillv1.FetchOptions) (*robots.Robots, error)
}

// AnswerKeeper is a PageReader that keeps each page's answer until the
// crawl has journaled it (crawljs.WorkReader): Used lets it go.
type AnswerKeeper interface {
	Used(jobID, key string)
}

// PageReader distils one page in the course of its visit, applying what
// the visit asks of the page's reading.
type PageReader interface {
	Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, v Visit) (*pipeline.Result, error)
}

// Crawler runs crawls. One Crawler serves a process: its Pacer paces
// every crawl it runs, so two crawls of one site share the site's pace.
type Crawler struct {
	logger *slog.Logger
	robots RobotsReader
	pages  PageReader
	pacer  pace.Pacer
}

// Option configures a Crawler.
type Option func(*Crawler)

// WithPacer replaces the Crawler's pace.Local, for workers across
// processes.
func WithPacer(p pace.Pacer) Option { return func(c *Crawler) { c.pacer = p } }

// New returns a Crawler reading robots.txt through rr and pages through
// pr, which should share one fetcher, so robots.txt is read once.
func New(logger *slog.Logger, rr RobotsReader, pr PageReader, opts ...Option) *Crawler {
	c := &Crawler{logger: logger, robots: rr, pages: pr, pacer: pace.NewLocal()}
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
	// handing counts the pages being handed to the caller and not yet
	// journaled: Status reports them done, since a client may have them.
	handing  int
	finals   map[string]bool // keys of pages delivered, after redirects
	answer   answered
	stop     string
	notes    []string
	resumed  bool
	finished bool
	hosts    map[string]*hostRules
	rebased  bool
	// disallowed holds the links robots.txt kept the crawl from, and
	// overflow counts those found past MaxFound, for its summary.
	disallowed map[string]bool
	overflow   int
}

// hostRules is what robots.txt says of one host, read once per job.
type hostRules struct {
	once     sync.Once
	agent    robots.Agent
	interval time.Duration
}

// Begin checks req and opens its journal: a journal of another crawl is
// refused, one of this crawl resumes it. A nil journal keeps nothing. ctx
// bounds the journal's reading and its first record.
func (c *Crawler) Begin(ctx context.Context, req Request, journal Journal) (*Job, error) {
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
	if err := j.load(ctx); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// Close lets go of the job's journal when it holds something (a lease, a
// file); Run does when it returns.
func (j *Job) Close() {
	if c, ok := j.journal.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// pageOptions are what each page is read with: the caller's options, and
// what the crawl needs besides. Every link of the page is extracted, to be
// followed (and dropped again from what the caller did not ask for);
// robots.txt is obeyed on every hop unless the crawl ignores it; the
// fetcher paces a page's own hops (a redirect, a robots.txt) at the
// crawl's delay. A crawl's query keeps only the blocks of each page that
// answer it (the extractor's query filter), in the formats made of
// Markdown blocks; a text or html crawl keeps its pages whole.
func pageOptions(req Request, user *distillv1.FetchOptions) *distillv1.FetchOptions {
	o := cloneOpts(user)
	if q := strings.TrimSpace(req.Query); q != "" && o.GetQuery() == "" {
		switch fetchopts.Format(o) {
		case distillv1.Format_FORMAT_TEXT, distillv1.Format_FORMAT_HTML:
		default:
			o.Query = q
		}
	}
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
func (j *Job) load(ctx context.Context) error {
	recs, err := j.journal.Load(ctx)
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
		return j.journal.Append(ctx, Record{Begin: &Begin{ID: j.id, Fingerprint: fp, URL: j.req.URL, Start: first}})
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
				j.queue(e)
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

// MaxFound bounds the URLs one crawl keeps track of (queued, read or
// being read), whatever --max-pages says: about 200 MB of frontier, a
// site far larger than any crawl without a cap can read.
const MaxFound = 1_000_000

// queue adds e to the frontier, unless the crawl already knows MaxFound
// URLs. Called with j.mu held, or before the job runs.
func (j *Job) queue(e Entry) {
	if len(j.front.found) >= MaxFound && !j.front.known(e.Key) {
		j.overflow++
		return
	}
	j.front.push(e)
}

// count takes in a finished page's outcome. Called with j.mu held, or
// before the job runs.
func (j *Job) count(d *Done) {
	j.done++
	if d.Failed {
		j.failed++
		return
	}
	if d.Skipped {
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
		Done: j.done + j.handing, Failed: j.failed, InFlight: len(j.inflight) - j.handing, Queued: j.front.len(),
		StopReason: j.stop, Notes: append([]string(nil), j.notes...),
		Resumed: j.resumed, Finished: j.finished,
	}
	if n := len(j.disallowed); n > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("links robots.txt disallows, not read: %d", n))
	}
	if j.overflow > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("links found past the %d URLs one crawl keeps, not queued: %d", MaxFound, j.overflow))
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
