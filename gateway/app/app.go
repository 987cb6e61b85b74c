// Package app puts distill together, once for each way it runs: every
// service in this process with an embedded NATS server for batches, or a
// gateway of services running apart, joined by NATS. Open is the one
// constructor; the CLI's fetch, serve and mcp commands and the benchmarks
// only fill in a Config, and the doors (doors.Serve's gRPC, HTTP and MCP,
// and the CLI) serve the System it returns. It holds no service logic of
// its own.
package app

import (
	"context"
	"crypto/x509"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"

	"distill.dev/gateway/api"
	"distill.dev/gateway/session"
	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/natsembed"
	"distill.dev/services/platform/netpolicy"
)

// DefaultWorkers is how many batch jobs the in-process workers run at once
// unless Config.Workers says otherwise.
const DefaultWorkers = 32

// Config says how distill runs. The zero value is every service in this
// process with their defaults.
type Config struct {
	// UserAgentVersion names distill in the User-Agent of its requests.
	UserAgentVersion string
	// AnonymousRenders keeps a session's cookies out of every headless
	// render (the operator's DISTILL_FALLBACK_NO_COOKIES).
	AnonymousRenders bool
	// AllowLocal honours requests' allow_local (the operator's
	// --allow-local); without it a request asking for loopback is refused
	// with failure.AllowLocalRefused, whatever door it came through.
	AllowLocal bool
	// Own holds this process's listening addresses (its gRPC, MCP and
	// metrics ports), which no fetch or render may reach, allow_local or
	// not; the in-process renderer adds its proxies. Nil starts an empty
	// set.
	Own *netpolicy.Own

	// Recorder, when set, is handed every HTTP exchange this process's
	// fetcher makes, pages, redirects, robots.txt and sitemaps alike: a
	// *warc.Writer keeps them in a WARC file. It needs the fetcher in this
	// process: Open refuses it with Cluster, whose fetchers run elsewhere.
	Recorder fetch.Recorder
	// RootCAs, when set, verifies the in-process fetcher's servers'
	// certificates against these roots instead of the system's (a private
	// CA's sites, or a test's server); never a way to skip verification.
	RootCAs *x509.CertPool

	// Cluster, when set, makes this process a gateway of distill's
	// services running apart; the fields below it are then unused.
	Cluster *ClusterConfig

	// Workers is how many batch jobs the in-process workers run at once;
	// zero means DefaultWorkers.
	Workers int
	// CacheDir holds the fetch cache; empty means cache.DefaultDir.
	CacheDir string
	// PDFCacheDir keeps the compiled PDF engine between processes; empty
	// compiles it once per process (see extract.WithPDFCacheDir).
	PDFCacheDir string
	// Chromium is the browser binary; empty means render.DefaultChromium.
	Chromium string
	// ExtractMemory is the memory, in bytes, the in-process extractions
	// may hold at once; zero means extract.DefaultMemoryBudget.
	ExtractMemory int64
}

// ClusterConfig is where a gateway finds the rest of distill.
type ClusterConfig struct {
	// NATSURL lists the NATS cluster's URLs, comma-separated.
	NATSURL string
	// Addresses (host:port) of the services. The renderer is optional:
	// without one, pages are never rendered.
	FetcherAddr   string
	ExtractorAddr string
	RendererAddr  string
	// StreamReplicas is the replication of the job streams and of the
	// session bucket.
	StreamReplicas int
	// SessionKey seals the sessions every gateway keeps in NATS (32 bytes,
	// AES-256-GCM). Required.
	SessionKey []byte
	// DialOptions are added to every connection to a service (telemetry).
	DialOptions []grpc.DialOption
	// CrawlLease is how long a crawl's lease outlives a gateway that died,
	// after which another adopts the crawl; 0 means crawljs.LeaseTTL.
	CrawlLease time.Duration
}

// ErrRecorderInCluster refuses a Recorder to a gateway: the HTTP exchanges
// happen in the fetcher processes, out of its sight.
var ErrRecorderInCluster = failure.New(failure.InvalidArgument,
	"a WARC file records the HTTP exchanges of this process's fetcher; a cluster gateway fetches through the fetcher service")

