package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/gateway/internal/localcluster"
	"distill.dev/gateway/session"
	distillv1 "distill.dev/proto/gen/distill/v1"
	extractorserver "distill.dev/services/extractor/server"
	fetcherserver "distill.dev/services/fetcher/server"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/telemetry"
)

// inProcess is distill in cluster mode inside the test process: an
// embedded NATS server listening on loopback, and the extractor, fetchers
// and gateways each serving gRPC on a loopback port of its own, as their
// processes would, and reaching each other only through those ports. It
// has no renderer: pages are fetched with JavaScript off.
type inProcess struct {
	t         *testing.T
	NATSURL   string
	Extractor *service
	Fetchers  []*service
	Gateways  []*service
}

// service is one of an inProcess cluster's servers.
type service struct {
	Name string
	Addr string
	Log  *localcluster.Buffer

	stopOnce sync.Once
	cancel   context.CancelFunc
	done     chan error
}

type inProcessOpts struct {
	Fetchers int
	Gateways int
}

// startInProcess starts the cluster and waits until every server is
// ready; it stops when the test ends.
func startInProcess(t *testing.T, o inProcessOpts) *inProcess {
	t.Helper()
	skipShort(t)
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoSigs: true, NoLog: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("embedded NATS is not ready after 10s")
	}
	c := &inProcess{t: t, NATSURL: ns.ClientURL()}
	// Registered after NATS's, so it runs before: the services let go of
	// NATS before it stops, gateways first, as a rolling stop would.
	t.Cleanup(func() {
		for _, s := range append(append(c.Gateways, c.Fetchers...), c.Extractor) {
			if s == nil {
				continue
			}
			s.stop(t)
			if t.Failed() {
				t.Logf("--- %s (%s):\n%s", s.Name, s.Addr, tail(s.Log.String(), 3000))
			}
		}
	})

	exLis := listen(t)
	ex := c.start("extractor", slog.LevelInfo, exLis.Addr().String(), func(ctx context.Context, logger *slog.Logger) error {
		return extractorserver.New(logger, telemetry.ServerOptions()...).Serve(ctx, exLis)
	})
	c.Extractor = ex
	c.waitServing(ex)

	for i := range max(o.Fetchers, 1) {
		// server.Run listens itself, on an address FreePort keeps for it,
		// as a fetcher process does.
		addr, err := localcluster.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		// Debug logs every fetch, for tests to see who fetched what.
		f := c.start(fmt.Sprintf("fetcher-%d", i), slog.LevelDebug, addr, func(ctx context.Context, logger *slog.Logger) error {
			return fetcherserver.Run(ctx, fetcherserver.Config{
				Addr:          addr,
				FetcherConfig: fetcherserver.FetcherConfig{UserAgentVersion: "e2e", NoCache: true, AllowLocal: true},
				NATSURL:       c.NATSURL, ExtractorAddr: ex.Addr,
				Workers: 8, AckWait: 3 * time.Second, StreamReplicas: 1,
				GRPCOptions: telemetry.ServerOptions(), DialOptions: telemetry.DialOptions(),
			}, logger)
		})
		c.Fetchers = append(c.Fetchers, f)
	}
	for _, f := range c.Fetchers {
		c.waitServing(f)
	}

	key, err := session.ParseKey(localcluster.SessionKey)
	if err != nil {
		t.Fatal(err)
	}
	for i := range max(o.Gateways, 1) {
		lis := listen(t)
		g := c.start(fmt.Sprintf("gateway-%d", i), slog.LevelInfo, lis.Addr().String(), func(ctx context.Context, logger *slog.Logger) error {
			return serveGateway(ctx, lis, logger, app.ClusterConfig{
				NATSURL: c.NATSURL, FetcherAddr: c.Fetchers[0].Addr, ExtractorAddr: ex.Addr,
				StreamReplicas: 1, SessionKey: key, DialOptions: telemetry.DialOptions(),
			})
		})
		c.Gateways = append(c.Gateways, g)
	}
	for _, g := range c.Gateways {
		c.waitServing(g)
	}
	return c
}

// serveGateway is `distill serve --cluster`: the public API over the
// services, with sessions kept in NATS, ready while NATS, the fetcher and
// the extractor answer.
func serveGateway(ctx context.Context, lis net.Listener, logger *slog.Logger, cfg app.ClusterConfig) error {
	sys, err := app.Open(ctx, logger, app.Config{Cluster: &cfg, AllowLocal: true})
	if err != nil {
		return err
	}
	defer func() { _ = sys.Close() }()
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterDistillServiceServer(s, api.New(logger, sys, api.WithSessionLimits(session.Config{Store: sys.Sessions()})))
	}, telemetry.ServerOptions()...)
	srv.SetReadiness(sys.Ready)
	return srv.Serve(ctx, lis)
}

// start runs serve, which serves at addr, in the background with a
// logger of its own, until the test ends or the service is stopped.
func (c *inProcess) start(name string, level slog.Level, addr string, serve func(context.Context, *slog.Logger) error) *service {
	s := &service{Name: name, Addr: addr, Log: &localcluster.Buffer{}, done: make(chan error, 1)}
	logger := slog.New(slog.NewJSONHandler(s.Log, &slog.HandlerOptions{Level: level}))
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() { s.done <- serve(ctx, logger) }()
	return s
}

// stop ends the service gracefully, as SIGTERM ends its process, and
// fails the test when it ends with an error.
func (s *service) stop(t *testing.T) {
	s.stopOnce.Do(func() {
		s.cancel()
		if err := <-s.done; err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	})
}

// waitServing waits until s reports itself ready.
func (c *inProcess) waitServing(s *service) {
	c.t.Helper()
	cc, err := grpc.NewClient(s.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		c.t.Fatal(err)
	}
	defer func() { _ = cc.Close() }()
	health := healthpb.NewHealthClient(cc)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		res, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err == nil && res.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		select {
		case err := <-s.done:
			c.t.Fatalf("%s ended before it was ready: %v\n%s", s.Name, err, tail(s.Log.String(), 3000))
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s at %s is not ready after 30s: %v %v\n%s", s.Name, s.Addr, res.GetStatus(), err, tail(s.Log.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// client is a traced client of the i-th gateway.
func (c *inProcess) client(i int) distillv1.DistillServiceClient {
	c.t.Helper()
	cc, err := grpc.NewClient(c.Gateways[i].Addr, append(telemetry.DialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcserve.MaxMessageBytes)))...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { _ = cc.Close() })
	return distillv1.NewDistillServiceClient(cc)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
