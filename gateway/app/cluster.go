package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/api"
	"distill.dev/gateway/session"
	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/crawl/crawljs"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/platform/natsembed"
	"distill.dev/services/platform/remote"
)

// cluster is a gateway's view of distill running as separate services: a
// single page goes through the pipeline with every stage reached over gRPC,
// and a batch goes over the NATS job queue to the fetcher workers.
type cluster struct {
	logger    *slog.Logger
	cfg       ClusterConfig
	conns     []*remote.Conn
	fetcher   *remote.Conn
	extract   *remote.Conn
	extractor *remote.Extractor
	pipeline  *pipeline.Pipeline
	mapper    *mapsite.Mapper
	crawler   *crawl.Crawler
	nc        *nats.Conn
	js        jetstream.JetStream

	streamsOnce sync.Mutex
	streamsMade bool
	// owner names this gateway in the leases of the crawls it runs.
	owner      string
	dispatcher *jobs.Dispatcher
	hub        *crawljs.Hub
	stopAdopt  context.CancelFunc
}

// openCluster connects to the services and NATS, and keeps sessions in a
// NATS key-value bucket, sealed. Connections are made lazily and kept up:
// a service or NATS that is down now is reached once it is up.
func openCluster(_ context.Context, logger *slog.Logger, all Config) (*System, error) {
	cfg := *all.Cluster
	switch {
	case len(cfg.SessionKey) == 0:
		return nil, errors.New("cluster mode keeps sessions in NATS, encrypted, and needs their key")
	case cfg.NATSURL == "":
		return nil, errors.New("cluster mode needs NATS URLs (--nats)")
	case cfg.FetcherAddr == "":
		return nil, errors.New("cluster mode needs the fetcher's address (--fetcher)")
	case cfg.ExtractorAddr == "":
		return nil, errors.New("cluster mode needs the extractor's address (--extractor)")
	}
	c := &cluster{logger: logger, cfg: cfg, owner: processName()}
	var err error
	if c.fetcher, err = c.dial("fetcher", cfg.FetcherAddr); err != nil {
		c.close()
		return nil, err
	}
	if c.extract, err = c.dial("extractor", cfg.ExtractorAddr); err != nil {
		c.close()
		return nil, err
	}
	var r pipeline.Renderer = pipeline.NoRenderer{}
	if cfg.RendererAddr != "" {
		rc, err := c.dial("renderer", cfg.RendererAddr)
		if err != nil {
			c.close()
			return nil, err
		}
		r = remote.NewRenderer(rc)
	}
	fetcher := remote.NewFetcher(c.fetcher)
	c.extractor = remote.NewExtractor(c.extract)
	c.pipeline = pipeline.New(logger, pageFetcher{fetcher}, c.extractor, r, pipeline.WithAnonymousRenders(all.AnonymousRenders))
	// The map's sitemaps, robots.txt and pages go to the same fetcher
	// address, whose cache of robots.txt and per-host limits serve both.
	c.mapper = mapsite.New(logger, mapFetcher{fetcher}, c.pipeline)
	if c.nc, c.js, err = jobs.Connect(cfg.NATSURL, "distill-gateway", logger); err != nil {
		c.close()
		return nil, err
	}
	c.dispatcher = jobs.NewDispatcher(logger, c.js)
	// A crawl's frontier runs in a gateway, its pages are work items any
	// fetcher worker takes, and its journal, its hosts' turns, its output
	// and its status live in JetStream: any gateway streams, reports or
	// cancels it, and another adopts it when its gateway dies.
	crawlCfg := crawljs.Config{Replicas: cfg.StreamReplicas, LeaseTTL: cfg.CrawlLease}
	// Its robots.txt files are work items too, read once per crawl by
	// one fetcher worker for all of them.
	work := crawljs.NewWorkReader(c.js, jobs.DefaultAckWait, crawlCfg)
	c.crawler = crawl.New(logger, work, work, crawl.WithPacer(crawljs.NewPacer(c.js, crawlCfg)))
	c.hub = crawljs.NewHub(logger, c.js, c.crawler, c.owner, crawlCfg)
	adoptCtx, stopAdopt := context.WithCancel(context.Background())
	c.stopAdopt = stopAdopt
	go c.hub.Adopt(adoptCtx)
	store, err := session.NewKVStore(c.js, cfg.SessionKey, session.DefaultMaxSessions, session.DefaultIdleTTL, cfg.StreamReplicas)
	if err != nil {
		c.close()
		return nil, err
	}
	return &System{backend: c, sessions: store, allowLocal: all.AllowLocal}, nil
}

func (c *cluster) dial(name, addr string) (*remote.Conn, error) {
	conn, err := remote.Dial(name, addr, c.cfg.DialOptions...)
	if err != nil {
		return nil, err
	}
	c.conns = append(c.conns, conn)
	return conn, nil
}

