// Command fetcher runs the fetcher service on its own, for cluster
// deployments; the single distill binary embeds it instead. Every flag can
// also be set by the environment variable its help names.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"distill.dev/proto/envflag"
	"distill.dev/proto/telemetry"
	"distill.dev/services/fetcher/server"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	fs := flag.CommandLine
	cfg := server.Config{UserAgentVersion: version}
	listen := envflag.String(fs, "listen", "DISTILL_LISTEN", ":7001", "gRPC listen address, host:port")
	cacheDir := envflag.String(fs, "cache-dir", "DISTILL_CACHE_DIR", "", "fetch cache directory (default: distill under the user's cache directory)")
	noCache := envflag.Bool(fs, "no-cache", "DISTILL_NO_CACHE", false, "run without the on-disk fetch cache")
	natsURL := envflag.String(fs, "nats", "DISTILL_NATS_URL", "", "NATS URLs, comma-separated: run as a batch worker of that cluster")
	extractor := envflag.String(fs, "extractor", "DISTILL_EXTRACTOR_ADDR", "", "extractor gRPC address, host:port (batch worker)")
	renderer := envflag.String(fs, "renderer", "DISTILL_RENDERER_ADDR", "", "renderer gRPC address, host:port (batch worker; none: never render)")
	workers := envflag.Int(fs, "workers", "DISTILL_WORKERS", 8, "batch jobs run at once")
	ackWait := envflag.Duration(fs, "ack-wait", "DISTILL_ACK_WAIT", time.Minute, "how long a job may go unanswered before another worker gets it; the same on every worker")
	replicas := envflag.Int(fs, "stream-replicas", "DISTILL_STREAM_REPLICAS", 1, "replicas of the job streams in a clustered NATS")
	metrics := envflag.String(fs, "metrics-listen", "DISTILL_METRICS_ADDR", "", "serve Prometheus metrics at http://ADDR/metrics (none when empty)")
	level := envflag.String(fs, "log-level", "DISTILL_LOG_LEVEL", "info", "log level: debug, info, warn or error")
	flag.Parse()
	logger, err := envflag.NewLogger(*level)
	if err == nil {
		err = envflag.Check()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fetcher: %v\n", err)
		os.Exit(2)
	}

	cfg.Addr, cfg.CacheDir, cfg.NoCache = *listen, *cacheDir, *noCache
	cfg.NATSURL, cfg.ExtractorAddr, cfg.RendererAddr = *natsURL, *extractor, *renderer
	cfg.Workers, cfg.AckWait, cfg.StreamReplicas = *workers, *ackWait, *replicas
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	stopTelemetry, err := telemetry.Process(ctx, "fetcher", *metrics, logger)
	if err != nil {
		stop()
		fmt.Fprintf(os.Stderr, "fetcher: %v\n", err)
		os.Exit(1)
	}
	cfg.GRPCOptions, cfg.DialOptions = telemetry.ServerOptions(), telemetry.DialOptions()
	err = server.Run(ctx, cfg, logger)
	stopTelemetry()
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fetcher: %v\n", err)
		os.Exit(1)
	}
}
