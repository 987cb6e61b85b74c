// Command bench-fetch measures the cost of distill's NATS fan-out against
// calling the pipeline directly, on pages served over loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"distill.dev/gateway/bench/fetch"
)

func main() {
	var cfg fetch.Config
	flag.IntVar(&cfg.Count, "count", 1000, "pages per round")
	flag.IntVar(&cfg.Concurrency, "concurrency", 8, "batch concurrency, workers and direct goroutines")
	flag.IntVar(&cfg.Rounds, "rounds", 5, "measured rounds per mode after the warm-up; the overhead is the median of per-round ratios, so more rounds steady it on a busy machine")
	flag.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured rounds to this file")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := fetch.Run(ctx, cfg, logger, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-fetch:", err)
		os.Exit(1)
	}
}
