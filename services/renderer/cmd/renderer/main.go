// Command renderer serves distill's RendererService on its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/services/renderer/render"
	"distill.dev/services/renderer/server"
)

func main() {
	cfg := server.Config{Addr: envOr("DISTILL_RENDERER_ADDR", ":7003")}
	flag.StringVar(&cfg.Addr, "listen", cfg.Addr, "gRPC listen address (env DISTILL_RENDERER_ADDR)")
	flag.StringVar(&cfg.Chromium, "chromium", "", "Chromium binary (default: env DISTILL_CHROMIUM, else /usr/bin/chromium)")
	flag.IntVar(&cfg.MaxPages, "max-pages", render.DefaultMaxPages, "pages rendered at once")
	flag.Parse()

	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := server.Run(ctx, cfg, logger); err != nil {
		fmt.Fprintln(os.Stderr, "renderer:", err)
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
