// Package cluster measures how a batch scales with fetcher processes:
// the same loopback pages through distill in cluster mode with 1, 2 and 4
// fetchers, and through the single binary, in one run.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/gateway/bench/fetch"
	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Config chooses the workload.
type Config struct {
	// Root is the repository's root, to build the binaries from.
	Root string
	// Count is the pages per batch.
	Count int
	// Fetchers lists the fetcher counts to measure.
	Fetchers []int
	// Workers is the job concurrency of each fetcher process, and of the
	// single binary's in-process workers per fetcher it stands against.
	Workers int
	// Delay is each page's server-side delay, as a distant site's.
	Delay time.Duration
}

// Run builds the binaries, serves the pages, and for each configuration
// runs a warm-up batch and a measured one, writing the figures to out.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, out io.Writer) error {
	if cfg.Count < 1 || len(cfg.Fetchers) == 0 || cfg.Workers < 1 {
		return errors.New("count, fetchers and workers must be at least 1")
	}
	bin, err := os.MkdirTemp("", "distill-bench-cluster-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(bin) }()
	fmt.Fprintf(out, "bench-cluster: building binaries…\n")
	if err := localcluster.Build(cfg.Root, bin); err != nil {
		return err
	}
	srv, avg := fetch.Serve(cfg.Count, cfg.Delay)
	defer srv.Close()
	urls := make([]string, cfg.Count)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/articles/%d", srv.URL, i)
	}

	fmt.Fprintf(out, "%d pages (avg %.1f KiB, %s server delay) on %s, %d workers per fetcher, %d CPUs\n\n",
		cfg.Count, float64(avg)/1024, cfg.Delay, srv.URL, cfg.Workers, runtime.NumCPU())
	fmt.Fprintf(out, "%-28s %9s %9s %10s\n", "configuration", "seconds", "URLs/s", "vs single")

	// The single binary, with as many in-process workers as the largest
	// cluster has in all.
	most := 0
	for _, n := range cfg.Fetchers {
		most = max(most, n)
	}
	singleWorkers := most * cfg.Workers
	a, err := app.Open(ctx, logger, app.Config{UserAgentVersion: "bench-cluster", Workers: singleWorkers, AllowLocal: true})
	if err != nil {
		return err
	}
	single, err := measure(ctx, api.New(logger, a), urls, singleWorkers)
	_ = a.Close()
	if err != nil {
		return fmt.Errorf("single binary: %w", err)
	}
	fmt.Fprintf(out, "%-28s %9.2f %9.1f %10s\n", fmt.Sprintf("single binary, %d workers", singleWorkers), single.Seconds(), rate(cfg.Count, single), "1.00x")

	for _, n := range cfg.Fetchers {
		d, err := measureCluster(ctx, bin, n, cfg.Workers, urls)
		if err != nil {
			return fmt.Errorf("%d fetchers: %w", n, err)
		}
		fmt.Fprintf(out, "%-28s %9.2f %9.1f %9.2fx\n", fmt.Sprintf("cluster, %d fetcher(s)", n), d.Seconds(), rate(cfg.Count, d), single.Seconds()/d.Seconds())
	}
	return nil
}

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// batcher is what a batch runs on: the API in process or a gateway.
type batcher interface {
	Batch(ctx context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error
}

func measureCluster(ctx context.Context, bin string, fetchers, workers int, urls []string) (time.Duration, error) {
	natsDir, err := os.MkdirTemp("", "distill-bench-nats-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(natsDir) }()
	c, err := localcluster.Start(bin, filepath.Clean(natsDir), localcluster.Options{Fetchers: fetchers, Workers: workers, NoRenderer: true, AckWait: time.Minute, LogLevel: "warn"})
	if err != nil {
		return 0, err
	}
	defer c.Stop()
	cc, err := c.Conn(c.Gateways[0].Addr)
	if err != nil {
		return 0, err
	}
	return measure(ctx, remoteBatcher{distillv1.NewDistillServiceClient(cc)}, urls, fetchers*workers)
}

// measure runs a warm-up batch of a tenth of the URLs, then times the whole
// batch with concurrency jobs in flight.
func measure(ctx context.Context, b batcher, urls []string, concurrency int) (time.Duration, error) {
	conc := int32(concurrency)
	opts := &distillv1.FetchOptions{
		AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF, NoCache: true,
		// One loopback host stands for many real ones.
		PerHostConcurrency: &conc, Concurrency: &conc,
	}
	if _, err := batch(ctx, b, urls[:max(len(urls)/10, 1)], opts); err != nil {
		return 0, err
	}
	begun := time.Now()
	failed, err := batch(ctx, b, urls, opts)
	took := time.Since(begun)
	if err != nil {
		return 0, err
	}
	if failed != "" {
		return 0, fmt.Errorf("a page failed: %s", failed)
	}
	return took, nil
}

func batch(ctx context.Context, b batcher, urls []string, opts *distillv1.FetchOptions) (firstFailure string, err error) {
	seen := 0
	err = b.Batch(ctx, &distillv1.FetchBatchRequest{Urls: urls, Options: opts}, func(r *distillv1.FetchBatchResponse) {
		seen++
		if e := r.GetError(); e != nil && firstFailure == "" {
			firstFailure = r.GetUrl() + ": " + e.GetMessage()
		}
	})
	if err == nil && seen != len(urls) {
		err = fmt.Errorf("%d of %d URLs answered", seen, len(urls))
	}
	return firstFailure, err
}

// remoteBatcher is a gateway's FetchBatch.
type remoteBatcher struct {
	c distillv1.DistillServiceClient
}

func (r remoteBatcher) Batch(ctx context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error {
	return api.StreamBatch(ctx, r.c, req, deliver)
}
