package api

import (
	"context"
	"strings"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/siteurl"
)

// A caller of the API is not the server's operator: its crawl is held to
// what a batch may cost, pages and workers alike.
const (
	MaxCrawlPages       = MaxBatchURLs
	MaxCrawlConcurrency = 64
)

// CrawlHub runs crawls as jobs in JetStream (crawljs.Hub): the embedded
// NATS of the single binary, or a cluster's, whose gateways share them,
// so that any gateway streams, reports or cancels any crawl, and one
// adopts the crawls of another that died. It is the one registry of
// crawls whatever door began them.
type CrawlHub interface {
	// StartCrawl begins req's crawl, its progress kept in journal (nil:
	// in JetStream), or names one begun before (req.JobID), and returns
	// its id.
	StartCrawl(ctx context.Context, req crawl.Request, journal crawl.Journal) (string, error)
	// FollowCrawl streams a crawl's status, its pages not streamed yet
	// and its summary; the crawl is canceled if ctx ends first.
	FollowCrawl(ctx context.Context, id string, deliver func(*distillv1.CrawlResponse) error) error
	CrawlStatus(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error)
	CancelCrawl(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error)
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

// CrawlSite runs req's crawl on the backend's CrawlHub, its progress
// kept in journal (nil keeps it in JetStream), and hands deliver a first
// message naming the job, then each page as it completes, then the
// summary. It stops, and cancels the crawl, at the first error deliver
// returns. A crawl whose journal says it finished delivers only the
// summary.
func (s *Server) CrawlSite(ctx context.Context, req *distillv1.CrawlRequest, journal crawl.Journal, deliver func(*distillv1.CrawlResponse) error) error {
	creq, err := CrawlRequestOf(req)
	if err != nil {
		return err
	}
	hub := s.backend.CrawlHub()
	id, err := hub.StartCrawl(ctx, creq, journal)
	if err != nil {
		return err
	}
	return hub.FollowCrawl(ctx, id, deliver)
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
	st, err := s.backend.CrawlHub().CrawlStatus(ctx, CrawlID(req.GetJobId()))
	if err != nil {
		return nil, unknownCrawl(err, req.GetJobId())
	}
	return st, nil
}

// CrawlCancel stops a crawl starting pages; its stream ends once the
// pages in flight are delivered.
func (s *Server) CrawlCancel(ctx context.Context, req *distillv1.CrawlCancelRequest) (*distillv1.CrawlCancelResponse, error) {
	st, err := s.backend.CrawlHub().CancelCrawl(ctx, CrawlID(req.GetJobId()))
	if err != nil {
		return nil, unknownCrawl(err, req.GetJobId())
	}
	return &distillv1.CrawlCancelResponse{Status: st}, nil
}

// unknownCrawl names the job id as the caller spelled it when the hub
// knows no such crawl.
func unknownCrawl(err error, asked string) error {
	if failure.CodeOf(err) == failure.NotFound {
		return failure.New(failure.NotFound, "no crawl with job id %q on this server", asked)
	}
	return err
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
