// Command extractor serves distill's ExtractorService over gRPC, for
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
	"distill.dev/services/extractor/server"
)

func main() {
	fs := flag.CommandLine
	listen := envflag.String(fs, "listen", "DISTILL_LISTEN", ":7002", "gRPC listen address, host:port")
	metrics := envflag.String(fs, "metrics-listen", "DISTILL_METRICS_ADDR", "", "serve Prometheus metrics at http://ADDR/metrics (none when empty)")
	level := envflag.String(fs, "log-level", "DISTILL_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	flag.Parse()
	logger, err := envflag.NewLogger(*level)
	if err == nil {
		err = envflag.Check()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "extractor: %v\n", err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopTelemetry, err := telemetry.Process(ctx, "extractor", *metrics, logger)
	if err != nil {
		stop()
		fmt.Fprintf(os.Stderr, "extractor: %v\n", err)
		os.Exit(1)
	}
	err = server.Run(ctx, server.Config{Addr: *listen, GRPCOptions: telemetry.ServerOptions()}, logger)
	stopTelemetry()
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "extractor: %v\n", err)
		os.Exit(1)
	}
}
