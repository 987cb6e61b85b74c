// Command fetcher runs the fetcher service on its own, for cluster
// deployments; the single distill binary embeds it instead. Every flag can
// also be set by the environment variable its help names.
package main

import (
	"context"
	"flag"

	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/server"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/servicemain"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/version"
)

func main() {
	env := envflag.FromOS()
	cacheDir := flag.String("cache-dir", env.String(envflag.CacheDir, ""), envflag.Usage("fetch cache directory (default: distill under the user's cache directory)", envflag.CacheDir))
	noCache := flag.Bool("no-cache", env.Bool(envflag.NoCache, false), envflag.Usage("run without the on-disk fetch cache", envflag.NoCache))
	natsURL := flag.String("nats", env.String(envflag.NATSURL, envflag.DefaultNATSURL), envflag.Usage("NATS URLs, comma-separated: run as a batch worker of that cluster (empty: serve Fetch only)", envflag.NATSURL))
	extractor := flag.String("extractor", env.String(envflag.ExtractorAddr, envflag.DefaultExtractorAddr), envflag.Usage("extractor gRPC address, host:port (batch worker)", envflag.ExtractorAddr))
	renderer := flag.String("renderer", env.String(envflag.RendererAddr, envflag.DefaultRendererAddr), envflag.Usage("renderer gRPC address, host:port (batch worker; empty: never render)", envflag.RendererAddr))
	workers := flag.Int("workers", env.Int(envflag.Workers, 8), envflag.Usage("batch jobs run at once", envflag.Workers))
	ackWait := flag.Duration("ack-wait", env.Duration(envflag.AckWait, jobs.DefaultAckWait), envflag.Usage("how long a job may go unanswered before another worker gets it; the same on every worker", envflag.AckWait))
	anonymous := flag.Bool("fallback-no-cookies", env.Bool(envflag.FallbackNoCookies, false), envflag.Usage("never hand a session's cookies to a headless render", envflag.FallbackNoCookies))
	replicas := flag.Int("stream-replicas", env.Int(envflag.StreamReplicas, 1), envflag.Usage("replicas of the job streams in a clustered NATS", envflag.StreamReplicas))
	allowLocal := flag.Bool("allow-local", env.Bool(envflag.AllowLocal, false), envflag.Usage("honour requests' allow_local: let them fetch loopback addresses (never private ranges, never this process's own ports)", envflag.AllowLocal))
	servicemain.Main("fetcher", envflag.DefaultFetcherAddr, env, func(ctx context.Context, p servicemain.Process) error {
		return server.Run(ctx, server.Config{
			Addr:          p.Listen,
			FetcherConfig: server.FetcherConfig{UserAgentVersion: version.String(), CacheDir: *cacheDir, NoCache: *noCache, AllowLocal: *allowLocal, Own: p.Own},
			NATSURL:       *natsURL, ExtractorAddr: *extractor, RendererAddr: *renderer,
			Workers: *workers, AckWait: *ackWait, StreamReplicas: *replicas, AnonymousRenders: *anonymous,
			GRPCOptions: telemetry.ServerOptions(), DialOptions: telemetry.DialOptions(),
		}, p.Logger)
	})
}
