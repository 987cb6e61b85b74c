package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/api"
	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/crawl/crawljs"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/pipeline"
	fetcherserver "distill.dev/services/fetcher/server"
	"distill.dev/services/platform/natsembed"
	"distill.dev/services/renderer/render"
)

// local is every service in this process.
type local struct {
	logger    *slog.Logger
	workers   int
	fetcher   *fetch.Fetcher
	extractor *extract.Extractor
	renderer  *render.Renderer
	pipeline  *pipeline.Pipeline
	mapper    *mapsite.Mapper
	crawler   *crawl.Crawler
	// cache is nil when it could not be opened; cacheErr says why.
	cache    *cache.Cache
	cacheErr error

	// nats is the process's one embedded NATS server, which host mode's
	// state store may have started first (System.Embedded).
	nats *natsembed.Shared
	// The queue starts on the first batch or crawl: a single fetch never
	// pays for it. queueUp is set once it has.
	queueOnce sync.Once
	queueErr  error
	queue     *queue
	queueUp   atomic.Bool
}

// queue is what runs on the embedded NATS server: the batch workers and
// their dispatcher, and the crawl hub.
type queue struct {
	conn         *nats.Conn
	js           jetstream.JetStream
	dispatcher   *jobs.Dispatcher
	stopWorkers  context.CancelFunc
	workersEnded chan error
	hub          *crawljs.Hub
}

func newLocal(logger *slog.Logger, cfg Config) *local {
	f, c, cacheErr := fetcherserver.NewFetcher(logger, fetcherserver.FetcherConfig{
		UserAgentVersion: cfg.UserAgentVersion, CacheDir: cfg.CacheDir,
		AllowLocal: cfg.AllowLocal, Own: cfg.Own, Recorder: cfg.Recorder, RootCAs: cfg.RootCAs,
	})
	// One set of listeners for the fetcher and the renderer: a fetch must
	// not reach a render's egress proxy either.
	ropts := []render.Option{render.WithAllowLocal(cfg.AllowLocal), render.WithOwn(cfg.Own)}
	if cfg.Chromium != "" {
		ropts = append(ropts, render.WithChromium(cfg.Chromium))
	}
	if cfg.AnonymousRenders {
		// Both ends refuse, as in a cluster the pipeline and the renderer
		// each hold to their operator's word.
		ropts = append(ropts, render.WithoutCookies())
	}
	r := render.New(logger, ropts...)
	workers := cfg.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	memory := cfg.ExtractMemory
	if memory == 0 {
		memory = extract.DefaultMemoryBudget
	}
	ex := extract.New(logger, extract.WithMemoryBudget(memory), extract.WithPDFCacheDir(cfg.PDFCacheDir))
	p := pipeline.New(logger, f, ex, r, pipeline.WithAnonymousRenders(cfg.AnonymousRenders))
	return &local{
		logger: logger, workers: workers, fetcher: f, extractor: ex, renderer: r,
		pipeline: p,
		// One fetcher under the map's sitemaps and pages: robots.txt is
		// read once, and per-host limits count both.
		mapper: mapsite.New(logger, f, p),
		// The crawl's pages go through the same fetcher, which judges
		// each redirect against the crawl's scope before following it.
		crawler: crawl.New(logger, f, crawl.NewLocalReader(logger, f, ex, r, pipeline.WithAnonymousRenders(cfg.AnonymousRenders))),
		cache:   c, cacheErr: cacheErr,
		nats: &natsembed.Shared{},
	}
}

// Map lists a site's URLs.
func (l *local) Map(ctx context.Context, req mapsite.Request) (*mapsite.Result, error) {
	return l.mapper.Map(ctx, req)
}

// CacheInfo counts the fetch cache's entries and bytes.
func (l *local) CacheInfo(context.Context) (entries, bytes int64, dir string, err error) {
	if l.cache == nil {
		return 0, 0, "", l.cacheErr
	}
	entries, bytes, err = l.cache.Info()
	return entries, bytes, l.cache.Dir(), err
}

// CachePrune removes cache entries stored olderThan ago or earlier.
func (l *local) CachePrune(_ context.Context, olderThan time.Duration) (removed, freed int64, err error) {
	if l.cache == nil {
		return 0, 0, l.cacheErr
	}
	return l.cache.Prune(olderThan)
}

// CacheClear removes every cache entry.
func (l *local) CacheClear(context.Context) (removed, freed int64, err error) {
	if l.cache == nil {
		return 0, 0, l.cacheErr
	}
	return l.cache.Clear()
}

// Extract distills HTML in this process.
func (l *local) Extract(ctx context.Context, req *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	return l.extractor.Extract(ctx, req)
}

// Do distills one page.
func (l *local) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return l.pipeline.Do(ctx, req)
}

// Batch distills urls over the job queue and calls deliver once per URL as
// results arrive.
func (l *local) Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error {
	q, err := l.startQueue()
	if err != nil {
		return err
	}
	return q.dispatcher.Run(ctx, urls, opts, deliver)
}

