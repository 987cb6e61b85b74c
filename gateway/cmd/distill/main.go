// Command distill turns web pages into clean, bounded, LLM-ready content.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/gateway/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
