package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"

	"github.com/spf13/pflag"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/gateway/session"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/remote"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/version"
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
}

func (f *clusterFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.enabled, "cluster", os.Getenv("DISTILL_CLUSTER") == "1", "use distill's services over the network instead of running them in this process (env DISTILL_CLUSTER=1)")
	fs.StringVar(&f.nats, "nats", os.Getenv("DISTILL_NATS_URL"), "cluster: NATS URLs, comma-separated (env DISTILL_NATS_URL)")
	fs.StringVar(&f.fetcher, "fetcher", os.Getenv("DISTILL_FETCHER_ADDR"), "cluster: fetcher gRPC address, host:port (env DISTILL_FETCHER_ADDR)")
	fs.StringVar(&f.extractor, "extractor", os.Getenv("DISTILL_EXTRACTOR_ADDR"), "cluster: extractor gRPC address, host:port (env DISTILL_EXTRACTOR_ADDR)")
	fs.StringVar(&f.renderer, "renderer", os.Getenv("DISTILL_RENDERER_ADDR"), "cluster: renderer gRPC address, host:port; none means pages are never rendered (env DISTILL_RENDERER_ADDR)")
	replicas, _ := strconv.Atoi(os.Getenv("DISTILL_STREAM_REPLICAS"))
	fs.IntVar(&f.replicas, "stream-replicas", max(replicas, 1), "cluster: replicas of the job streams and the session bucket in a clustered NATS (env DISTILL_STREAM_REPLICAS)")
}

// serveFlags are what the long-running commands share: where distill
// runs, how many batch jobs run in this process, and where metrics go.
type serveFlags struct {
	cluster clusterFlags
	workers int
	metrics string
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	f.workers = 32
	f.metrics = os.Getenv("DISTILL_METRICS_ADDR")
	fs.IntVar(&f.workers, "workers", f.workers, "batch jobs run at once by the in-process workers")
	fs.StringVar(&f.metrics, "metrics-listen", f.metrics, "serve Prometheus metrics at http://ADDR/metrics (env DISTILL_METRICS_ADDR; none when empty)")
	f.cluster.register(fs)
}

// start sets telemetry up for the process named service and opens distill;
// stop closes both.
func (f *serveFlags) start(ctx context.Context, g *globals, logger *slog.Logger, service string) (o *opened, stop func(), err error) {
	stopTelemetry, err := telemetry.Process(ctx, service, f.metrics, logger)
	if err != nil {
		return nil, nil, err
	}
	o, err = f.cluster.open(g, logger, f.workers)
	if err != nil {
		stopTelemetry()
		return nil, nil, err
	}
	return o, func() {
		_ = o.sys.Close()
		stopTelemetry()
	}, nil
}

// system is distill as a command uses it.
type system interface {
	api.Backend
	io.Closer
}

// opened is the system the flags name, with its readiness check (nil in
// one process, which is ready once it serves) and how the API keeps
// sessions there.
type opened struct {
	sys   system
	ready func(context.Context) error
	api   []api.Option
}

func (f *clusterFlags) open(g *globals, logger *slog.Logger, workers int) (*opened, error) {
	if !f.enabled {
		return &opened{sys: app.New(logger, app.Config{Version: version.String(), Workers: workers, CacheDir: g.cacheDir})}, nil
	}
	// Every gateway of a cluster must see every session, and the sessions
	// rest in NATS: encrypted, with a key the gateways share.
	raw, ok := os.LookupEnv(session.KeyEnv)
	if !ok {
		return nil, usageError{fmt.Errorf("cluster mode keeps sessions in NATS, encrypted: set %s to 32 random bytes in base64 (head -c 32 /dev/urandom | base64), the same on every gateway", session.KeyEnv)}
	}
	key, err := session.ParseKey(raw)
	if err != nil {
		return nil, usageError{err}
	}
	c, err := app.NewCluster(logger, app.ClusterConfig{
		NATSURL: f.nats, FetcherAddr: f.fetcher, ExtractorAddr: f.extractor, RendererAddr: f.renderer,
		StreamReplicas: f.replicas,
		DialOptions:    telemetry.DialOptions(),
	})
	if err != nil {
		return nil, usageError{err}
	}
	store, err := session.NewKVStore(c.JetStream(), key, session.DefaultMaxSessions, session.DefaultIdleTTL, f.replicas)
	if err != nil {
		_ = c.Close()
		return nil, usageError{err}
	}
	return &opened{sys: c, ready: c.Ready, api: []api.Option{api.WithSessionLimits(session.Config{Store: store})}}, nil
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

func dialGateway(addr string) (*gatewayClient, error) {
	conn, err := remote.Dial("gateway", addr)
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

// fail names the gateway when it cannot be reached.
func (c *gatewayClient) fail(err error) error {
	if failure.CodeOf(err) == failure.Unavailable || failure.CodeOf(err) == failure.Network {
		return failure.Wrap(failure.Unavailable, failure.FromRemote(err), "gateway at %s", c.conn.Addr)
	}
	return failure.FromRemote(err)
}

func (c *gatewayClient) Close() error { return c.conn.Close() }
