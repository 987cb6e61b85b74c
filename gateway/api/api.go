// Package api serves DistillService, distill's public gRPC API, over a
// Backend that distills pages (in one process or across a cluster).
package api

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/session"
	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/pick"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/siteurl"
)

// MaxBatchURLs bounds one FetchBatch call.
const MaxBatchURLs = 10000

// DefaultPruneAge is CachePrune's age when the request gives none.
const DefaultPruneAge = time.Hour

// Backend distills pages and keeps the fetch cache.
type Backend interface {
	// Do runs the pipeline for one request: a stateless fetch, or a
	// session's step with its cookie jar.
	Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error
	CacheInfo(ctx context.Context) (entries, bytes int64, dir string, err error)
	CachePrune(ctx context.Context, olderThan time.Duration) (removed, freed int64, err error)
	CacheClear(ctx context.Context) (removed, freed int64, err error)
	// Map lists a site's URLs.
	Map(ctx context.Context, req mapsite.Request) (*mapsite.Result, error)
	// CrawlHub runs the crawls.
	CrawlHub() CrawlHub
}

// Server implements DistillService. It is the one implementation behind
// every door: the gRPC API serves it, and the CLI and the MCP server call
// its methods in process.
type Server struct {
	distillv1.UnimplementedDistillServiceServer
	logger   *slog.Logger
	backend  Backend
	sessions *session.Manager
}

// Option configures a Server.
type Option func(*options)

type options struct {
	sessions session.Config
}

// WithSessionLimits bounds the browsing sessions the server keeps.
func WithSessionLimits(c session.Config) Option {
	return func(o *options) { o.sessions = c }
}

// New returns a Server over backend.
func New(logger *slog.Logger, backend Backend, opts ...Option) *Server {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return &Server{logger: logger, backend: backend, sessions: session.New(logger, backend, o.sessions)}
}

// SessionStart opens a browsing session on a URL.
func (s *Server) SessionStart(ctx context.Context, req *distillv1.SessionStartRequest) (*distillv1.SessionStartResponse, error) {
	return s.sessions.Start(ctx, req)
}

// SessionObserve navigates a session to a URL.
func (s *Server) SessionObserve(ctx context.Context, req *distillv1.SessionObserveRequest) (*distillv1.SessionObserveResponse, error) {
	return s.sessions.Observe(ctx, req)
}

// SessionFollow follows a link or download of the session's last snapshot.
func (s *Server) SessionFollow(ctx context.Context, req *distillv1.SessionFollowRequest) (*distillv1.SessionFollowResponse, error) {
	return s.sessions.Follow(ctx, req)
}

// SessionSubmitForm submits a form of the session's last snapshot.
func (s *Server) SessionSubmitForm(ctx context.Context, req *distillv1.SessionSubmitFormRequest) (*distillv1.SessionSubmitFormResponse, error) {
	return s.sessions.SubmitForm(ctx, req)
}

// SessionAct runs steps in the session's page.
func (s *Server) SessionAct(ctx context.Context, req *distillv1.SessionActRequest) (*distillv1.SessionActResponse, error) {
	return s.sessions.Act(ctx, req)
}

// SessionClose forgets a session.
func (s *Server) SessionClose(ctx context.Context, req *distillv1.SessionCloseRequest) (*distillv1.SessionCloseResponse, error) {
	return s.sessions.Close(ctx, req)
}

// Fetch distills one page.
func (s *Server) Fetch(ctx context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error) {
	if req.GetUrl() == "" {
		return nil, status.Error(codes.InvalidArgument, "url is required")
	}
	if err := extract.CheckSelector(req.GetOptions().GetSelector()); err != nil {
		return nil, err
	}
	if err := pick.Check(req.GetOptions()); err != nil {
		return nil, err
	}
	res, err := s.backend.Do(ctx, pipeline.Request{URL: req.GetUrl(), Options: req.GetOptions()})
	if err != nil {
		return nil, err
	}
	return &distillv1.FetchResponse{Distilled: res.Distilled}, nil
}

// Observe distills a page with its action tree and diagnostics.
func (s *Server) Observe(ctx context.Context, req *distillv1.ObserveRequest) (*distillv1.ObserveResponse, error) {
	if req.GetUrl() == "" {
		return nil, status.Error(codes.InvalidArgument, "url is required")
	}
	if err := extract.CheckSelector(req.GetOptions().GetSelector()); err != nil {
		return nil, err
	}
	if err := pick.Check(req.GetOptions()); err != nil {
		return nil, err
	}
	res, err := s.backend.Do(ctx, pipeline.Request{URL: req.GetUrl(), Options: ObserveOptions(req.GetOptions())})
	if err != nil {
		return nil, err
	}
	return &distillv1.ObserveResponse{Distilled: res.Distilled}, nil
}

// ObserveOptions are opts with what observing always asks for: the action
// tree, diagnostics and JSON.
func ObserveOptions(opts *distillv1.FetchOptions) *distillv1.FetchOptions {
	o := &distillv1.FetchOptions{}
	if opts != nil {
		o = proto.CloneOf(opts)
	}
	o.ExtractActions = true
	o.Diagnostics = true
	o.Format = distillv1.Format_FORMAT_JSON
	return o
}

