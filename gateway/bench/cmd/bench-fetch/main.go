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
	profiles := flag.Bool("profiles", true, "then fetch a page over loopback TLS with net/http and with the fetcher under each browser profile (--browser)")
	fanOut := flag.Bool("fan-out", true, "measure the NATS fan-out against the pipeline called directly")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var err error
	if *fanOut {
		err = fetch.Run(ctx, cfg, logger, os.Stdout)
	}
	if err == nil && *profiles {
		err = fetch.RunProfiles(ctx, cfg, logger, os.Stdout)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-fetch:", err)
		os.Exit(1)
	}
}
