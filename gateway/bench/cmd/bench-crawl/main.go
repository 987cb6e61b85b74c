// Command bench-crawl crawls generated sites on loopback with distill and
// prints pages per second, politeness and duplicate fetches.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"distill.dev/gateway/bench/crawl"
)

func main() {
	var cfg crawl.Config
	flag.IntVar(&cfg.Hosts, "hosts", 4, "hosts, on 127.0.0.1 and up")
	flag.IntVar(&cfg.Pages, "pages", 2500, "pages on each host")
	flag.IntVar(&cfg.Concurrency, "concurrency", 8, "pages in flight per crawl")
	flag.DurationVar(&cfg.Delay, "delay", 20*time.Millisecond, "the crawls' per-host delay")
	flag.DurationVar(&cfg.CrawlDelay, "crawl-delay", 50*time.Millisecond, "the first host's robots.txt Crawl-delay")
	flag.DurationVar(&cfg.Slow, "slow", 100*time.Millisecond, "how long a slow page takes")
	flag.IntVar(&cfg.SlowEvery, "slow-every", 10, "one page in this many is slow (1: every page)")
	flag.IntVar(&cfg.Workers, "workers", 0, "pages each fetcher process reads at once (0: all the crawls have in flight)")
	flag.IntVar(&cfg.Depth, "depth", 10, "links followed from each start page")
	fetchers := flag.String("fetchers", "1,2,4", "sizes of the clusters to crawl with, comma-separated (empty: none)")
	flag.BoolVar(&cfg.Peers, "peers", true, "crawl with colly and crawlee's CheerioCrawler too")
	flag.StringVar(&cfg.Root, "root", "..", "the repository's root")
	flag.BoolVar(&cfg.Gaps, "gaps", false, "print how far apart the requests to each crawler's busiest host came")
	flag.Parse()
	for f := range strings.SplitSeq(*fetchers, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench-crawl: -fetchers %q: want numbers of fetchers, comma-separated\n", *fetchers)
			os.Exit(2)
		}
		cfg.Fetchers = append(cfg.Fetchers, n)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := crawl.Run(ctx, cfg, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-crawl:", err)
		os.Exit(1)
	}
}
