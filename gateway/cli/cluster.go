package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/gateway/session"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl/crawljs"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/grpcauth"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/remote"
	"distill.dev/services/platform/telemetry"
)

// clusterFlags choose where a long-running command (serve, mcp) finds
// distill: in this process, or, with --cluster, as separate services joined
// by NATS. Each flag's default comes from the environment variable its help
// names.
type clusterFlags struct {
	enabled   bool
	nats      string
	fetcher   string
	extractor string
	renderer  string
	replicas  int
	lease     time.Duration
}

func (f *clusterFlags) register(fs *pflag.FlagSet, env *envflag.Env) {
	fs.BoolVar(&f.enabled, "cluster", env.Bool(envflag.Cluster, false), envflag.Usage("use distill's services over the network instead of running them in this process", envflag.Cluster))
	fs.StringVar(&f.nats, "nats", env.String(envflag.NATSURL, envflag.DefaultNATSURL), envflag.Usage("cluster: NATS URLs, comma-separated", envflag.NATSURL))
	fs.StringVar(&f.fetcher, "fetcher", env.String(envflag.FetcherAddr, envflag.DefaultFetcherAddr), envflag.Usage("cluster: fetcher gRPC address, host:port", envflag.FetcherAddr))
	fs.StringVar(&f.extractor, "extractor", env.String(envflag.ExtractorAddr, envflag.DefaultExtractorAddr), envflag.Usage("cluster: extractor gRPC address, host:port", envflag.ExtractorAddr))
	fs.StringVar(&f.renderer, "renderer", env.String(envflag.RendererAddr, envflag.DefaultRendererAddr), envflag.Usage("cluster: renderer gRPC address, host:port; empty: pages are never rendered", envflag.RendererAddr))
	fs.IntVar(&f.replicas, "stream-replicas", env.Int(envflag.StreamReplicas, 1), envflag.Usage("cluster: replicas of the job streams and the session bucket in a clustered NATS", envflag.StreamReplicas))
	fs.DurationVar(&f.lease, "crawl-lease", env.Duration(envflag.CrawlLease, crawljs.LeaseTTL), envflag.Usage("cluster: how long a crawl's lease outlives a gateway that died, after which another gateway adopts the crawl (at most 15s)", envflag.CrawlLease))
}

// serveFlags are what the long-running commands share: where distill
// runs, how many batch jobs run in this process, and where metrics go.
type serveFlags struct {
	cluster    clusterFlags
	workers    int
	metrics    string
	allowLocal bool
	// own holds the process's listening addresses, refused to every fetch
	// and render; start adds the metrics listener, the command its own.
	own *netpolicy.Own
}

func (f *serveFlags) register(fs *pflag.FlagSet, env *envflag.Env) {
	fs.BoolVar(&f.allowLocal, "allow-local", env.Bool(envflag.AllowLocal, false), envflag.Usage("honour requests' allow_local: let callers fetch loopback addresses (never private ranges, never this server's own ports); without it they are refused", envflag.AllowLocal))
	fs.IntVar(&f.workers, "workers", app.DefaultWorkers, "batch jobs run at once by the in-process workers")
	fs.StringVar(&f.metrics, "metrics-listen", env.String(envflag.MetricsAddr, ""), envflag.Usage("serve Prometheus metrics at http://ADDR/metrics (none when empty)", envflag.MetricsAddr))
	f.cluster.register(fs, env)
}

// listen opens one of the command's own listeners, which no request may
// reach; what names it in refusals.
func (f *serveFlags) listen(addr, what string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	if f.own == nil {
		f.own = netpolicy.NewOwn()
	}
	f.own.Add(lis.Addr(), what)
	return lis, nil
}