// FetchBatch distills many pages and streams each result as it is ready.
func (s *Server) FetchBatch(req *distillv1.FetchBatchRequest, stream distillv1.DistillService_FetchBatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	var sendErr error
	err := s.Batch(ctx, req, func(r *distillv1.FetchBatchResponse) {
		if sendErr != nil {
			return
		}
		if sendErr = stream.Send(r); sendErr != nil {
			// The client is gone: stop queueing the rest.
			cancel()
		}
	})
	if sendErr != nil {
		return sendErr
	}
	return err
}

// Batch distills req.urls and calls deliver once per URL, from one
// goroutine at a time, as results arrive; each names its index in
// req.urls. It returns once every URL is answered, or with the error that
// stopped the batch.
func (s *Server) Batch(ctx context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error {
	urls := req.GetUrls()
	switch {
	case len(urls) == 0:
		return status.Error(codes.InvalidArgument, "urls is required")
	case len(urls) > MaxBatchURLs:
		return status.Errorf(codes.InvalidArgument, "a batch holds at most %d urls, got %d", MaxBatchURLs, len(urls))
	}
	if err := fetchopts.Validate(req.GetOptions()); err != nil {
		return status.Errorf(codes.InvalidArgument, "invalid options: %v", err)
	}
	if err := extract.CheckSelector(req.GetOptions().GetSelector()); err != nil {
		return err
	}
	if err := pick.Check(req.GetOptions()); err != nil {
		return err
	}
	return s.backend.Batch(ctx, urls, req.GetOptions(), func(r *internalv1.FetchJobResult) {
		out := &distillv1.FetchBatchResponse{Index: r.GetIndex(), Url: r.GetUrl()}
		if e := r.GetError(); e != nil {
			out.Outcome = &distillv1.FetchBatchResponse_Error{Error: e}
		} else {
			out.Outcome = &distillv1.FetchBatchResponse_Result{Result: r.GetResult()}
		}
		deliver(out)
	})
}

// StreamBatch is Batch on a gateway reached over gRPC: it calls FetchBatch
// through c and hands each streamed answer to deliver, returning once the
// stream ends. Its errors are the client's, untranslated.
func StreamBatch(ctx context.Context, c distillv1.DistillServiceClient, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error {
	stream, err := c.FetchBatch(ctx, req)
	if err != nil {
		return err
	}
	return drain(stream, func(res *distillv1.FetchBatchResponse) error {
		deliver(res)
		return nil
	})
}

// drain hands each message of a server stream to deliver until the stream
// ends, deliver fails or the call does.
func drain[T any](stream interface{ Recv() (T, error) }, deliver func(T) error) error {
	for {
		res, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := deliver(res); err != nil {
			return err
		}
	}
}

// MaxMapPages bounds the short crawl of one Map call, as MaxBatchURLs
// bounds the pages of one batch: a caller of the API is not the server's
// operator, and a map is as much work for the server as a batch.
const MaxMapPages = MaxBatchURLs

// mapBatchURLs is how many URLs one MapResponse carries: at
// siteurl.MaxLength each, 1 MiB, well within what any gRPC client accepts.
const mapBatchURLs = 1 << 20 / siteurl.MaxLength

// Map lists a site's URLs and streams them in batches. A caller over gRPC
// is held to MaxMapPages; the CLI in process is the operator and is not.
func (s *Server) Map(req *distillv1.MapRequest, stream distillv1.DistillService_MapServer) error {
	if req.GetMapPages() > MaxMapPages {
		return failure.New(failure.InvalidArgument, "map_pages is at most %d, got %d", MaxMapPages, req.GetMapPages())
	}
	return s.MapSite(stream.Context(), req, stream.Send)
}

// MapSite lists req's site and hands its URLs to deliver, in order, in
// batches; the last batch (the only one when there are no URLs) carries
// the counts and notes. It stops at the first error deliver returns.
func (s *Server) MapSite(ctx context.Context, req *distillv1.MapRequest, deliver func(*distillv1.MapResponse) error) error {
	mreq, err := MapRequestOf(req)
	if err != nil {
		return err
	}
	res, err := s.backend.Map(ctx, mreq)
	if err != nil {
		return err
	}
	urls := res.URLs
	for {
		n := min(len(urls), mapBatchURLs)
		out := &distillv1.MapResponse{Urls: urls[:n]}
		urls = urls[n:]
		if len(urls) == 0 {
			out.Found = int32(res.Found)
			out.StoppedAtLimit = res.StoppedAtLimit
			out.FromSitemaps = int32(res.FromSitemaps)
			out.FromCrawl = int32(res.FromCrawl)
			out.PagesRead = int32(res.PagesRead)
			out.Notes = res.Notes
		}
		if err := deliver(out); err != nil {
			return err
		}
		if len(urls) == 0 {
			return nil
		}
	}
}

// MapRequestOf checks req and turns it into the mapper's request, with the
// defaults distill map's flags have.
func MapRequestOf(req *distillv1.MapRequest) (mapsite.Request, error) {
	if req.GetUrl() == "" {
		return mapsite.Request{}, failure.New(failure.InvalidArgument, "url is required")
	}
	switch {
	case req.GetMapLimit() < 0:
		return mapsite.Request{}, failure.New(failure.InvalidArgument, "map_limit cannot be negative, got %d", req.GetMapLimit())
	case req.GetMapPages() < 0:
		return mapsite.Request{}, failure.New(failure.InvalidArgument, "map_pages cannot be negative, got %d", req.GetMapPages())
	case req.GetDelayMs() < 0:
		return mapsite.Request{}, failure.New(failure.InvalidArgument, "delay_ms cannot be negative, got %d", req.GetDelayMs())
	}
	out := mapsite.Request{
		URL:          req.GetUrl(),
		Limit:        mapsite.DefaultLimit,
		Query:        req.GetQuery(),
		Pages:        int(req.GetMapPages()),
		NoCrawl:      req.GetNoMapCrawl() || req.MapPages != nil && req.GetMapPages() == 0,
		IgnoreRobots: req.GetIgnoreRobots(),
		Delay:        mapsite.DefaultDelay,
		AllowLocal:   req.GetAllowLocal(),
		TimeoutSecs:  req.GetTimeoutSecs(),
		Browser:      req.GetBrowser(),
	}
	if req.MapLimit != nil {
		out.Limit = int(req.GetMapLimit())
	}
	if req.DelayMs != nil {
		out.Delay = time.Duration(req.GetDelayMs()) * time.Millisecond
	}
	out.Scope = siteurl.ScopeOptions{
		IncludeSubdomains: req.GetIncludeSubdomains(),
		PathPrefix:        req.GetPathPrefix(),
		Include:           req.GetIncludePaths(),
		Exclude:           req.GetExcludePaths(),
	}
	if err := fetchopts.Validate(&distillv1.FetchOptions{TimeoutSecs: req.TimeoutSecs}); err != nil {
		return mapsite.Request{}, failure.Wrap(failure.InvalidArgument, err, "invalid options")
	}
	if _, err := identity.Named(req.GetBrowser()); err != nil {
		return mapsite.Request{}, failure.Wrap(failure.InvalidArgument, err, "browser")
	}
	return out, nil
}

// StreamMap is MapSite on a gateway reached over gRPC: it calls Map
// through c and hands each batch to deliver. Its errors are the client's,
// untranslated.
func StreamMap(ctx context.Context, c distillv1.DistillServiceClient, req *distillv1.MapRequest, deliver func(*distillv1.MapResponse) error) error {
	stream, err := c.Map(ctx, req)
	if err != nil {
		return err
	}
	return drain(stream, deliver)
}

// CacheInfo reports the fetch cache's size. Where the cache lives is the
// server's business, not its callers': dir is left empty.
func (s *Server) CacheInfo(ctx context.Context, _ *distillv1.CacheInfoRequest) (*distillv1.CacheInfoResponse, error) {
	entries, bytes, _, err := s.backend.CacheInfo(ctx)
	if err != nil {
		return nil, s.cacheError(err)
	}
	return &distillv1.CacheInfoResponse{Entries: entries, TotalBytes: bytes}, nil
}

// CachePrune removes cache entries older than older_than_secs.
func (s *Server) CachePrune(ctx context.Context, req *distillv1.CachePruneRequest) (*distillv1.CachePruneResponse, error) {
	age := DefaultPruneAge
	if req.OlderThanSecs != nil {
		if req.GetOlderThanSecs() < 0 {
			return nil, status.Errorf(codes.InvalidArgument, "older_than_secs must not be negative, got %d", req.GetOlderThanSecs())
		}
		age = cache.Seconds(req.GetOlderThanSecs())
	}
	removed, freed, err := s.backend.CachePrune(ctx, age)
	if err != nil {
		return nil, s.cacheError(err)
	}
	return &distillv1.CachePruneResponse{Removed: removed, FreedBytes: freed}, nil
}

// CacheClear removes every cache entry.
func (s *Server) CacheClear(ctx context.Context, _ *distillv1.CacheClearRequest) (*distillv1.CacheClearResponse, error) {
	removed, freed, err := s.backend.CacheClear(ctx)
	if err != nil {
		return nil, s.cacheError(err)
	}
	return &distillv1.CacheClearResponse{Removed: removed, FreedBytes: freed}, nil
}

// cacheError translates a cache failure: the directory is missing,
// unwritable or damaged, which the server's operator must fix, not the
// caller by retrying. The caller learns what went wrong but not the
// server's paths, which the log keeps for the operator.
func (s *Server) cacheError(err error) error {
	s.logger.Warn("fetch cache", "err", err.Error())
	msg := err.Error()
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		msg = "fetch cache: " + pe.Op + ": " + pe.Err.Error()
	}
	return status.Error(codes.FailedPrecondition, msg)
}
