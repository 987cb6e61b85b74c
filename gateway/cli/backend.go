package cli

import (
	"context"

	"github.com/spf13/pflag"

	"distill.dev/gateway/app"
	"distill.dev/gateway/doors"
	"distill.dev/services/platform/envflag"
)

// service is what fetch, crawl and map read pages through: the API in
// this process, or a gateway reached over gRPC with --server.
type service interface {
	fetchService
	crawlService
	mapService
}

// backend is where a fetch, crawl or map reads its pages: through the
// distill gateway at --server, or in this process, as the global flags
// configure distill and with --warc keeping its HTTP exchanges. The three
// commands decide between the two here and nowhere else.
type backend struct {
	// server is --server, the gateway's gRPC address; empty reads in this
	// process.
	server string
	// allowLocal is --allow-local. In this process the user is the
	// operator: loopback targets are theirs to permit.
	allowLocal bool
	// workers is how many jobs distill in this process runs at once.
	workers int
	warc    warcFlag
	// command names the command in the WARC file's warcinfo record.
	command string
}

// serverFlag declares --server for a command that can run its work
// through a gateway: verb says what it does there (fetch, crawl, map).
func serverFlag(fs *pflag.FlagSet, g *globals, server *string, verb string) {
	fs.StringVar(server, "server", g.env.String(envflag.Server, ""), envflag.Usage(verb+" through the distill gateway at this gRPC address, host:port, instead of in this process", envflag.Server))
}

// open connects to the gateway, or starts distill in this process. done
// closes what open opened: call it with the command's error once the
// command is through; it returns that error, or the WARC file's when the
// command succeeded but a record could not be written.
func (b backend) open(ctx context.Context, g *globals) (svc service, done func(error) error, err error) {
	if b.server != "" {
		return b.dial(g)
	}
	return b.start(ctx, g)
}

// dial reaches the gateway at --server; an address it cannot use is the
// command line's mistake.
func (b backend) dial(g *globals) (service, func(error) error, error) {
	gw, err := dialGateway(g.env, b.server)
	if err != nil {
		return nil, nil, usageError{err}
	}
	return gw, func(err error) error {
		_ = gw.Close()
		return err
	}, nil
}

// start opens distill in this process, recording into the --warc file.
func (b backend) start(ctx context.Context, g *globals) (service, func(error) error, error) {
	cfg := g.appConfig(b.workers)
	cfg.AllowLocal = b.allowLocal
	closeWARC, err := b.warc.open(&cfg, b.command)
	if err != nil {
		return nil, nil, err
	}
	sys, err := app.Open(ctx, g.logger(), cfg)
	if err != nil {
		return nil, nil, closeWARC(err)
	}
	return doors.API(g.logger(), sys), func(err error) error {
		// The WARC file closes after the system's Close has let the
		// workers finish their exchanges.
		_ = sys.Close()
		return closeWARC(err)
	}, nil
}