// start sets telemetry up for the process named service and opens distill;
// stop closes both.
func (f *serveFlags) start(ctx context.Context, g *globals, logger *slog.Logger, service string) (sys *app.System, stop func(), err error) {
	if f.own == nil {
		f.own = netpolicy.NewOwn()
	}
	cfg := g.appConfig(f.workers)
	cfg.AllowLocal, cfg.Own = f.allowLocal, f.own
	if f.cluster.enabled {
		if cfg.Cluster, err = f.cluster.config(g.env); err != nil {
			return nil, nil, err
		}
	}
	stopTelemetry, err := telemetry.Process(ctx, service, f.metrics, logger, func(a net.Addr) { f.own.Add(a, "metrics port") })
	if err != nil {
		return nil, nil, err
	}
	sys, err = app.Open(ctx, logger, cfg)
	if err != nil {
		stopTelemetry()
		return nil, nil, usageError{err}
	}
	return sys, func() {
		_ = sys.Close()
		stopTelemetry()
	}, nil
}

// config is where the flags say the cluster is. Every gateway of a cluster
// must see every session, and the sessions rest in NATS: encrypted, with a
// key the gateways share.
func (f *clusterFlags) config(env *envflag.Env) (*app.ClusterConfig, error) {
	raw, ok := env.Lookup(envflag.SessionKey)
	if !ok {
		return nil, usageError{fmt.Errorf("cluster mode keeps sessions in NATS, encrypted: set %s to 32 random bytes in base64 (head -c 32 /dev/urandom | base64), the same on every gateway", envflag.SessionKey)}
	}
	key, err := session.ParseKey(raw)
	if err != nil {
		return nil, usageError{err}
	}
	return &app.ClusterConfig{
		NATSURL: f.nats, FetcherAddr: f.fetcher, ExtractorAddr: f.extractor, RendererAddr: f.renderer,
		StreamReplicas: f.replicas,
		CrawlLease:     f.lease,
		SessionKey:     key,
		DialOptions:    telemetry.DialOptions(),
	}, nil
}

// fetchService is what `distill fetch` needs: the API in this process, or a
// gateway reached over gRPC with --server.
type fetchService interface {
	Fetch(ctx context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error)
	Batch(ctx context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error
}

// gatewayClient is a distill gateway over gRPC.
type gatewayClient struct {
	conn   *remote.Conn
	client distillv1.DistillServiceClient
}

// dialGateway connects to the gateway at addr, sending the client's own
// token, when the environment has one, with every call.
func dialGateway(env *envflag.Env, addr string) (*gatewayClient, error) {
	var opts []grpc.DialOption
	if token, ok := env.Lookup(envflag.APIToken); ok && token != "" {
		opts = append(opts, grpcauth.DialOption(token))
	}
	conn, err := remote.Dial("gateway", addr, opts...)
	if err != nil {
		return nil, err
	}
	return &gatewayClient{conn: conn, client: distillv1.NewDistillServiceClient(conn)}, nil
}

func (c *gatewayClient) Fetch(ctx context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error) {
	res, err := c.client.Fetch(ctx, req)
	if err != nil {
		return nil, c.fail(err)
	}
	return res, nil
}

func (c *gatewayClient) Batch(ctx context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error {
	if err := api.StreamBatch(ctx, c.client, req, deliver); err != nil {
		return c.fail(err)
	}
	return nil
}

// fail names the gateway when it cannot be reached or refuses the
// client, and says what to do about it.
func (c *gatewayClient) fail(err error) error {
	if status.Code(err) == codes.Unauthenticated {
		return failure.New(failure.InvalidArgument, "gateway at %s refused the call: %s (set %s to a token it accepts)", c.conn.Addr, status.Convert(err).Message(), envflag.APIToken)
	}
	if failure.CodeOf(err) == failure.Unavailable || failure.CodeOf(err) == failure.Network {
		return failure.Wrap(failure.Unavailable, failure.FromRemote(err), "gateway at %s", c.conn.Addr)
	}
	return failure.FromRemote(err)
}

func (c *gatewayClient) Close() error { return c.conn.Close() }
