package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/crawl/crawljs"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/remote"
)

// FetcherConfig is how a fetcher is built, in its own process or in the
// single binary.
type FetcherConfig struct {
	// UserAgentVersion is the version sent in the User-Agent header.
	UserAgentVersion string
	// CacheDir holds the fetch cache; empty means cache.DefaultDir.
	CacheDir string
	// NoCache runs without the on-disk cache.
	NoCache bool
	// AllowLocal lets requests ask for loopback (allow_local); without it
	// they are refused.
	AllowLocal bool
	// Own holds the process's listening addresses, which no fetch may
	// reach.
	Own *netpolicy.Own
	// Recorder, when set, is handed every HTTP exchange the fetcher makes
	// (a WARC file: fetch.WithRecorder).
	Recorder fetch.Recorder
	// RootCAs, when set, verifies servers' certificates against these
	// roots instead of the system's (fetch.WithRootCAs): a private CA's
	// sites, or a test's server. Certificates are verified either way.
	RootCAs *x509.CertPool
}

// NewFetcher builds the fetcher with its on-disk cache. A cache that cannot
// be opened costs repeated fetches, not the service: it is logged and left
// out, c is nil and cacheErr says why, for whoever manages the cache.
func NewFetcher(logger *slog.Logger, cfg FetcherConfig) (f *fetch.Fetcher, c *cache.Cache, cacheErr error) {
	opts := []fetch.Option{fetch.WithUserAgent(cfg.UserAgentVersion), fetch.WithAllowLocal(cfg.AllowLocal), fetch.WithOwn(cfg.Own)}
	if cfg.Recorder != nil {
		opts = append(opts, fetch.WithRecorder(cfg.Recorder))
	}
	if cfg.RootCAs != nil {
		opts = append(opts, fetch.WithRootCAs(cfg.RootCAs))
	}
	if cfg.NoCache {
		cacheErr = errors.New("the fetch cache is off")
	} else if c, cacheErr = cache.Open(cfg.CacheDir); cacheErr != nil {
		logger.Warn("fetching without a cache", "err", cacheErr.Error())
	} else {
		opts = append(opts, fetch.WithCache(c))
	}
	return fetch.New(logger, opts...), c, cacheErr
}

// Config is what the fetcher process needs to run.
type Config struct {
	// Addr is the gRPC listen address, host:port.
	Addr string
	FetcherConfig

	// NATSURL, when set, makes the process a batch worker of the NATS
	// cluster at these comma-separated URLs.
	NATSURL string
	// ExtractorAddr and RendererAddr are where a batch worker reaches the
	// extractor (required) and the renderer (optional: without one, pages
	// are never rendered).
	ExtractorAddr string
	RendererAddr  string
	// Workers is how many jobs run at once; AckWait how long a job may go
	// unanswered before another worker gets it (every worker must agree);
	// StreamReplicas the replication of the job streams.
	Workers        int
	AckWait        time.Duration
	StreamReplicas int
	// AnonymousRenders keeps sessions' cookies out of renders.
	AnonymousRenders bool
	// GRPCOptions and DialOptions are added to the server and to the
	// connections to other services (telemetry).
	GRPCOptions []grpc.ServerOption
	DialOptions []grpc.DialOption
}

// Run serves until ctx ends, then stops gracefully: the gRPC server stops
// taking calls and finishes those in flight, and the worker stops pulling
// jobs and finishes the ones it holds. A job cut short is not acked, so
// JetStream hands it to another worker.
func Run(ctx context.Context, cfg Config, logger *slog.Logger) error {
	lis, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	return serve(ctx, lis, cfg, logger)
}

func serve(ctx context.Context, lis net.Listener, cfg Config, logger *slog.Logger) error {
	if cfg.Own == nil {
		cfg.Own = netpolicy.NewOwn()
	}
	cfg.Own.Add(lis.Addr(), "gRPC port")
	f, _, _ := NewFetcher(logger, cfg.FetcherConfig)
	defer f.Close()
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		internalv1.RegisterFetcherServiceServer(s, service{f: f})
	}, cfg.GRPCOptions...)
	if cfg.NATSURL == "" {
		return srv.Serve(ctx, lis)
	}

	w, err := startWorker(ctx, cfg, logger, f)
	if err != nil {
		_ = lis.Close()
		return err
	}
	defer w.close()
	srv.SetReadiness(w.ready)
	return srv.Serve(ctx, lis)
}

