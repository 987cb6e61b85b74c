package api

import (
	"context"
	"strings"
	"sync"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/crawl/crawljs"
	"distill.dev/services/fetcher/siteurl"
)

// A caller of the API is not the server's operator: its crawl is held to
// what a batch may cost, pages and workers alike.
const (
	MaxCrawlPages       = MaxBatchURLs
	MaxCrawlConcurrency = 64
	// keptCrawls is how many finished crawls CrawlStatus still knows.
	keptCrawls = 256
)

// crawls are the jobs a Server runs, by id, and the finished ones it
// still reports.
type crawls struct {
	mu       sync.Mutex
	jobs     map[string]*crawlJob
	finished []string
}

type crawlJob struct {
	job *crawl.Job
	// last is the summary once the crawl ended; state is FAILED or
	// CANCELED when it did not end by itself.
	mu    sync.Mutex
	last  *distillv1.CrawlStatusResponse
	state distillv1.CrawlState
	err   error
}

func (c *crawls) add(j *crawl.Job) *crawlJob {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs == nil {
		c.jobs = map[string]*crawlJob{}
	}
	cj := &crawlJob{job: j, state: distillv1.CrawlState_CRAWL_STATE_RUNNING}
	c.jobs[j.ID()] = cj
	return cj
}

func (c *crawls) get(id string) (*crawlJob, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	j, ok := c.jobs[id]
	return j, ok
}

// end keeps a finished crawl's summary for CrawlStatus, forgetting the
// oldest beyond keptCrawls.
func (c *crawls) end(cj *crawlJob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = append(c.finished, cj.job.ID())
	if len(c.finished) > keptCrawls {
		delete(c.jobs, c.finished[0])
		c.finished = c.finished[1:]
	}
}

func (cj *crawlJob) status() *distillv1.CrawlStatusResponse {
	cj.mu.Lock()
	defer cj.mu.Unlock()
	if cj.last != nil {
		return cj.last
	}
	return statusOf(cj.job.Status(), cj.state, nil)
}

func statusOf(st crawl.Status, state distillv1.CrawlState, err error) *distillv1.CrawlStatusResponse {
	return crawljs.StatusProto(st, state, err)
}

// CrawlHub runs crawls as jobs that outlive the gateway that started
// them: a cluster's gateways share them, so any gateway streams, reports
// or cancels any crawl, and one adopts the crawls of another that died.
// A Backend that has one says so with a CrawlHub method returning it.
type CrawlHub interface {
	// StartCrawl begins req's crawl, or names one begun before
	// (req.JobID), and returns its id.
	StartCrawl(ctx context.Context, req crawl.Request) (string, error)
	// FollowCrawl streams a crawl's status, its pages not streamed yet
	// and its summary; the crawl is canceled if ctx ends first.
	FollowCrawl(ctx context.Context, id string, deliver func(*distillv1.CrawlResponse) error) error
	CrawlStatus(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error)
	CancelCrawl(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error)
}

// hub is the backend's CrawlHub, or nil.
func (s *Server) hub() CrawlHub {
	if h, ok := s.backend.(interface{ CrawlHub() CrawlHub }); ok {
		return h.CrawlHub()
	}
	return nil
}

// Crawl reads a site and streams its pages. A caller over gRPC is held
// to MaxCrawlPages and MaxCrawlConcurrency; the CLI in process is the
// operator and is not.
func (s *Server) Crawl(req *distillv1.CrawlRequest, stream distillv1.DistillService_CrawlServer) error {
	switch {
	case req.MaxPages != nil && (req.GetMaxPages() == 0 || req.GetMaxPages() > MaxCrawlPages):
		return failure.New(failure.InvalidArgument, "max_pages is 1 to %d over the API, got %d", MaxCrawlPages, req.GetMaxPages())
	case req.GetConcurrency() > MaxCrawlConcurrency:
		return failure.New(failure.InvalidArgument, "concurrency is at most %d, got %d", MaxCrawlConcurrency, req.GetConcurrency())
	}
	return s.CrawlSite(stream.Context(), req, nil, stream.Send)
}