// Extract distills HTML through the extractor service.
func (c *cluster) Extract(ctx context.Context, req *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	return c.extractor.Extract(ctx, req)
}

// Do distills one page through the remote stages.
func (c *cluster) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return c.pipeline.Do(ctx, req)
}

// Batch queues one job per URL for the fetcher workers and delivers the
// results as they arrive.
func (c *cluster) Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error {
	if err := c.ensureStreams(ctx); err != nil {
		return err
	}
	return c.dispatcher.Run(ctx, urls, opts, deliver)
}

// ensureStreams makes the job streams on the first batch that finds NATS
// up.
func (c *cluster) ensureStreams(ctx context.Context) error {
	c.streamsOnce.Lock()
	defer c.streamsOnce.Unlock()
	if c.streamsMade {
		return nil
	}
	if err := jobs.Connected(c.nc); err != nil {
		return failure.New(failure.Unavailable, "batch queue: %v", err)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := jobs.EnsureStreams(sctx, c.js, jobs.StreamConfig{Replicas: c.cfg.StreamReplicas}); err != nil {
		return failure.Wrap(failure.Unavailable, err, "batch queue")
	}
	c.streamsMade = true
	return nil
}

// ready returns nil when NATS (with JetStream), the fetcher and the
// extractor answer.
func (c *cluster) ready(ctx context.Context) error {
	if err := jobs.Ready(ctx, c.nc, c.js); err != nil {
		return err
	}
	if err := c.fetcher.Healthy(ctx); err != nil {
		return err
	}
	return c.extract.Healthy(ctx)
}

var errCacheRemote = failure.New(failure.Unavailable, "in cluster mode the fetch cache lives in each fetcher process; manage it there with distill cache")

// CacheInfo is not served by a gateway in cluster mode.
func (c *cluster) CacheInfo(context.Context) (int64, int64, string, error) {
	return 0, 0, "", errCacheRemote
}

// CachePrune is not served by a gateway in cluster mode.
func (c *cluster) CachePrune(context.Context, time.Duration) (int64, int64, error) {
	return 0, 0, errCacheRemote
}

// CacheClear is not served by a gateway in cluster mode.
func (c *cluster) CacheClear(context.Context) (int64, int64, error) {
	return 0, 0, errCacheRemote
}

// Map lists a site's URLs: the gateway runs the map, and the fetcher
// reads its sitemaps and robots.txt, and with the extractor its pages.
func (c *cluster) Map(ctx context.Context, req mapsite.Request) (*mapsite.Result, error) {
	return c.mapper.Map(ctx, req)
}

// processName names this process for others to read: its host and pid.
func processName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "?"
	}
	return fmt.Sprintf("gateway %s pid %d", host, os.Getpid())
}

// pageFetcher is the pipeline's Fetcher over FetcherService, with the
// Resource call the pipeline reads a brand's stylesheets with.
type pageFetcher struct{ *remote.Fetcher }

func (f pageFetcher) Resource(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error) {
	return mapFetcher{f.Fetcher}.Resource(ctx, rawURL, opts)
}

// mapFetcher is mapsite's Fetcher over FetcherService.
type mapFetcher struct{ f *remote.Fetcher }

func (m mapFetcher) Resource(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error) {
	res, err := m.f.Resource(ctx, &internalv1.FetcherServiceResourceRequest{Url: rawURL, Options: opts})
	if err != nil {
		return nil, err
	}
	if res.GetFetched() == nil {
		return nil, failure.New(failure.Internal, "fetcher answered %s without a response", rawURL)
	}
	return res.GetFetched(), nil
}

func (m mapFetcher) Robots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*robots.Robots, error) {
	res, err := m.f.Robots(ctx, &internalv1.FetcherServiceRobotsRequest{Url: rawURL, Options: opts})
	if err != nil {
		return nil, err
	}
	return robots.FromProto(res.GetFile()), nil
}

// CrawlHub runs this gateway's crawls.
func (c *cluster) CrawlHub() api.CrawlHub { return c.hub }

// close lets go of NATS and the services, and of the crawls this gateway
// runs, which another gateway adopts.
func (c *cluster) close() error {
	if c.stopAdopt != nil {
		c.stopAdopt()
	}
	if c.hub != nil {
		c.hub.Close()
	}
	if c.nc != nil {
		_ = c.nc.Drain()
	}
	var err error
	for _, conn := range c.conns {
		err = errors.Join(err, conn.Close())
	}
	if err != nil {
		return fmt.Errorf("close cluster connections: %w", err)
	}
	return nil
}

// keyValue is the cluster's JetStream, on files with the streams'
// replicas, shared by every gateway.
// embedded: a gateway's NATS is the cluster's.
func (c *cluster) embedded() *natsembed.Shared { return nil }

func (c *cluster) keyValue() (jetstream.JetStream, jetstream.StorageType, int, error) {
	return c.js, jetstream.FileStorage, max(c.cfg.StreamReplicas, 1), nil
}
