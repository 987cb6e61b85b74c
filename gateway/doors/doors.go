// Package doors opens the ways in to a distill System: distill serve's
// gRPC port with the HTTP doors beside it (Firecrawl's API, REST and
// Connect), and distill mcp's streamable HTTP or stdio, each with host mode
// when the operator runs it. app.Open puts distill together; Serve puts the
// doors in front of it, so that the CLI only parses flags. It is a package
// of its own, not part of app, because the doors' tests run over app.Open.
package doors

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/gateway/host"
	"distill.dev/gateway/mcp"
	"distill.dev/gateway/rest"
	"distill.dev/gateway/session"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/telemetry"
)

// Config is the ways in to a System that Serve opens: distill serve's gRPC
// port (with the HTTP port beside it), or distill mcp's streamable HTTP or
// stdio. The command opens the listeners, so that an address refused or
// taken stops it before distill starts, and Serve wires the rest.
type Config struct {
	// Version goes into the OpenAPI document and the MCP server's info.
	Version string
	// Host, when set, is host mode: HostService beside DistillService and
	// the Firecrawl API's model work, or MCP's only tools.
	Host *host.Engine
	// GRPC serves DistillService; when nil, MCP is served.
	GRPC *GRPC
	MCP  *MCP
}

// GRPC is distill serve's door: the public API over gRPC and, with HTTP,
// over Firecrawl's HTTP API, REST and Connect.
type GRPC struct {
	Listener net.Listener
	// Guard checks every call's bearer token, and the HTTP API's.
	Guard *grpcauth.Guard
	// HTTP, when set, serves the HTTP doors on this listener.
	HTTP net.Listener
	// Firecrawl configures the HTTP API; Serve sets its Auth, Host and
	// Crawls, and its KeyValue (the system's) when unset.
	Firecrawl firecrawl.Config
	// Cluster is logged with where the server listens.
	Cluster bool
}

// MCP is distill mcp's door.
type MCP struct {
	// Listeners serve streamable HTTP, each request carrying Token (none
	// when empty); without listeners MCP is spoken on In and Out.
	Listeners []mcp.Listener
	Token     string
	// RequireToken refuses, in host mode, a request without one of the
	// policy's tokens.
	RequireToken bool
	// Run is the run every host-mode call belongs to; empty is one per
	// MCP session.
	Run string
	In  io.Reader
	Out io.Writer
}

// Serve serves sys through the doors d opens until ctx ends.
func Serve(ctx context.Context, logger *slog.Logger, sys *app.System, d Config) error {
	if d.GRPC != nil {
		return serveGRPC(ctx, logger, sys, d)
	}
	if d.MCP != nil {
		return serveMCP(ctx, logger, sys, d)
	}
	return errors.New("serve: no door to open")
}

// API is the public API over sys, the one implementation behind every
// door (the CLI's fetch, crawl and map in this process included).
func API(logger *slog.Logger, sys *app.System) *api.Server {
	return api.New(logger, sys, api.WithSessionLimits(session.Config{Store: sys.Sessions()}))
}

func serveGRPC(ctx context.Context, logger *slog.Logger, sys *app.System, d Config) error {
	door := d.GRPC
	var hostSrv *host.Server
	if d.Host != nil {
		hostSrv = host.NewServer(d.Host, !door.Guard.Enabled(), door.Guard.Operator)
	}
	// One API for both doors: a crawl begun over HTTP is the job the gRPC
	// API's CrawlStatus and CrawlCancel see.
	apiSrv := API(logger, sys)
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterDistillServiceServer(s, apiSrv)
		if hostSrv != nil {
			distillv1.RegisterHostServiceServer(s, hostSrv)
		}
	}, append(telemetry.ServerOptions(), door.Guard.ServerOptions()...)...)
	srv.SetReadiness(sys.Ready)
	if door.HTTP != nil {
		restAPI, err := rest.Handler(srv.GRPC, d.Version)
		if err != nil {
			return err
		}
		cfg := door.Firecrawl
		cfg.Auth, cfg.Crawls = door.Guard, apiSrv
		if d.Host != nil {
			cfg.Host = d.Host
		}
		stopHTTP := serveHTTP(ctx, logger, sys, cfg, restAPI, door.HTTP)
		defer stopHTTP()
	}
	logger.Info("distill serve listening", "addr", door.Listener.Addr().String(), "auth", door.Guard.Enabled(), "cluster", door.Cluster)
	return srv.Serve(ctx, door.Listener)
}

// httpShutdown is how long the HTTP API's requests in flight get to end
// when serve stops.
const httpShutdown = 10 * time.Second

// serveHTTP serves the HTTP doors on lis until stop is called: the
// Firecrawl-compatible API, behind the gRPC API's tokens and the
// operator's --allow-local, and restAPI (DistillService over HTTP/JSON,
// whose calls pass the gRPC server's own checks) at its paths.
func serveHTTP(ctx context.Context, logger *slog.Logger, sys *app.System, cfg firecrawl.Config, restAPI http.Handler, lis net.Listener) (stop func()) {
	if cfg.KeyValue == nil {
		// The jobs live in the system's JetStream, beside the crawl hub's:
		// any gateway of a cluster answers for any of them.
		cfg.KeyValue = sys.KeyValue
	}
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

func serveMCP(ctx context.Context, logger *slog.Logger, sys *app.System, d Config) error {
	door := d.MCP
	var srv *mcp.Server
	if d.Host != nil {
		srv = mcp.NewHost(logger, d.Host, d.Host.Policies(), door.Run, d.Version)
		if door.RequireToken {
			srv.RequireToken()
		}
	} else {
		srv = mcp.New(logger, API(logger, sys), d.Version)
	}
	if len(door.Listeners) == 0 {
		return srv.ServeStdio(ctx, door.In, door.Out)
	}
	return srv.ServeListeners(ctx, door.Token, door.Listeners...)
}
