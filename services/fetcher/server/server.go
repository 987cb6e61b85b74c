// Package server runs the fetcher process: FetcherService over gRPC, with
// the health and reflection services every distill server has, and, in
// cluster mode, a batch worker that pulls jobs from NATS JetStream and runs
// the pipeline with the extractor and renderer reached over gRPC.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/remote"
)

// Config is what the fetcher process needs to run.
type Config struct {
	// Addr is the gRPC listen address, host:port.
	Addr string
	// UserAgentVersion is the version sent in the User-Agent header.
	UserAgentVersion string
	// CacheDir holds the fetch cache; empty means cache.DefaultDir.
	CacheDir string
	// NoCache runs without the on-disk cache.
	NoCache bool

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
	opts := []fetch.Option{fetch.WithUserAgent(cfg.UserAgentVersion)}
	if !cfg.NoCache {
		// A cache that cannot be opened costs repeated fetches, not the
		// service.
		if c, err := cache.Open(cfg.CacheDir); err != nil {
			logger.Warn("fetching without a cache", "err", err.Error())
		} else {
			opts = append(opts, fetch.WithCache(c))
		}
	}
	f := fetch.New(logger, opts...)
	defer f.Close()
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		internalv1.RegisterFetcherServiceServer(s, f)
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

// worker is the batch side of the process.
type worker struct {
	conns []*remote.Conn
	drain func()
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
	stopDepth, err := jobs.ObserveQueueDepth(js)
	if err != nil {
		logger.Warn("queue depth not observed", "err", err.Error())
		stopDepth = func() error { return nil }
	}
	w.drain = func() {
		_ = stopDepth()
		_ = nc.Drain()
	}
	w.ready = func(ctx context.Context) error {
		if err := jobs.Connected(nc); err != nil {
			return err
		}
		return ec.Healthy(ctx)
	}

	p := pipeline.New(logger, f, remote.NewExtractor(ec), r)
	var wopts []jobs.Option
	if cfg.AckWait > 0 {
		wopts = append(wopts, jobs.WithAckWait(cfg.AckWait))
	}
	jw := jobs.NewWorker(logger, js, releasing{p}, cfg.Workers, wopts...)
	go func() {
		defer close(w.done)
		// Streams and the consumer are made once NATS answers; a worker
		// that loses them (a NATS restart without its store) makes them
		// again.
		for ctx.Err() == nil {
			err := jobs.EnsureStreams(ctx, js, jobs.StreamConfig{Replicas: cfg.StreamReplicas})
			if err == nil {
				err = jw.Run(ctx)
			}
			if ctx.Err() != nil {
				return
			}
			logger.Warn("batch worker stopped; restarting", "err", fmt.Sprint(err))
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
			}
		}
	}()
	return w, nil
}

// close waits for the worker to finish its jobs, then lets go of NATS and
// the services.
func (w *worker) close() {
	<-w.done
	w.drain()
	w.closeConns()
}

func (w *worker) closeConns() {
	for _, c := range w.conns {
		_ = c.Close()
	}
}

// releasing hands a job back to the queue when a service it needs cannot
// be reached: the page is not at fault, and another attempt, here or on
// another worker, follows once the service is back.
type releasing struct{ p *pipeline.Pipeline }

func (r releasing) Distill(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
	d, err := r.p.Distill(ctx, rawURL, opts)
	if failure.CodeOf(err) == failure.Unavailable {
		return nil, fmt.Errorf("%w: %w", jobs.ErrRelease, err)
	}
	return d, err
}
