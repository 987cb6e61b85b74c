// Package servicemain runs a distill service process the same way in every
// binary: the flags every service has (listen address, metrics address, log
// level, each with its environment variable), a JSON logger, telemetry, a
// context that ends on SIGINT or SIGTERM, and exit codes: 2 for a bad flag or
// environment value, 1 when the service fails.
package servicemain

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/telemetry"
)

// Process is what a service's run function is given.
type Process struct {
	// Listen is the gRPC listen address, host:port.
	Listen string
	Logger *slog.Logger
	// Own holds the process's listening addresses, the metrics listener
	// already in it; the service adds its own and hands it to its network
	// policy, which never lets a request reach them.
	Own *netpolicy.Own
}

// Main defines the common flags on flag.CommandLine, next to those the
// caller defined from env, parses the command line and runs run until the
// process is signalled. name names the process in errors and telemetry;
// listen is its default gRPC address, on loopback (envflag's defaults):
// a pod or a host that serves others says so with -listen. Main does not
// return.
func Main(name, listen string, env *envflag.Env, run func(ctx context.Context, p Process) error) {
	fs := flag.CommandLine
	addr := fs.String("listen", env.String(envflag.Listen, listen), envflag.Usage("gRPC listen address, host:port", envflag.Listen))
	metrics := fs.String("metrics-listen", env.String(envflag.MetricsAddr, ""), envflag.Usage("serve Prometheus metrics at http://ADDR/metrics (none when empty)", envflag.MetricsAddr))
	level := fs.String("log-level", env.String(envflag.LogLevel, "info"), envflag.Usage("log level: debug, info, warn or error", envflag.LogLevel))
	flag.Parse()
	err := env.Err()
	var logger *slog.Logger
	if err == nil {
		logger, err = newLogger(*level)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	own := netpolicy.NewOwn()
	stopTelemetry, err := telemetry.Process(ctx, name, *metrics, logger, func(a net.Addr) { own.Add(a, "metrics port") })
	if err == nil {
		err = run(ctx, Process{Listen: *addr, Logger: logger, Own: own})
		stopTelemetry()
	}
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// newLogger returns the JSON logger on stderr every service process uses,
// at level (debug, info, warn or error).
func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
