// Package firecrawl serves distill behind Firecrawl's HTTP API, so that the
// tools that already speak it (the Firecrawl SDKs, CLI and MCP server, the
// LangChain and LlamaIndex loaders, n8n, Dify) work against distill by
// changing one base URL. Each endpoint maps onto the calls every other door
// makes (a fetch through the pipeline, a batch over the job queue, a map);
// a field distill cannot honour is refused with Firecrawl's error shape and
// a message naming it, never silently dropped, and a few that change
// nothing about the content (location, proxy) are ignored with a warning.
package firecrawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/api"
	"distill.dev/gateway/host"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/netpolicy"
)

// Backend is what the API maps onto: an *app.System is one.
type Backend interface {
	Do(ctx context.Context, req pipeline.Request) (*pipeline.Result, error)
	Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error
	Map(ctx context.Context, req mapsite.Request) (*mapsite.Result, error)
}

// keyValuer is a Backend that keeps shared state: an *app.System.
type keyValuer interface {
	KeyValue() (jetstream.JetStream, jetstream.StorageType, int, error)
}

// Crawls runs crawls as DistillService does, and reports and cancels
// them by id: an *api.Server is one. Given the one the gRPC API serves,
// a crawl begun here is the job its CrawlStatus and CrawlCancel see, on
// this gateway and, in a cluster, on every gateway.
type Crawls interface {
	CrawlSite(ctx context.Context, req *distillv1.CrawlRequest, journal crawl.Journal, deliver func(*distillv1.CrawlResponse) error) error
	CrawlStatus(ctx context.Context, req *distillv1.CrawlStatusRequest) (*distillv1.CrawlStatusResponse, error)
	CrawlCancel(ctx context.Context, req *distillv1.CrawlCancelRequest) (*distillv1.CrawlCancelResponse, error)
}

// Authorizer admits a request by its Authorization header; a
// *grpcauth.Guard is one, so the HTTP door takes the gRPC API's tokens.
type Authorizer interface {
	CheckHeader(authorization string) error
}

// Defaults of Config's limits.
const (
	DefaultMaxBodyBytes = 10 << 20
	DefaultMaxInFlight  = 64
	DefaultMaxBatches   = 8
	DefaultMaxJobs      = 256
	DefaultJobTTL       = 24 * time.Hour
	// DefaultStatusPageBytes is how much of a job's documents one status
	// answer holds before it names the next, as Firecrawl pages them.
	DefaultStatusPageBytes = 10 << 20
)

// Config is the operator's side of the API.
type Config struct {
	// AllowLocal lets requests reach loopback: Firecrawl's API has no
	// allow_local of its own, so the operator's --allow-local decides for
	// every request.
	AllowLocal bool
	// Auth checks every request's bearer token; nil admits every request.
	Auth Authorizer
	// MaxBodyBytes bounds a request body (413 beyond it).
	MaxBodyBytes int64
	// MaxInFlight bounds the scrapes and maps served at once; one more is
	// answered 429 with Retry-After.
	MaxInFlight int
	// MaxBatches bounds the batch jobs this process runs at once, MaxJobs
	// the jobs the registry keeps (running or finished, until JobTTL after
	// they started), whichever gateway started them.
	MaxBatches int
	MaxJobs    int
	JobTTL     time.Duration
	// StatusPageBytes bounds the documents of one job status answer.
	StatusPageBytes int
	// WebhookSecret signs every webhook delivery (HMAC-SHA256); without
	// it, requests with a webhook are refused.
	WebhookSecret string
	// Own holds the process's listening addresses, which no webhook
	// reaches, as no fetch does.
	Own *netpolicy.Own
	// Host runs the json and summary formats and extract under host
	// mode's policy: as the actor the policy maps the request's token
	// to, else as Actor (host.DefaultActor when empty); nil refuses them.
	Host  Host
	Actor string
	// Crawls runs the crawls; nil runs them on an api.Server of the
	// Backend's own (when it is an api.Backend), which no gRPC API shares.
	Crawls Crawls
	// KeyValue is the JetStream the batch scrapes, crawls and extracts
	// are registered in (an *app.System's KeyValue: memory on the single
	// binary's embedded NATS, files in a cluster), opened on the first
	// job, so that every gateway sharing it answers for every job. nil
	// takes the Backend's own when it has one (an *app.System does).
	KeyValue KeyValueFunc
}

