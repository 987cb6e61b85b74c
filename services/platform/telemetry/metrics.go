package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
)

// The metric attributes' values, closed sets so that series stay few.
const (
	// CacheHit and CacheMiss are the results of a cache lookup.
	CacheHit  = "hit"
	CacheMiss = "miss"

	// Why a fetch attempt is retried.
	RetryTooManyRequests = "too_many_requests"
	RetryServerError     = "server_error"
	RetryTransport       = "transport"

	// Which per-host limit made a request wait.
	LimitConcurrency = "concurrency"
	LimitRate        = "rate"

	// Outcomes of a job that was not answered: handed back to the queue
	// for another attempt, or left there by a worker shutting down.
	JobReleased    = "released"
	JobInterrupted = "interrupted"
)

// secondsBuckets spans a cache hit to a render that uses its whole budget.
var secondsBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// instruments are distill's metrics, made from the meter provider current
// when they were made.
type instruments struct {
	meter          metric.Meter
	requests       metric.Int64Counter
	fetchDuration  metric.Float64Histogram
	cacheLookups   metric.Int64Counter
	retries        metric.Int64Counter
	hostWaits      metric.Int64Counter
	hostWaitTime   metric.Float64Histogram
	renders        metric.Int64Counter
	renderDuration metric.Float64Histogram
	fallbacks      metric.Int64Counter
	jobs           metric.Int64Counter
}

// OpenTelemetry's providers are process-wide by design; these follow them.
// Setup replaces both, so a test that calls Setup again starts afresh.
var (
	current atomic.Pointer[instruments]
	scrape  atomic.Pointer[http.Handler]
)

// record returns the instruments, made once from the global meter.
func record() *instruments {
	if in := current.Load(); in != nil {
		return in
	}
	current.CompareAndSwap(nil, newInstruments(otel.GetMeterProvider().Meter(scope)))
	return current.Load()
}

func newInstruments(m metric.Meter) *instruments {
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	seconds := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(secondsBuckets...))
		errs = append(errs, err)
		return h
	}
	in := &instruments{
		meter:          m,
		requests:       counter("distill.requests", "{request}", "Calls of distill's entry points, by service, method and outcome."),
		fetchDuration:  seconds("distill.fetch.duration", "Time to fetch a page, redirects and retries included, by outcome and source."),
		cacheLookups:   counter("distill.cache.lookups", "{lookup}", "Fetch cache lookups, by result."),
		retries:        counter("distill.fetch.retries", "{retry}", "Fetch attempts retried, by reason."),
		hostWaits:      counter("distill.fetch.host.waits", "{wait}", "Requests held back by a per-host limit, by limit."),
		hostWaitTime:   seconds("distill.fetch.host.wait.duration", "Time requests were held back by a per-host limit, by limit."),
		renders:        counter("distill.renders", "{render}", "Headless renders, by outcome."),
		renderDuration: seconds("distill.render.duration", "Time to render a page headless, by outcome."),
		fallbacks:      counter("distill.pipeline.fallbacks", "{render}", "Renders the pipeline asked for, by reason and whether the render was kept."),
		jobs:           counter("distill.jobs.processed", "{job}", "Batch jobs a worker took, by outcome."),
	}
	if err := errors.Join(errs...); err != nil {
		otel.Handle(err)
	}
	return in
}

// setupMetrics installs a meter provider that exports to a registry of its
// own, which MetricsHandler serves, and remakes the instruments from it.
func setupMetrics(res *resource.Resource) (shutdown func(context.Context) error, err error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
	)
	if err != nil {
		return nil, err
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(exp))
	otel.SetMeterProvider(mp)
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	scrape.Store(&h)
	current.Store(newInstruments(mp.Meter(scope)))
	return mp.Shutdown, nil
}

// MetricsHandler serves the process's metrics in the Prometheus format:
// distill.* as distill_*, the gRPC metrics of otelgrpc, and the Go
// runtime's. Before Setup it answers 503.
func MetricsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := scrape.Load()
		if h == nil {
			http.Error(w, "telemetry is not set up", http.StatusServiceUnavailable)
			return
		}
		(*h).ServeHTTP(w, r)
	})
}

