package cli

import (
	"context"
	"log/slog"
	"net"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"distill.dev/gateway/app"
	"distill.dev/gateway/doors"
	"distill.dev/gateway/firecrawl"
	"distill.dev/gateway/host"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/version"
)

// DefaultListen keeps a fresh server on loopback: exposing it is a choice.
const DefaultListen = envflag.DefaultGatewayAddr

// serveLong is serve's help.
const serveLong = "Serve DistillService over gRPC, with gRPC health checking and server\n" +
	"reflection. By default the fetcher, extractor, renderer and an embedded NATS\n" +
	"server run in this process; with --cluster the gateway uses them over the\n" +
	"network (--nats, --fetcher, --extractor, --renderer) and is ready only while\n" +
	"NATS, the fetcher and the extractor answer. Stops gracefully on SIGINT or SIGTERM.\n\n" +
	"Calls carry 'authorization: Bearer <token>' with one of the API tokens\n" +
	"(" + string(envflag.APITokens) + ") or operator tokens (" + string(envflag.OperatorTokens) + "); only an\n" +
	"operator token may prune or clear the cache. Health and reflection stay open.\n" +
	"Without tokens the API is open and served on a loopback address only, unless\n" +
	"--no-auth. serve logs at info, where it listens first, unless --log-level says\n" +
	"otherwise.\n\n" +
	"--http ADDR serves Firecrawl's HTTP API (/v2/scrape, /v2/batch/scrape, /v2/crawl,\n" +
	"/v2/map and the v1 endpoints the SDKs use) beside the gRPC API, with the same\n" +
	"tokens as 'Authorization: Bearer <token>'; its requests reach loopback only with\n" +
	"--allow-local. Batch and crawl webhooks are signed with " + string(envflag.WebhookSecret) + "\n" +
	"(refused without it) and delivered under the network policy. Crawls and batches\n" +
	"are watched over a WebSocket at their status paths, as the SDKs' watchers do; a\n" +
	"crawl begun there is the job the gRPC API's CrawlStatus and CrawlCancel see. With\n" +
	"--policy, its json and summary formats and /v2/extract run as the actor the\n" +
	"policy maps the token to (an actor's token reaches only them), else as the default\n" +
	"actor, in the host run the X-Distill-Run header names, else in a run of their own.\n" +
	"The same port serves DistillService over HTTP/JSON: REST at /api/v1/... (the\n" +
	"google.api.http annotations; FetchBatch, Map and Crawl as newline-delimited\n" +
	"JSON), every call over Connect at /distill.v1.DistillService/<Method>, and its\n" +
	"OpenAPI document at /openapi.json.\n\n" +
	"With --policy FILE it serves HostService too: host mode's inspect, extract,\n" +
	"summarize and act under the policy, for the actor whose token (the policy's tokens)\n" +
	"calls, in the run the call's distill-run-id metadata names; an actor's token reaches\n" +
	"HostService only (and the HTTP API's model work), and never its host calls\n" +
	"(CreateApproval, RevokeApproval, ReserveOperation, GetOperation), which need an\n" +
	"operator token. SIGHUP reloads the policy, its tokens included."

// serveCmd is one `distill serve`: the flags cobra fills; run does the
// work.
type serveCmd struct {
	listen, httpAddr string
	sf               serveFlags
	af               authFlags
	hf               hostFlags

	g      *globals
	logger *slog.Logger
}

func newServeCmd(g *globals) *cobra.Command {
	c := &serveCmd{g: g}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the public gRPC API (DistillService)",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.logger = g.serverLogger(cmd)
			return c.run(cmd.Context())
		},
	}
	c.register(cmd.Flags())
	return cmd
}

// register declares serve's flags: its ports, then the flags it shares
// with mcp (services, auth, host mode).
func (c *serveCmd) register(fs *pflag.FlagSet) {
	env := c.g.env
	fs.StringVar(&c.listen, "listen", env.String(envflag.Listen, DefaultListen), envflag.Usage("gRPC listen address, host:port", envflag.Listen))
	fs.StringVar(&c.httpAddr, "http", "", "also serve the Firecrawl-compatible HTTP API on this address, host:port (same tokens; none when empty)")
	c.sf.register(fs, env)
	c.af.register(fs, env)
	c.hf.register(fs, env)
}

