// Command bench-http measures distill's Firecrawl-compatible HTTP API,
// driven by the official Firecrawl JS SDK, against the gRPC API on the same
// pages, on loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"distill.dev/gateway/bench/http"
)

func main() {
	var cfg http.Config
	flag.IntVar(&cfg.Count, "count", 1000, "scrapes per API in the measured round")
	flag.IntVar(&cfg.Concurrency, "concurrency", 4, "requests each client keeps in flight")
	flag.IntVar(&cfg.Warmup, "warmup", 50, "scrapes per API before it is measured")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "measured rounds per API, alternating which goes first; the medians are reported")
	flag.StringVar(&cfg.SDKDir, "sdk", "gateway/firecrawl/testdata/sdk", "folder of client.mjs and the Firecrawl SDK's node_modules (make firecrawl-sdk)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "bench-http-cache")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-http:", err)
		os.Exit(1)
	}
	cfg.CacheDir = dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err = http.Run(ctx, cfg, logger, os.Stdout)
	stop()
	os.RemoveAll(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-http:", err)
		os.Exit(1)
	}
}