// backend is what each mode provides: the API's backend, and how it is
// ready and closed.
type backend interface {
	api.Backend
	// Map lists a site's URLs (distill map).
	Map(ctx context.Context, req mapsite.Request) (*mapsite.Result, error)
	// Extract distills HTML the caller already holds (a page the Firecrawl
	// API trimmed by excludeTags): no network, no policy to pass.
	Extract(ctx context.Context, req *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error)
	ready(ctx context.Context) error
	close() error
	// keyValue is where shared state lives (host mode's budgets): the
	// embedded NATS server, started on first use, or the cluster's, with
	// the storage and replicas it takes.
	keyValue() (jetstream.JetStream, jetstream.StorageType, int, error)
	// embedded is the process's embedded NATS server, nil for a gateway.
	embedded() *natsembed.Shared
}

// System is distill opened in one mode: the backend every door serves
// (api.Backend), its readiness, and where browsing sessions are kept.
type System struct {
	backend
	sessions   session.Store
	allowLocal bool
}

// Open puts distill together as cfg says. In this process nothing waits
// on the network: the embedded NATS server starts on the first batch or
// crawl, the browser on the first render. A gateway connects lazily too,
// and reaches each service and NATS as soon as it is up.
func Open(ctx context.Context, logger *slog.Logger, cfg Config) (*System, error) {
	if cfg.Cluster != nil {
		if cfg.Recorder != nil {
			return nil, ErrRecorderInCluster
		}
		return openCluster(ctx, logger, cfg)
	}
	if cfg.Own == nil {
		cfg.Own = netpolicy.NewOwn()
	}
	return &System{
		backend:    newLocal(logger, cfg),
		sessions:   session.NewMemoryStore(session.DefaultMaxSessions, session.DefaultIdleTTL),
		allowLocal: cfg.AllowLocal,
	}, nil
}

// Do runs the pipeline for one request (a fetch, an observation, a
// session's step), refusing allow_local unless the operator allowed it.
// In a cluster the services refuse on their own too.
func (s *System) Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	if req.Options.GetAllowLocal() && !s.allowLocal {
		return nil, failure.AllowLocalRefused()
	}
	return s.backend.Do(ctx, req)
}

// Batch distills urls, refusing the whole batch when it asks for
// allow_local that the operator did not allow.
func (s *System) Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error {
	if opts.GetAllowLocal() && !s.allowLocal {
		return failure.AllowLocalRefused()
	}
	return s.backend.Batch(ctx, urls, opts, deliver)
}

// Map lists a site's URLs, refusing allow_local unless the operator
// allowed it.
func (s *System) Map(ctx context.Context, req mapsite.Request) (*mapsite.Result, error) {
	if req.AllowLocal && !s.allowLocal {
		return nil, failure.AllowLocalRefused()
	}
	return s.backend.Map(ctx, req)
}

// CrawlHub runs the crawls (api.CrawlHub): on the embedded NATS in this
// process, on the cluster's for a gateway, whose crawls every gateway
// reports and cancels, and adopts when their gateway dies.
func (s *System) CrawlHub() api.CrawlHub {
	return localRefused{s.backend.CrawlHub(), s.allowLocal}
}

// localRefused refuses a crawl asking for allow_local that the operator
// did not allow, as Do, Batch and Map do.
type localRefused struct {
	api.CrawlHub
	allowLocal bool
}

func (l localRefused) StartCrawl(ctx context.Context, req crawl.Request, journal crawl.Journal) (string, error) {
	if req.Options.GetAllowLocal() && !l.allowLocal {
		return "", failure.AllowLocalRefused()
	}
	return l.CrawlHub.StartCrawl(ctx, req, journal)
}

// Sessions is where the system keeps browsing sessions between steps: this
// process's memory, or, for a gateway, a NATS key-value bucket that every
// gateway shares.
func (s *System) Sessions() session.Store { return s.sessions }

// KeyValue is the JetStream that shared state lives in, with the storage
// and replicas its buckets take: the embedded server's memory in this
// process, the cluster's files otherwise.
func (s *System) KeyValue() (jetstream.JetStream, jetstream.StorageType, int, error) {
	return s.keyValue()
}

// Embedded is the process's one embedded NATS server, started by the
// first part of the process to need it, or nil in a cluster's gateway:
// host mode's state store serves the user's other processes from it, and
// the job queue then runs on it too.
func (s *System) Embedded() *natsembed.Shared { return s.embedded() }

// Ready returns nil while the system can serve: always in this process; a
// gateway needs NATS, the fetcher and the extractor to answer.
func (s *System) Ready(ctx context.Context) error { return s.ready(ctx) }

// Close stops what Open started: the workers (letting them finish their
// jobs), the embedded NATS server and the browser, or a gateway's
// connections.
func (s *System) Close() error { return s.close() }
