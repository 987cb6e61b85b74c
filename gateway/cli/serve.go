package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/gateway/host"
	"distill.dev/gateway/rest"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/version"
)

// DefaultListen keeps a fresh server on loopback: exposing it is a choice.
const DefaultListen = envflag.DefaultGatewayAddr

func newServeCmd(g *globals) *cobra.Command {
	var listen, httpAddr string
	var sf serveFlags
	var af authFlags
	var hf hostFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the public gRPC API (DistillService)",
		Long: "Serve DistillService over gRPC, with gRPC health checking and server\n" +
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
			"operator token. SIGHUP reloads the policy, its tokens included.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var policies *host.Policies
			var scoped []string
			if hf.enabled() {
				var err error
				if policies, err = hf.load(g.env); err != nil {
					return err
				}
				scoped = policies.Current().Tokens()
			}
			guard, err := af.guard(g.env, scoped...)
			if err != nil {
				return err
			}
			lis, err := sf.listen(listen, "gRPC port")
			if err != nil {
				return err
			}
			if err := af.exposed(guard, lis.Addr().String()); err != nil {
				_ = lis.Close()
				return err
			}
			var httpLis net.Listener
			if httpAddr != "" {
				if httpLis, err = sf.listen(httpAddr, "Firecrawl HTTP port"); err != nil {
					_ = lis.Close()
					return err
				}
				if err := af.exposed(guard, httpLis.Addr().String()); err != nil {
					_ = lis.Close()
					_ = httpLis.Close()
					return err
				}
			}
			logger := g.serverLogger(cmd)
			sys, stop, err := sf.start(cmd.Context(), g, logger, "gateway")
			if err != nil {
				_ = lis.Close()
				if httpLis != nil {
					_ = httpLis.Close()
				}
				return err
			}
			defer stop()
			var hostSrv *host.Server
			var model firecrawl.Host
			if policies != nil {
				// A reload's new tokens are admitted, its dropped ones
				// refused, from the next call on.
				policies.OnReload(func(p *host.Policy) {
					if err := guard.SetScoped(p.Tokens()); err != nil {
						logger.Error("host policy reloaded, but its tokens were not taken", "err", err.Error())
					}
				})
				engine, done, err := hostEngine(cmd.Context(), logger, g.env, policies, sys, &sf, &hf)
				if err != nil {
					return err
				}
				defer done()
				hostSrv = host.NewServer(engine, !guard.Enabled(), guard.Operator)
				model = engine
			}
			// One API for both doors: a crawl begun over HTTP is the job
			// the gRPC API's CrawlStatus and CrawlCancel see.
			apiSrv := serveAPI(logger, sys)
			srv := grpcserve.New(logger, func(s *grpc.Server) {
				distillv1.RegisterDistillServiceServer(s, apiSrv)
				if hostSrv != nil {
					distillv1.RegisterHostServiceServer(s, hostSrv)
				}
			}, append(telemetry.ServerOptions(), guard.ServerOptions()...)...)
			srv.SetReadiness(sys.Ready)
			if httpLis != nil {
				secret, _ := g.env.Lookup(envflag.WebhookSecret)
				restAPI, err := rest.Handler(srv.GRPC, version.String())
				if err != nil {
					return err
				}
				stopHTTP := serveHTTP(cmd.Context(), logger, sys, firecrawl.Config{
					AllowLocal: sf.allowLocal, Auth: guard, WebhookSecret: secret, Own: sf.own, Host: model, Crawls: apiSrv,
				}, restAPI, httpLis)
				defer stopHTTP()
			}
			logger.Info("distill serve listening", "addr", lis.Addr().String(), "auth", guard.Enabled(), "cluster", sf.cluster.enabled)
			return srv.Serve(cmd.Context(), lis)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", g.env.String(envflag.Listen, DefaultListen), envflag.Usage("gRPC listen address, host:port", envflag.Listen))
	cmd.Flags().StringVar(&httpAddr, "http", "", "also serve the Firecrawl-compatible HTTP API on this address, host:port (same tokens; none when empty)")
	sf.register(cmd.Flags(), g.env)
	af.register(cmd.Flags(), g.env)
	hf.register(cmd.Flags(), g.env)
	return cmd
}

// httpShutdown is how long the HTTP API's requests in flight get to end
// when serve stops.
const httpShutdown = 10 * time.Second

// serveHTTP serves the HTTP doors on lis until stop is called: the
// Firecrawl-compatible API, behind the gRPC API's tokens and the
// operator's --allow-local, and restAPI (DistillService over HTTP/JSON,
// whose calls pass the gRPC server's own checks) at its paths.
func serveHTTP(ctx context.Context, logger *slog.Logger, sys *app.System, cfg firecrawl.Config, restAPI http.Handler, lis net.Listener) (stop func()) {
	fc := firecrawl.New(logger, sys, cfg)
	mux := http.NewServeMux()
	for _, p := range rest.Paths() {
		mux.Handle(p, restAPI)
	}
	mux.Handle("/", fc.Handler())
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("Firecrawl HTTP API stopped", "err", err)
		}
	}()
	logger.Info("distill serve: Firecrawl HTTP API listening", "addr", lis.Addr().String(), "webhooks", cfg.WebhookSecret != "", "rest", rest.Paths())
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), httpShutdown)
		defer cancel()
		_ = srv.Shutdown(sctx)
		<-done
		fc.Close()
	}
}