// CrawlSite runs req's crawl, its progress kept in journal (nil keeps
// none), and hands deliver a first message naming the job, then each
// page as it completes, then the summary. It stops at the first error
// deliver returns. A crawl whose journal says it finished delivers only
// the summary.
func (s *Server) CrawlSite(ctx context.Context, req *distillv1.CrawlRequest, journal crawl.Journal, deliver func(*distillv1.CrawlResponse) error) error {
	creq, err := CrawlRequestOf(req)
	if err != nil {
		return err
	}
	if hub := s.hub(); hub != nil && journal == nil {
		id, err := hub.StartCrawl(ctx, creq)
		if err != nil {
			return err
		}
		return hub.FollowCrawl(ctx, id, deliver)
	}
	job, err := s.backend.BeginCrawl(creq, journal)
	if err != nil {
		return err
	}
	cj := s.crawls.add(job)
	defer s.crawls.end(cj)
	id := job.ID()
	if err := deliver(&distillv1.CrawlResponse{JobId: id, Event: &distillv1.CrawlResponse_Summary{Summary: cj.status()}}); err != nil {
		job.Cancel()
		job.Close()
		return err
	}
	st, runErr := job.Run(ctx, func(p crawl.Page) error {
		out := &distillv1.CrawlPage{Url: p.URL, Depth: int32(p.Depth)}
		if p.Err != nil {
			out.Outcome = &distillv1.CrawlPage_Error{Error: failure.Proto(p.Err)}
		} else {
			out.Outcome = &distillv1.CrawlPage_Result{Result: p.Result}
		}
		return deliver(&distillv1.CrawlResponse{JobId: id, Event: &distillv1.CrawlResponse_Page{Page: out}})
	})
	state := distillv1.CrawlState_CRAWL_STATE_DONE
	switch {
	case runErr != nil && ctx.Err() != nil, st.StopReason == crawl.StopCanceled:
		state = distillv1.CrawlState_CRAWL_STATE_CANCELED
	case runErr != nil:
		state = distillv1.CrawlState_CRAWL_STATE_FAILED
	}
	summary := statusOf(st, state, runErr)
	cj.mu.Lock()
	cj.last, cj.state, cj.err = summary, state, runErr
	cj.mu.Unlock()
	if runErr != nil {
		return runErr
	}
	return deliver(&distillv1.CrawlResponse{JobId: id, Event: &distillv1.CrawlResponse_Summary{Summary: summary}})
}

// CrawlUUID is a crawl's job id in the form of a UUID, as Firecrawl's
// clients take a job id (firecrawl-cli tells a job from a URL by it): a
// version 8 UUID, whose layout RFC 9562 leaves to its maker, holding the
// id's 16 hex digits and zeros after them. CrawlID reads it back.
func CrawlUUID(id string) string {
	if !crawl.ValidID(id) {
		return id
	}
	return id[:8] + "-" + id[8:12] + "-8" + id[12:15] + "-8" + id[15:] + "00-000000000000"
}

// CrawlID is the crawl job id s names: s itself, or the id a CrawlUUID
// holds. CrawlStatus and CrawlCancel take either.
func CrawlID(s string) string {
	s = strings.ToLower(s)
	if len(s) != 36 || !strings.HasSuffix(s, "00-000000000000") {
		return s
	}
	if s[8] != '-' || s[13] != '-' || s[14] != '8' || s[18] != '-' || s[19] != '8' {
		return s
	}
	id := s[:8] + s[9:13] + s[15:18] + s[20:21]
	if !crawl.ValidID(id) {
		return s
	}
	return id
}

// CrawlStatus reports a crawl by job id (or its CrawlUUID).
func (s *Server) CrawlStatus(ctx context.Context, req *distillv1.CrawlStatusRequest) (*distillv1.CrawlStatusResponse, error) {
	id := CrawlID(req.GetJobId())
	if hub := s.hub(); hub != nil {
		if st, err := hub.CrawlStatus(ctx, id); failure.CodeOf(err) != failure.NotFound {
			return st, err
		}
	}
	cj, ok := s.crawls.get(id)
	if !ok {
		return nil, failure.New(failure.NotFound, "no crawl with job id %q on this server", req.GetJobId())
	}
	return cj.status(), nil
}

