// Command bench-cluster measures batch throughput of distill in cluster
// mode with 1, 2 and 4 fetcher processes against the single binary, on
// pages served over loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"distill.dev/gateway/bench/cluster"
)

func main() {
	cfg := cluster.Config{Root: ".."}
	fetchers := "1,2,4"
	flag.StringVar(&cfg.Root, "root", cfg.Root, "repository root to build the binaries from")
	flag.IntVar(&cfg.Count, "count", 1000, "pages per batch")
	flag.StringVar(&fetchers, "fetchers", fetchers, "fetcher process counts to measure, comma-separated")
	flag.IntVar(&cfg.Workers, "workers", 8, "jobs each fetcher runs at once")
	flag.DurationVar(&cfg.Delay, "delay", 0, "server-side delay of each page, as a distant site's (e.g. 50ms)")
	flag.Parse()
	for _, f := range strings.Split(fetchers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "bench-cluster: -fetchers %q: want positive integers\n", fetchers)
			os.Exit(2)
		}
		cfg.Fetchers = append(cfg.Fetchers, n)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := cluster.Run(ctx, cfg, logger, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-cluster:", err)
		os.Exit(1)
	}
}
