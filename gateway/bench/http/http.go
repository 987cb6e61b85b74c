// Package http measures distill's Firecrawl-compatible HTTP API,
// driven by the official Firecrawl JS SDK, against the same pages fetched
// through the public gRPC API, both served by one distill in this process
// on loopback.
package http

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/gateway/bench/fetch"
	"distill.dev/gateway/firecrawl"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcserve"
)

// Config chooses the workload.
type Config struct {
	// Count is how many scrapes each API answers in the measured round.
	Count int
	// Concurrency is how many requests each client keeps in flight.
	Concurrency int
	// Warmup is how many scrapes each API answers before it is measured.
	Warmup int
	// Rounds is how many measured rounds each client runs.
	Rounds int
	// SDKDir holds client.mjs and the Firecrawl SDK's node_modules.
	SDKDir string
	// CacheDir is the fetch cache of the distill under test.
	CacheDir string
}

// result is one client's round.
type result struct {
	elapsed   time.Duration
	latencies []time.Duration
	failed    int
	firstErr  string
}

// Run serves the pages and distill's two APIs, runs each client's warm-up
// and measured round, and writes the figures to out.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, out io.Writer) error {
	if cfg.Count < 1 || cfg.Concurrency < 1 || cfg.Rounds < 1 || cfg.Warmup < 0 {
		return errors.New("count, concurrency and rounds must be at least 1, warmup at least 0")
	}
	pages, avgSize := fetch.Serve(cfg.Count+cfg.Warmup, 0)
	defer pages.Close()

	sys, err := app.Open(ctx, logger, app.Config{UserAgentVersion: "bench-http", AllowLocal: true, CacheDir: cfg.CacheDir})
	if err != nil {
		return err
	}
	defer func() { _ = sys.Close() }()
	d, err := openDoors(ctx, logger, sys, cfg.Concurrency)
	defer d.close()
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient(d.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	grpcClient := distillv1.NewDistillServiceClient(conn)

	fmt.Fprintf(out, "bench-http: %d scrapes per API and round (avg page %.1f KiB) from %s, %d in flight, %d rounds after %d warm-up scrapes each\n",
		cfg.Count, float64(avgSize)/1024, pages.URL, cfg.Concurrency, cfg.Rounds, cfg.Warmup)
	fmt.Fprintln(out, "one distill in this process serves both; the SDK runs under Node, the gRPC client in this process")
	fmt.Fprintf(out, "\n%-5s %-28s %9s %9s %9s %9s %7s\n", "round", "client", "seconds", "req/s", "p50 ms", "p95 ms", "failed")

	clients := []client{
		{"Firecrawl JS SDK over HTTP", "sdk", func(list []string) (*result, error) {
			return runSDK(ctx, cfg.SDKDir, "http://"+d.httpAddr, list, cfg.Concurrency)
		}},
		{"gRPC DistillService.Fetch", "grpc", func(list []string) (*result, error) {
			return runGRPC(ctx, grpcClient, list, cfg.Concurrency), nil
		}},
	}
	for _, c := range clients {
		if cfg.Warmup > 0 {
			if _, err := c.run(clientURLs(pages.URL, c.short+"-warmup", cfg.Count, cfg.Warmup)); err != nil {
				return fmt.Errorf("%s warm-up: %w", c.name, err)
			}
		}
	}
	rates, p95s, err := measureRounds(out, clients, cfg, pages.URL)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	for k, c := range clients {
		fmt.Fprintf(out, "median of %d rounds: %-28s %8.1f req/s, p95 %.1f ms\n", cfg.Rounds, c.name, median(rates[k]), median(p95s[k]))
	}
	return nil
}

// doors are distill's gRPC and Firecrawl-compatible HTTP APIs, each on a
// loopback port of its own, over one system.
type doors struct {
	grpcAddr, httpAddr string
	// closers stop what openDoors started, in the order it started them.
	closers []func()
}

