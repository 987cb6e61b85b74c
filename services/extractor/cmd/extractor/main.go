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
	"distill.dev/services/extractor/server"
)

func main() {
	fs := flag.CommandLine
	listen := envflag.String(fs, "listen", "DISTILL_LISTEN", ":7002", "gRPC listen address, host:port")
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
	err = server.Run(ctx, server.Config{Addr: *listen}, logger)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "extractor: %v\n", err)
		os.Exit(1)
	}
}