// service is FetcherService over the process's one fetcher. It is not
// the fetcher itself because Resource and Robots are called in-process
// with plain arguments, and take requests over gRPC.
type service struct {
	internalv1.UnimplementedFetcherServiceServer
	f *fetch.Fetcher
}

func (s service) Fetch(ctx context.Context, req *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
	return s.f.Fetch(ctx, req)
}

// Resource refuses allow_local unless the operator gave it, and the
// process's own ports always, as Fetch does: the fetcher decides both.
func (s service) Resource(ctx context.Context, req *internalv1.FetcherServiceResourceRequest) (*internalv1.FetcherServiceResourceResponse, error) {
	resp, err := s.f.Resource(ctx, req.GetUrl(), req.GetOptions())
	if err != nil {
		return nil, err
	}
	return &internalv1.FetcherServiceResourceResponse{Fetched: resp}, nil
}

// Robots answers under the same rules as Resource.
func (s service) Robots(ctx context.Context, req *internalv1.FetcherServiceRobotsRequest) (*internalv1.FetcherServiceRobotsResponse, error) {
	file, err := s.f.Robots(ctx, req.GetUrl(), req.GetOptions())
	if err != nil {
		return nil, err
	}
	return &internalv1.FetcherServiceRobotsResponse{File: file.Proto()}, nil
}

// worker is the batch side of the process.
type worker struct {
	conns []*remote.Conn
	nc    *nats.Conn
	ready func(context.Context) error
	done  chan struct{}
}

func startWorker(ctx context.Context, cfg Config, logger *slog.Logger, f *fetch.Fetcher) (*worker, error) {
	if cfg.ExtractorAddr == "" {
		return nil, errors.New("a batch worker needs the extractor's address (-extractor)")
	}
	ec, err := remote.Dial("extractor", cfg.ExtractorAddr, cfg.DialOptions...)
	if err != nil {
		return nil, err
	}
	w := &worker{conns: []*remote.Conn{ec}, done: make(chan struct{})}
	var r pipeline.Renderer = pipeline.NoRenderer{}
	if cfg.RendererAddr != "" {
		rc, err := remote.Dial("renderer", cfg.RendererAddr, cfg.DialOptions...)
		if err != nil {
			w.closeConns()
			return nil, err
		}
		w.conns = append(w.conns, rc)
		r = remote.NewRenderer(rc)
	}
	nc, js, err := jobs.Connect(cfg.NATSURL, "distill-fetcher", logger)
	if err != nil {
		w.closeConns()
		return nil, err
	}
	w.nc = nc
	w.ready = func(ctx context.Context) error {
		if err := jobs.Ready(ctx, nc, js); err != nil {
			return err
		}
		return ec.Healthy(ctx)
	}

	p := pipeline.New(logger, f, remote.NewExtractor(ec), r, pipeline.WithAnonymousRenders(cfg.AnonymousRenders))
	// Crawls' pages are work items too: any fetcher reads them, through
	// this process's fetcher, which judges each redirect by the crawl's
	// scope and takes each request's turn on the pace every process
	// shares.
	reader := crawl.NewLocalReader(logger, f, remote.NewExtractor(ec), r, pipeline.WithAnonymousRenders(cfg.AnonymousRenders))
	streams := crawljs.Config{Replicas: cfg.StreamReplicas}
	crawlDone := make(chan struct{})
	go func() {
		defer close(crawlDone)
		_ = crawljs.ServeWork(ctx, logger, js, reader, crawljs.NewPacer(js, streams), crawljs.WorkConfig{
			Workers: cfg.Workers, AckWait: cfg.AckWait, Streams: streams,
		})
	}()
	go func() {
		defer close(w.done)
		defer func() { <-crawlDone }()
		// The stages are remote: a job whose service is down goes back to
		// the queue. NATS is remote too: a worker that loses its streams
		// makes them again.
		_ = jobs.Serve(ctx, logger, js, p, jobs.ServeConfig{
			Workers: cfg.Workers, AckWait: cfg.AckWait,
			Streams:            jobs.StreamConfig{Replicas: cfg.StreamReplicas},
			ReleaseUnavailable: true,
			Restart:            true,
		})
	}()
	return w, nil
}

// close waits for the worker to finish its jobs, then lets go of NATS and
// the services.
func (w *worker) close() {
	<-w.done
	_ = w.nc.Drain()
	w.closeConns()
}

func (w *worker) closeConns() {
	for _, c := range w.conns {
		_ = c.Close()
	}
}