// openDoors serves sys's gRPC API and its Firecrawl-compatible HTTP API,
// which lets 4*concurrency requests in at once. On an error it returns
// what it started, for close.
func openDoors(ctx context.Context, logger *slog.Logger, sys *app.System, concurrency int) (*doors, error) {
	d := &doors{}
	grpcLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return d, err
	}
	gsrv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterDistillServiceServer(s, api.New(logger, sys))
	})
	gctx, stopGRPC := context.WithCancel(ctx)
	grpcDone := make(chan error, 1)
	go func() { grpcDone <- gsrv.Serve(gctx, grpcLis) }()
	d.grpcAddr = grpcLis.Addr().String()
	d.closers = append(d.closers, func() {
		stopGRPC()
		<-grpcDone
	})

	fc := firecrawl.New(logger, sys, firecrawl.Config{AllowLocal: true, MaxInFlight: 4 * concurrency})
	d.closers = append(d.closers, fc.Close)
	httpLis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return d, err
	}
	hsrv := &http.Server{Handler: fc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hsrv.Serve(httpLis) }()
	d.httpAddr = httpLis.Addr().String()
	d.closers = append(d.closers, func() { _ = hsrv.Close() })
	return d, nil
}

// close stops the doors, the last started first.
func (d *doors) close() {
	for _, c := range slices.Backward(d.closers) {
		c()
	}
}

// client is one way of scraping a list of URLs: name is its report's,
// short goes into its URLs.
type client struct {
	name, short string
	run         func([]string) (*result, error)
}

// clientURLs are n of the pages served at base, from page from on, for
// the client who: each client gets URLs of its own (a query names it), so
// neither is answered from what the other put in the fetch cache.
func clientURLs(base, who string, from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s/articles/%d?via=%s", base, from+i, who)
	}
	return out
}

// measureRounds runs cfg.Rounds measured rounds of every client on the
// pages at base, writing a line for each, and returns each client's rates
// and p95 latencies, one a round, in the clients' order.
func measureRounds(out io.Writer, clients []client, cfg Config, base string) (rates, p95s [][]float64, err error) {
	rates = make([][]float64, len(clients))
	p95s = make([][]float64, len(clients))
	for round := range cfg.Rounds {
		// Each round swaps which client goes first, so that a machine
		// growing busier or quieter falls on both.
		for k := range clients {
			c := clients[(k+round)%len(clients)]
			idx := (k + round) % len(clients)
			r, err := c.run(clientURLs(base, fmt.Sprintf("%s-%d", c.short, round), 0, cfg.Count))
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.name, err)
			}
			rate, p95 := float64(cfg.Count)/r.elapsed.Seconds(), ms(percentile(r.latencies, 95))
			rates[idx], p95s[idx] = append(rates[idx], rate), append(p95s[idx], p95)
			fmt.Fprintf(out, "%-5d %-28s %9.3f %9.1f %9.1f %9.1f %7d\n", round+1, c.name, r.elapsed.Seconds(),
				rate, ms(percentile(r.latencies, 50)), p95, r.failed)
			if r.failed > 0 {
				fmt.Fprintf(out, "  first failure: %s\n", r.firstErr)
			}
		}
	}
	return rates, p95s, nil
}

// runGRPC fetches urls through the gRPC API with the options the
// Firecrawl API maps a markdown scrape to.
func runGRPC(ctx context.Context, client distillv1.DistillServiceClient, urls []string, concurrency int) *result {
	r := &result{latencies: make([]time.Duration, len(urls))}
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(urls) {
					return
				}
				t0 := time.Now()
				_, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: urls[i], Options: &distillv1.FetchOptions{
					Format: distillv1.Format_FORMAT_MARKDOWN, Diagnostics: true, AllowLocal: true,
				}})
				r.latencies[i] = time.Since(t0)
				if err != nil {
					mu.Lock()
					r.failed++
					if r.firstErr == "" {
						r.firstErr = err.Error()
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r
}

// runSDK scrapes urls with the Firecrawl SDK (client.mjs's bench mode).
func runSDK(ctx context.Context, dir, apiURL string, urls []string, concurrency int) (*result, error) {
	in, err := json.Marshal(map[string]any{"mode": "bench", "apiUrl": apiURL, "token": "", "urls": urls, "concurrency": concurrency})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "client.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node client.mjs in %s: %w\n%s", dir, err, stderr.String())
	}
	var got struct {
		ElapsedMS   float64   `json:"elapsedMs"`
		LatenciesMS []float64 `json:"latenciesMs"`
		Failed      int       `json:"failed"`
		FirstError  string    `json:"firstError"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		return nil, fmt.Errorf("client.mjs printed %q: %w", stdout.String(), err)
	}
	r := &result{elapsed: fromMS(got.ElapsedMS), failed: got.Failed, firstErr: got.FirstError}
	for _, l := range got.LatenciesMS {
		r.latencies = append(r.latencies, fromMS(l))
	}
	return r, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fromMS(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the p-th percentile of xs by the nearest-rank method.
func percentile(xs []time.Duration, p int) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}
