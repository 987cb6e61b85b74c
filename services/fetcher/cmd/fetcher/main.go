// Command fetcher runs the fetcher service on its own, for cluster
// deployments; the single distill binary embeds it instead. Every flag can
// also be set by the environment variable its help names.
package main

import (
	"context"
	"flag"

	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/server"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/servicemain"
	"distill.dev/services/platform/telemetry"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	fs := flag.CommandLine
	cacheDir := envflag.String(fs, "cache-dir", cache.EnvDir, "", "fetch cache directory (default: distill under the user's cache directory)")
	noCache := envflag.Bool(fs, "no-cache", "DISTILL_NO_CACHE", false, "run without the on-disk fetch cache")
	natsURL := envflag.String(fs, "nats", "DISTILL_NATS_URL", "", "NATS URLs, comma-separated: run as a batch worker of that cluster")
	extractor := envflag.String(fs, "extractor", "DISTILL_EXTRACTOR_ADDR", "", "extractor gRPC address, host:port (batch worker)")
	renderer := envflag.String(fs, "renderer", "DISTILL_RENDERER_ADDR", "", "renderer gRPC address, host:port (batch worker; none: never render)")
	workers := envflag.Int(fs, "workers", "DISTILL_WORKERS", 8, "batch jobs run at once")
	ackWait := envflag.Duration(fs, "ack-wait", "DISTILL_ACK_WAIT", jobs.DefaultAckWait, "how long a job may go unanswered before another worker gets it; the same on every worker")
	replicas := envflag.Int(fs, "stream-replicas", "DISTILL_STREAM_REPLICAS", 1, "replicas of the job streams in a clustered NATS")
	servicemain.Main("fetcher", ":7001", func(ctx context.Context, p servicemain.Process) error {
		return server.Run(ctx, server.Config{
			Addr: p.Listen, UserAgentVersion: version, CacheDir: *cacheDir, NoCache: *noCache,
			NATSURL: *natsURL, ExtractorAddr: *extractor, RendererAddr: *renderer,
			Workers: *workers, AckWait: *ackWait, StreamReplicas: *replicas,
			GRPCOptions: telemetry.ServerOptions(), DialOptions: telemetry.DialOptions(),
		}, p.Logger)
	})
}