func (c *Config) defaults() {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxBatches <= 0 {
		c.MaxBatches = DefaultMaxBatches
	}
	if c.MaxJobs <= 0 {
		c.MaxJobs = DefaultMaxJobs
	}
	if c.JobTTL <= 0 {
		c.JobTTL = DefaultJobTTL
	}
	if c.Actor == "" {
		c.Actor = host.DefaultActor
	}
	if c.StatusPageBytes <= 0 {
		c.StatusPageBytes = DefaultStatusPageBytes
	}
}

// Server is the Firecrawl-compatible API over a Backend.
type Server struct {
	logger   *slog.Logger
	backend  Backend
	cfg      Config
	inFlight chan struct{}
	jobs     *jobs
	crawls   Crawls
	// ctx outlives requests: batch jobs run under it until Close.
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns the API over backend.
func New(logger *slog.Logger, backend Backend, cfg Config) *Server {
	cfg.defaults()
	ctx, cancel := context.WithCancel(context.Background())
	crawls := cfg.Crawls
	if b, ok := backend.(api.Backend); ok && crawls == nil {
		crawls = api.New(logger, b)
	}
	if b, ok := backend.(keyValuer); ok && cfg.KeyValue == nil {
		cfg.KeyValue = b.KeyValue
	}
	return &Server{
		logger: logger, backend: backend, cfg: cfg,
		inFlight: make(chan struct{}, cfg.MaxInFlight),
		jobs:     newJobs(cfg.KeyValue, cfg.MaxBatches, cfg.MaxJobs, cfg.JobTTL),
		crawls:   crawls,
		ctx:      ctx, cancel: cancel,
	}
}

// Close cancels the batch jobs still running and waits for them to end.
func (s *Server) Close() {
	s.cancel()
	s.jobs.wait()
}

// Handler routes Firecrawl's v2 endpoints, and its v1 endpoints as far as
// the SDKs' v1 clients use them.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, v := range []int{1, 2} {
		p := "/v" + strconv.Itoa(v)
		// An actor's token reaches the model work alone (scrape's json
		// and summary formats, extract): everything else is the API's.
		handle := func(pattern, what string, h http.HandlerFunc) {
			mux.HandleFunc(pattern, s.notForActors(what, h))
		}
		mux.HandleFunc("POST "+p+"/scrape", s.limited(func(w http.ResponseWriter, r *http.Request) { s.scrape(w, r, v) }))
		handle("POST "+p+"/batch/scrape", "batch scrape", func(w http.ResponseWriter, r *http.Request) { s.startBatch(w, r, v) })
		handle("GET "+p+"/batch/scrape/{id}", "batch scrape", s.statusOrWatch)
		handle("DELETE "+p+"/batch/scrape/{id}", "batch scrape", s.cancelBatch)
		handle("GET "+p+"/batch/scrape/{id}/errors", "batch scrape", s.batchErrors)
		if v == 1 {
			// The v1 client asks for a batch's errors with DELETE.
			handle("DELETE "+p+"/batch/scrape/{id}/errors", "batch scrape", s.batchErrors)
		}
		handle("POST "+p+"/map", "map", s.limited(func(w http.ResponseWriter, r *http.Request) { s.mapSite(w, r, v) }))
		mux.HandleFunc("POST "+p+"/search", func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, &apiError{status: http.StatusBadRequest, code: codeUnsupported, msg: "search: not supported: distill does not search the web (scrape or map the sites you know instead)"})
		})
		// A crawl is a job as a batch is, and answered alike; the v1
		// client polls a batch scrape at /v1/crawl/{id} too, and watches
		// either there over a WebSocket, as the v2 client does at its own
		// status paths.
		handle("POST "+p+"/crawl", "crawl", func(w http.ResponseWriter, r *http.Request) { s.startCrawl(w, r, v) })
		handle("GET "+p+"/crawl/{id}", "crawl", s.statusOrWatch)
		handle("GET "+p+"/crawl/active", "crawl", s.activeCrawls)
		mux.HandleFunc("POST "+p+"/crawl/params-preview", func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, notSupported("crawl params-preview", "distill does not turn a prompt into crawl options; set them"))
		})
		handle("DELETE "+p+"/crawl/{id}", "crawl", s.cancelBatch)
		handle("GET "+p+"/crawl/{id}/errors", "crawl", s.batchErrors)
		if v == 1 {
			handle("DELETE "+p+"/crawl/{id}/errors", "crawl", s.batchErrors)
		}
		mux.HandleFunc("POST "+p+"/extract", func(w http.ResponseWriter, r *http.Request) { s.startExtract(w, r, v) })
		mux.HandleFunc("GET "+p+"/extract/{id}", s.extractStatus)
	}
	// Firecrawl's endpoints that the SDKs call and distill has no
	// counterpart of are named as such, rather than answered 404.
	for pattern, why := range map[string][2]string{
		"/v1/team/":                       {"team usage", "distill has no teams, credits or token usage to report"},
		"/v2/team/":                       {"team usage", "distill has no teams, credits or token usage to report"},
		"/v2/concurrency-check":           {"concurrency-check", "distill has no teams, credits or token usage to report"},
		"/v1/deep-research":               {"deep-research", "distill does not search the web"},
		"/v2/search/":                     {"search", "distill does not search the web"},
		"/v2/agent":                       {"agent", "distill runs no agent of its own; host mode's act is for the host's agent"},
		"/v2/agent/":                      {"agent", "distill runs no agent of its own; host mode's act is for the host's agent"},
		"/v1/llmstxt":                     {"llmstxt", ""},
		"/v1/llmstxt/":                    {"llmstxt", ""},
		"/v2/browser":                     {"browser", "distill's browsing sessions are DistillService's Session calls"},
		"/v2/browser/":                    {"browser", "distill's browsing sessions are DistillService's Session calls"},
		"POST /v2/scrape/{id}/interact":   {"scrape interact", "distill's browsing sessions are DistillService's Session calls"},
		"DELETE /v2/scrape/{id}/interact": {"scrape interact", "distill's browsing sessions are DistillService's Session calls"},
		"/v2/parse":                       {"parse", "distill reads documents by their URL"},
		"/v2/monitor":                     {"monitor", ""},
		"/v2/monitor/":                    {"monitor", ""},
		"/v2/feedback":                    {"feedback", ""},
	} {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, _ *http.Request) {
			writeError(w, notSupported(why[0], why[1]))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("Not Found: no endpoint %s %s", r.Method, r.URL.Path)})
	})
	return s.guard(mux)
}

// guard checks the token, names the caller and bounds the body of every
// request.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.identify(r)
		if err != nil && isWebSocket(r) && err.status == http.StatusUnauthorized {
			refuseWatch(w, r, err.msg)
			return
		}
		if err != nil {
			writeError(w, err)
			return
		}
		r = r.WithContext(withCaller(r.Context(), c))
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// limited answers 429 when MaxInFlight requests are already being served,
// rather than queueing work the client may have given up on.
func (s *Server) limited(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case s.inFlight <- struct{}{}:
			defer func() { <-s.inFlight }()
			h(w, r)
		default:
			writeError(w, &apiError{status: http.StatusTooManyRequests, retryAfter: time.Second,
				msg: fmt.Sprintf("Rate limit exceeded: this server serves %d scrapes and maps at once; retry after 1 second", s.cfg.MaxInFlight)})
		}
	}
}

// decode reads a JSON body into v, refusing keys v does not know as
// Firecrawl's strict schemas do, and a body over the limit.
func decode(r *http.Request, v any) *apiError {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &apiError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("Payload Too Large: the request body exceeds %d bytes", mbe.Limit)}
		}
		return badRequest("Bad Request: %s", jsonMessage(err))
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