// run checks the tokens, opens the listeners, starts distill and host
// mode, and serves them through doors.Serve. What the command line gets
// wrong, and a port refused or taken, stop it before distill starts.
func (c *serveCmd) run(ctx context.Context) error {
	policies, guard, err := c.auth()
	if err != nil {
		return err
	}
	lis, httpLis, err := c.listeners(guard)
	if err != nil {
		return err
	}
	sys, stop, err := c.sf.start(ctx, c.g, c.logger, "gateway")
	if err != nil {
		closeAll(lis, httpLis)
		return err
	}
	defer stop()
	engine, done, err := c.hostMode(ctx, sys, policies, guard)
	if err != nil {
		return err
	}
	defer done()
	secret, _ := c.g.env.Lookup(envflag.WebhookSecret)
	return doors.Serve(ctx, c.logger, sys, doors.Config{Version: version.String(), Host: engine, GRPC: &doors.GRPC{
		Listener: lis, Guard: guard, HTTP: httpLis, Cluster: c.sf.cluster.enabled,
		Firecrawl: firecrawl.Config{AllowLocal: c.sf.allowLocal, WebhookSecret: secret, Own: c.sf.own},
	}})
}

// auth loads the policy, with --policy, and the guard that checks every
// call's token: the API and operator tokens, and the policy's.
func (c *serveCmd) auth() (*host.Policies, *grpcauth.Guard, error) {
	var policies *host.Policies
	var scoped []string
	if c.hf.enabled() {
		var err error
		if policies, err = c.hf.load(c.g.env); err != nil {
			return nil, nil, err
		}
		scoped = policies.Current().Tokens()
	}
	guard, err := c.af.guard(c.g.env, scoped...)
	return policies, guard, err
}

// listeners opens the gRPC port and, with --http, the HTTP port, each
// refused when guard leaves it open and it is not loopback.
func (c *serveCmd) listeners(guard *grpcauth.Guard) (lis, httpLis net.Listener, err error) {
	if lis, err = c.sf.listen(c.listen, "gRPC port"); err != nil {
		return nil, nil, err
	}
	if err := c.af.exposed(guard, lis.Addr().String()); err != nil {
		_ = lis.Close()
		return nil, nil, err
	}
	if c.httpAddr == "" {
		return lis, nil, nil
	}
	if httpLis, err = c.sf.listen(c.httpAddr, "Firecrawl HTTP port"); err != nil {
		_ = lis.Close()
		return nil, nil, err
	}
	if err := c.af.exposed(guard, httpLis.Addr().String()); err != nil {
		closeAll(lis, httpLis)
		return nil, nil, err
	}
	return lis, httpLis, nil
}

// hostMode starts host mode over sys when --policy named one (else a nil
// engine), its reloads keeping guard's policy tokens current. done lets
// its store go.
func (c *serveCmd) hostMode(ctx context.Context, sys *app.System, policies *host.Policies, guard *grpcauth.Guard) (engine *host.Engine, done func(), err error) {
	if policies == nil {
		return nil, func() {}, nil
	}
	// A reload's new tokens are admitted, its dropped ones refused, from
	// the next call on.
	policies.OnReload(func(p *host.Policy) {
		if err := guard.SetScoped(p.Tokens()); err != nil {
			c.logger.Error("host policy reloaded, but its tokens were not taken", "err", err.Error())
		}
	})
	return hostEngine(ctx, c.logger, c.g.env, policies, sys, &c.sf, &c.hf)
}

// closeAll closes the listeners a command opened, nil ones skipped.
func closeAll(listeners ...net.Listener) {
	for _, l := range listeners {
		if l != nil {
			_ = l.Close()
		}
	}
}