// ready: a process that serves is ready.
func (l *local) ready(context.Context) error { return nil }

func (l *local) startQueue() (*queue, error) {
	l.queueOnce.Do(func() {
		l.queue, l.queueErr = l.newQueue()
		l.queueUp.Store(l.queueErr == nil)
	})
	return l.queue, l.queueErr
}

func (l *local) newQueue() (*queue, error) {
	srv, err := l.nats.Hold()
	if err != nil {
		return nil, err
	}
	nc, err := srv.Connect("distill")
	if err != nil {
		l.nats.Release(nil)
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		l.nats.Release(nil)
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	streams := jobs.StreamConfig{Memory: true}
	// Made here too, not only by the workers, so that a queue that cannot
	// be made fails this batch instead of leaving it waiting.
	if err := jobs.EnsureStreams(context.Background(), js, streams); err != nil {
		nc.Close()
		l.nats.Release(nil)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	// The stages run in this process and the NATS server lives and dies
	// with it: nothing to release to another worker, nothing to restart.
	go func() {
		ended <- jobs.Serve(ctx, l.logger, js, l.pipeline, jobs.ServeConfig{Workers: l.workers, Streams: streams})
	}()
	return &queue{
		conn:         nc,
		js:           js,
		dispatcher:   jobs.NewDispatcher(l.logger, js),
		stopWorkers:  cancel,
		workersEnded: ended,
		// The crawls run as a cluster's do, their journals, status and
		// output in the server's memory, their pages read and paced in
		// this process by the crawler. Nothing adopts them (Hub.Adopt):
		// the memory they live in dies with the process that runs them,
		// so no crawl outlives its owner here.
		hub: crawljs.NewHub(l.logger, js, l.crawler, processName(), crawljs.Config{Memory: true}),
	}, nil
}

// keyValue is the embedded server's JetStream, kept in memory: this
// process is its only gateway.
func (l *local) keyValue() (jetstream.JetStream, jetstream.StorageType, int, error) {
	q, err := l.startQueue()
	if err != nil {
		return nil, 0, 0, err
	}
	return q.js, jetstream.MemoryStorage, 1, nil
}

func (l *local) embedded() *natsembed.Shared { return l.nats }

var errClosed = errors.New("distill is shutting down")

// close stops the crawls, the workers and the embedded NATS server.
// Batches and crawls started after close fail.
func (l *local) close() error {
	// Marks the queue as never to be started, and orders this read of
	// l.queue after any start that did happen.
	l.queueOnce.Do(func() { l.queueErr = errClosed })
	var err error
	if q := l.queue; q != nil {
		// The crawls stop first, while the server they write their end to
		// is up.
		q.hub.Close()
		q.stopWorkers()
		err = <-q.workersEnded
		q.conn.Close()
		// Down now, unless host mode's state store still serves the
		// user's other processes from it.
		l.nats.Release(nil)
	}
	// After the workers, whose renders need the browser until they end; the
	// browser, when one was started, goes with its profile directory.
	err = errors.Join(err, l.renderer.Close(), l.extractor.Close())
	l.fetcher.Close()
	return err
}

// CrawlHub is the hub on the embedded NATS server, started on the first
// crawl.
func (l *local) CrawlHub() api.CrawlHub { return localHub{l} }

// localHub is the embedded server's crawljs.Hub, reached through the
// queue that starts it.
type localHub struct{ l *local }

func (h localHub) hub() (*crawljs.Hub, error) {
	q, err := h.l.startQueue()
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "crawl jobs")
	}
	return q.hub, nil
}

// StartCrawl begins a crawl on the hub, starting the server.
func (h localHub) StartCrawl(ctx context.Context, req crawl.Request, journal crawl.Journal) (string, error) {
	hub, err := h.hub()
	if err != nil {
		return "", err
	}
	return hub.StartCrawl(ctx, req, journal)
}

// FollowCrawl streams a crawl of the hub.
func (h localHub) FollowCrawl(ctx context.Context, id string, deliver func(*distillv1.CrawlResponse) error) error {
	hub, err := h.hub()
	if err != nil {
		return err
	}
	return hub.FollowCrawl(ctx, id, deliver)
}

// started is the hub once the server is up, without starting it: before
// it, no crawl id names a crawl.
func (h localHub) started(id string) (*crawljs.Hub, error) {
	if !h.l.queueUp.Load() {
		return nil, failure.New(failure.NotFound, "no crawl with job id %q", id)
	}
	return h.hub()
}

// CrawlStatus reports a crawl of the hub.
func (h localHub) CrawlStatus(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error) {
	hub, err := h.started(id)
	if err != nil {
		return nil, err
	}
	return hub.CrawlStatus(ctx, id)
}

// CancelCrawl cancels a crawl of the hub.
func (h localHub) CancelCrawl(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error) {
	hub, err := h.started(id)
	if err != nil {
		return nil, err
	}
	return hub.CancelCrawl(ctx, id)
}
