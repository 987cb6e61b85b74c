// Command fetcher runs the fetcher service on its own, for cluster
// deployments; the single distill binary embeds it instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/services/fetcher/server"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	listen := flag.String("listen", envOr("DISTILL_FETCHER_ADDR", ":7001"), "gRPC listen address, host:port (env DISTILL_FETCHER_ADDR)")
	cacheDir := flag.String("cache-dir", "", "fetch cache directory (env DISTILL_CACHE_DIR; default: distill under the user's cache dir)")
	noCache := flag.Bool("no-cache", false, "run without the on-disk fetch cache")
	flag.Parse()

	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := server.Run(ctx, server.Config{Addr: *listen, UserAgentVersion: version, CacheDir: *cacheDir, NoCache: *noCache}, logger)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "fetcher: %v\n", err)
		os.Exit(1)
	}
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}
