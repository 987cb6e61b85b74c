// Command extractor serves distill's ExtractorService over gRPC.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/services/extractor/server"
)

func main() {
	addr := os.Getenv("DISTILL_EXTRACTOR_ADDR")
	if addr == "" {
		addr = ":7002"
	}
	listen := flag.String("listen", addr, "host:port to serve gRPC on (env DISTILL_EXTRACTOR_ADDR)")
	flag.Parse()

	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	if err := server.Run(ctx, server.Config{Addr: *listen}, logger); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "extractor:", err)
		os.Exit(1)
	}
}