// ServeMetrics serves MetricsHandler at /metrics on addr (host:port) until
// ctx ends.
func ServeMetrics(ctx context.Context, addr string, logger *slog.Logger) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	return serveMetrics(ctx, lis, logger)
}

func serveMetrics(ctx context.Context, lis net.Listener, logger *slog.Logger) error {
	addr := lis.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("metrics serving", "addr", lis.Addr().String())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics: serve %s: %w", addr, err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(stop)
	<-errc
	return nil
}

// CountRequest counts one call of a distill entry point: service is
// fetcher, extractor, renderer or pipeline, method the call.
func CountRequest(ctx context.Context, service, method string, err error) {
	record().requests.Add(ctx, 1, metric.WithAttributes(
		Service.String(service), Method.String(method), Outcome.String(OutcomeOf(err))))
}

// RecordFetch records how long a fetch took and whether it came from the
// cache.
func RecordFetch(ctx context.Context, elapsed time.Duration, fromCache bool, err error) {
	source := "network"
	if fromCache {
		source = "cache"
	}
	record().fetchDuration.Record(ctx, elapsed.Seconds(), metric.WithAttributes(
		Outcome.String(OutcomeOf(err)), FetchSource.String(source)))
}

// CountCacheLookup counts a fetch cache lookup: CacheHit or CacheMiss.
func CountCacheLookup(ctx context.Context, result string) {
	record().cacheLookups.Add(ctx, 1, metric.WithAttributes(CacheResult.String(result)))
}

// CountRetry counts a fetch attempt about to be retried for reason, one of
// the Retry constants.
func CountRetry(ctx context.Context, reason string) {
	record().retries.Add(ctx, 1, metric.WithAttributes(RetryReason.String(reason)))
}

// RecordHostWait records a request held back by a per-host limit,
// LimitConcurrency or LimitRate, for waited.
func RecordHostWait(ctx context.Context, limit string, waited time.Duration) {
	in := record()
	attrs := metric.WithAttributes(HostLimit.String(limit))
	in.hostWaits.Add(ctx, 1, attrs)
	in.hostWaitTime.Record(ctx, waited.Seconds(), attrs)
}

// RecordRender records one headless render.
func RecordRender(ctx context.Context, elapsed time.Duration, err error) {
	in := record()
	attrs := metric.WithAttributes(Outcome.String(OutcomeOf(err)))
	in.renders.Add(ctx, 1, attrs)
	in.renderDuration.Record(ctx, elapsed.Seconds(), attrs)
}

// CountFallback counts a render the pipeline asked for, by reason, and
// whether its result was kept.
func CountFallback(ctx context.Context, reason string, kept bool) {
	record().fallbacks.Add(ctx, 1, metric.WithAttributes(FallbackReason.String(reason), FallbackKept.Bool(kept)))
}

// CountJob counts a job a worker took: answered (OutcomeOf the page's
// error), JobReleased or JobInterrupted.
func CountJob(ctx context.Context, outcome string) {
	record().jobs.Add(ctx, 1, metric.WithAttributes(Outcome.String(outcome)))
}

// ObserveJobsPending reports the depth of the batch job queue as the gauge
// distill.jobs.pending, asking pending at each collection: jobs queued
// for a worker, and jobs a worker holds. stop unregisters it.
func ObserveJobsPending(pending func(context.Context) (queued, held int64, err error)) (stop func() error, err error) {
	m := record().meter
	gauge, err := m.Int64ObservableGauge("distill.jobs.pending", metric.WithUnit("{job}"),
		metric.WithDescription("Batch jobs not yet answered: queued for a worker, or held by one."))
	if err != nil {
		return nil, err
	}
	queuedAttrs := metric.WithAttributes(JobState.String("queued"))
	heldAttrs := metric.WithAttributes(JobState.String("held"))
	reg, err := m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		queued, held, err := pending(ctx)
		if err != nil {
			return fmt.Errorf("distill.jobs.pending: %w", err)
		}
		o.ObserveInt64(gauge, queued, queuedAttrs)
		o.ObserveInt64(gauge, held, heldAttrs)
		return nil
	}, gauge)
	if err != nil {
		return nil, err
	}
	return reg.Unregister, nil
}
