// Command bench-render measures distill's headless renderer against a
// Chromium started per page, on an app-shell page served over loopback.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"distill.dev/services/platform/envflag"
	"distill.dev/services/renderer/bench"
	"distill.dev/services/renderer/render"
)

func main() {
	var cfg bench.Config
	env := envflag.FromOS()
	flag.StringVar(&cfg.Chromium, "chromium", env.String(envflag.Chromium, render.DefaultChromium), envflag.Usage("Chromium binary", envflag.Chromium))
	flag.IntVar(&cfg.Renders, "renders", 80, "timed renders through the distill pool")
	flag.IntVar(&cfg.DumpRenders, "dump-renders", 0, "timed chromium --dump-dom renders, each a cold start (default a quarter of -renders)")
	flag.IntVar(&cfg.Concurrency, "concurrency", render.DefaultMaxPages, "pages rendering at once: the pool's page limit and the parallel Chromium processes")
	flag.IntVar(&cfg.WarmUp, "warmup", 4, "untimed renders each way before the timed ones")
	flag.IntVar(&cfg.ActionRenders, "actions", 20, "timed renders of the actions workload each way (0 skips it)")
	flag.IntVar(&cfg.BlockRenders, "block", 20, "timed renders of the media page with and without --block (0 skips it)")
	flag.Parse()
	if cfg.DumpRenders == 0 {
		cfg.DumpRenders = max(cfg.Renders/4, 1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := bench.Run(ctx, cfg, logger, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-render:", err)
		os.Exit(1)
	}
}