// CrawlCancel stops a crawl starting pages; its stream ends once the
// pages in flight are delivered.
func (s *Server) CrawlCancel(ctx context.Context, req *distillv1.CrawlCancelRequest) (*distillv1.CrawlCancelResponse, error) {
	id := CrawlID(req.GetJobId())
	if hub := s.hub(); hub != nil {
		st, err := hub.CancelCrawl(ctx, id)
		if failure.CodeOf(err) != failure.NotFound {
			if err != nil {
				return nil, err
			}
			return &distillv1.CrawlCancelResponse{Status: st}, nil
		}
	}
	cj, ok := s.crawls.get(id)
	if !ok {
		return nil, failure.New(failure.NotFound, "no crawl with job id %q on this server", req.GetJobId())
	}
	cj.job.Cancel()
	return &distillv1.CrawlCancelResponse{Status: cj.status()}, nil
}

// CrawlRequestOf checks req and turns it into the crawler's request, with
// the defaults distill crawl's flags have.
func CrawlRequestOf(req *distillv1.CrawlRequest) (crawl.Request, error) {
	if req.GetUrl() == "" {
		return crawl.Request{}, failure.New(failure.InvalidArgument, "url is required")
	}
	switch {
	case req.GetDepth() < 0:
		return crawl.Request{}, failure.New(failure.InvalidArgument, "depth cannot be negative, got %d", req.GetDepth())
	case req.GetMaxPages() < 0:
		return crawl.Request{}, failure.New(failure.InvalidArgument, "max_pages cannot be negative, got %d", req.GetMaxPages())
	case req.GetConcurrency() < 0:
		return crawl.Request{}, failure.New(failure.InvalidArgument, "concurrency cannot be negative, got %d", req.GetConcurrency())
	case req.GetDelayMs() < 0:
		return crawl.Request{}, failure.New(failure.InvalidArgument, "delay_ms cannot be negative, got %d", req.GetDelayMs())
	}
	if id := req.GetJobId(); id != "" && !crawl.ValidID(id) {
		return crawl.Request{}, failure.New(failure.InvalidArgument, "job_id %q is not a crawl's job id (16 hex digits)", id)
	}
	if err := fetchopts.Validate(req.GetOptions()); err != nil {
		return crawl.Request{}, failure.Wrap(failure.InvalidArgument, err, "invalid options")
	}
	if err := extract.CheckSelector(req.GetOptions().GetSelector()); err != nil {
		return crawl.Request{}, err
	}
	out := crawl.Request{
		URL:              req.GetUrl(),
		Depth:            crawl.DefaultDepth,
		MaxPages:         crawl.DefaultMaxPages,
		Concurrency:      int(req.GetConcurrency()),
		Delay:            crawl.DefaultDelay,
		IgnoreRobots:     req.GetIgnoreRobots(),
		Query:            req.GetQuery(),
		StopWhenAnswered: req.GetStopWhenAnswered(),
		Options:          req.GetOptions(),
		JobID:            req.GetJobId(),
		Scope: siteurl.ScopeOptions{
			IncludeSubdomains: req.GetIncludeSubdomains(),
			PathPrefix:        req.GetPathPrefix(),
			Include:           req.GetIncludePaths(),
			Exclude:           req.GetExcludePaths(),
		},
	}
	if req.Depth != nil {
		out.Depth = int(req.GetDepth())
	}
	if req.MaxPages != nil {
		out.MaxPages = int(req.GetMaxPages())
	}
	if req.DelayMs != nil {
		out.Delay = time.Duration(req.GetDelayMs()) * time.Millisecond
	}
	return out, nil
}

// StreamCrawl is CrawlSite on a gateway reached over gRPC. Its errors are
// the client's, untranslated.
func StreamCrawl(ctx context.Context, c distillv1.DistillServiceClient, req *distillv1.CrawlRequest, deliver func(*distillv1.CrawlResponse) error) error {
	stream, err := c.Crawl(ctx, req)
	if err != nil {
		return err
	}
	return drain(stream, deliver)
}
