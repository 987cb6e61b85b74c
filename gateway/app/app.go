// Package app composes distill in one process: the fetcher, extractor and
// renderer services wired into the pipeline, and an embedded NATS server
// whose JetStream work queue carries batches to in-process workers. It holds
// no service logic of its own.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/natsembed"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/renderer/render"
)

// Config configures the in-process system.
type Config struct {
	// Version names distill in the User-Agent.
	Version string
	// Workers is how many batch jobs the in-process workers run at once.
	Workers int
	// CacheDir holds the fetch cache; empty means cache.DefaultDir.
	CacheDir string
}

// App is distill running in one process.
type App struct {
	logger   *slog.Logger
	cfg      Config
	fetcher  *fetch.Fetcher
	renderer *render.Renderer
	pipeline *pipeline.Pipeline
	// cache is nil when it could not be opened; cacheErr says why.
	cache    *cache.Cache
	cacheErr error

	// The queue starts on the first batch: a single fetch never pays for it.
	queueOnce sync.Once
	queueErr  error
	queue     *queue
}

type queue struct {
	server       *natsembed.Server
	conn         *nats.Conn
	dispatcher   *jobs.Dispatcher
	stopWorkers  context.CancelFunc
	workersEnded chan error
}

// New wires the services. A cache that cannot be opened is logged and
// left out: pages are still fetched, only never twice from disk.
func New(logger *slog.Logger, cfg Config) *App {
	opts := []fetch.Option{fetch.WithUserAgent(cfg.Version)}
	c, cacheErr := cache.Open(cfg.CacheDir)
	if cacheErr != nil {
		logger.Warn("fetching without a cache", "err", cacheErr.Error())
	} else {
		opts = append(opts, fetch.WithCache(c))
	}
	f := fetch.New(logger, opts...)
	e := extract.New(logger)
	r := render.New(logger)
	return &App{logger: logger, cfg: cfg, fetcher: f, renderer: r, pipeline: pipeline.New(logger, f, e, r), cache: c, cacheErr: cacheErr}
}

// CacheInfo counts the fetch cache's entries and bytes.
func (a *App) CacheInfo(context.Context) (entries, bytes int64, dir string, err error) {
	if a.cache == nil {
		return 0, 0, "", a.cacheErr
	}
	entries, bytes, err = a.cache.Info()
	return entries, bytes, a.cache.Dir(), err
}

// CachePrune removes cache entries stored olderThan ago or earlier.
func (a *App) CachePrune(_ context.Context, olderThan time.Duration) (removed, freed int64, err error) {
	if a.cache == nil {
		return 0, 0, a.cacheErr
	}
	return a.cache.Prune(olderThan)
}

// CacheClear removes every cache entry.
func (a *App) CacheClear(context.Context) (removed, freed int64, err error) {
	if a.cache == nil {
		return 0, 0, a.cacheErr
	}
	return a.cache.Clear()
}

// Do distills one page.
func (a *App) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return a.pipeline.Do(ctx, req)
}

// Batch distills urls over the job queue and calls deliver once per URL as
// results arrive.
func (a *App) Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error {
	q, err := a.startQueue()
	if err != nil {
		return err
	}
	return q.dispatcher.Run(ctx, urls, opts, deliver)
}

func (a *App) startQueue() (*queue, error) {
	a.queueOnce.Do(func() { a.queue, a.queueErr = a.newQueue() })
	return a.queue, a.queueErr
}

func (a *App) newQueue() (*queue, error) {
	srv, err := natsembed.Start(natsembed.Config{})
	if err != nil {
		return nil, err
	}
	nc, err := srv.Connect("distill")
	if err != nil {
		srv.Shutdown()
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		srv.Shutdown()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	if err := jobs.EnsureStreams(context.Background(), js, jobs.StreamConfig{Memory: true}); err != nil {
		nc.Close()
		srv.Shutdown()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	worker := jobs.NewWorker(a.logger, js, a.pipeline, a.cfg.Workers)
	go func() { ended <- worker.Run(ctx) }()
	return &queue{
		server:       srv,
		conn:         nc,
		dispatcher:   jobs.NewDispatcher(a.logger, js),
		stopWorkers:  cancel,
		workersEnded: ended,
	}, nil
}

var errClosed = errors.New("distill is shutting down")

// Close stops the workers and the embedded NATS server. Batches started
// after Close fail.
func (a *App) Close() error {
	// Marks the queue as never to be started, and orders this read of
	// a.queue after any start that did happen.
	a.queueOnce.Do(func() { a.queueErr = errClosed })
	var err error
	if q := a.queue; q != nil {
		q.stopWorkers()
		err = <-q.workersEnded
		q.conn.Close()
		q.server.Shutdown()
	}
	// After the workers, whose renders need the browser until they end; the
	// browser, when one was started, goes with its profile directory.
	err = errors.Join(err, a.renderer.Close())
	a.fetcher.Close()
	return err
}
