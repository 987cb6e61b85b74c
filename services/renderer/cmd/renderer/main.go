// Command renderer serves distill's RendererService on its own, for
// cluster deployments. Every flag can also be set by the environment
// variable its help names.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/proto/envflag"
	"distill.dev/proto/telemetry"
	"distill.dev/services/renderer/render"
	"distill.dev/services/renderer/server"
)

func main() {
	fs := flag.CommandLine
	listen := envflag.String(fs, "listen", "DISTILL_LISTEN", ":7003", "gRPC listen address, host:port")
	chromium := envflag.String(fs, "chromium", "DISTILL_CHROMIUM", render.DefaultChromium, "Chromium binary")
	maxPages := envflag.Int(fs, "max-pages", "DISTILL_MAX_PAGES", render.DefaultMaxPages, "pages rendered at once")
	noSandbox := envflag.Bool(fs, "no-chromium-sandbox", "DISTILL_CHROMIUM_NO_SANDBOX", false, "run Chromium without its own sandbox, where the container is the sandbox (non-root pods without user namespaces)")
	metrics := envflag.String(fs, "metrics-listen", "DISTILL_METRICS_ADDR", "", "serve Prometheus metrics at http://ADDR/metrics (none when empty)")
	level := envflag.String(fs, "log-level", "DISTILL_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	flag.Parse()
	logger, err := envflag.NewLogger(*level)
	if err == nil {
		err = envflag.Check()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "renderer: %v\n", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopTelemetry, err := telemetry.Process(ctx, "renderer", *metrics, logger)
	if err != nil {
		stop()
		fmt.Fprintf(os.Stderr, "renderer: %v\n", err)
		os.Exit(1)
	}
	err = server.Run(ctx, server.Config{Addr: *listen, Chromium: *chromium, MaxPages: *maxPages, NoSandbox: *noSandbox, GRPCOptions: telemetry.ServerOptions()}, logger)
	stopTelemetry()
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "renderer: %v\n", err)
		os.Exit(1)
	}
}
