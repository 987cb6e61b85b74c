// Command distill turns web pages into clean, bounded, LLM-ready content.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/gateway/cli"
	"distill.dev/services/platform/envflag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], envflag.FromOS(), os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
