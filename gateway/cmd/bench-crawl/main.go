// Command bench-crawl crawls generated sites on loopback with distill and
// prints pages per second, politeness and duplicate fetches.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"distill.dev/gateway/benchcrawl"
)

func main() {
	var cfg benchcrawl.Config
	flag.IntVar(&cfg.Hosts, "hosts", 4, "hosts, on 127.0.0.1 and up")
	flag.IntVar(&cfg.Pages, "pages", 500, "pages on each host")
	flag.IntVar(&cfg.Concurrency, "concurrency", 8, "pages in flight per crawl")
	flag.DurationVar(&cfg.Delay, "delay", 20*time.Millisecond, "the crawls' per-host delay")
	flag.DurationVar(&cfg.CrawlDelay, "crawl-delay", 50*time.Millisecond, "the first host's robots.txt Crawl-delay")
	flag.DurationVar(&cfg.Slow, "slow", 100*time.Millisecond, "how long one page in ten takes")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := benchcrawl.Run(ctx, cfg, logger, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-crawl:", err)
		os.Exit(1)
	}
}
