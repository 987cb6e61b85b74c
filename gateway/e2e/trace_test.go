package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// One batch is one trace: from the caller's span through the gateway,
// NATS (the trace context in each job's headers), the fetchers' workers
// and the extractor on the far side of gRPC, and back (the dispatcher's
// span for a URL links the worker's span for its job).
func TestBatchIsOneTrace(t *testing.T) {
	// Not parallel: the recorder is the process's tracer provider, so it
	// would record the spans of every test running beside this one.
	rec := telemetrytest.Record(t)
	c := startInProcess(t, inProcessOpts{Fetchers: 2})
	site := newPages(t, 0)
	const n = 6
	urls := make([]string, n)
	for i := range urls {
		// The query stands for a secret no span may carry.
		urls[i] = fmt.Sprintf("%s/p/%d?token=secret", site.URL, i)
	}

	ctx, root := telemetry.Start(context.Background(), "test.batch")
	got := runBatchIn(ctx, t, c.client(0), urls, local, nil)
	root.End()
	if got.err != nil || len(got.results) != n || len(got.failed()) > 0 {
		t.Fatalf("batch: %d results, failed %v, err %v", len(got.results), got.failed(), got.err)
	}

	// Spans per URL, and the batch's own.
	want := map[string]int{"distill.dispatch": 1}
	for _, name := range []string{"distill.dispatch.job", "distill.job", "distill.pipeline", "distill.fetch", "distill.extract"} {
		want[name] = n
	}
	// The client's and the server's: the gateway's server span for the
	// batch ends after its trailer is sent, so the test's stream may see
	// the end before that span does.
	want["distill.internal.v1.ExtractorService/Extract"] = 2 * n
	want["distill.v1.DistillService/FetchBatch"] = 2

	// A worker ends its job's span after the ack, and a gRPC server its
	// span after the answer is sent: both may end after the batch's
	// results arrived.
	traceID := root.SpanContext().TraceID().String()
	var trace []telemetrytest.Span
	wait, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := rec.Wait(wait, func(spans []telemetrytest.Span) bool {
		trace = trace[:0]
		for _, s := range spans {
			if s.TraceID == traceID {
				trace = append(trace, s)
			}
		}
		for name, count := range want {
			if len(telemetrytest.Named(trace, name)) < count {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("the batch's trace lacks spans: %v", err)
	}
	if err := telemetrytest.Connected(trace); err != nil {
		t.Fatal(err)
	}
	if r, _ := spanByID(trace, root.SpanContext().SpanID().String()); r.Name != "test.batch" {
		t.Fatalf("the trace's root is not the test's span: %v", trace)
	}
	for _, name := range []string{"distill.job", "distill.extract"} {
		if got := len(telemetrytest.Named(trace, name)); got != n {
			t.Errorf("%d spans named %s in the trace, want one per URL (%d)", got, name, n)
		}
	}
	// Every extraction, on the far side of gRPC, descends from its URL's
	// job, which descends from the dispatcher's span for that URL.
	for _, ex := range telemetrytest.Named(trace, "distill.extract") {
		chain := ancestors(trace, ex)
		job, dispatched := firstNamed(chain, "distill.job"), firstNamed(chain, "distill.dispatch.job")
		if job == nil || dispatched == nil {
			t.Errorf("extraction %v descends from %v, want a job and its dispatch", ex, chain)
			continue
		}
		if job.Attributes["distill.batch.index"] != dispatched.Attributes["distill.batch.index"] {
			t.Errorf("job %v is under the dispatch of another URL %v", job, dispatched)
		}
		// The result carried the worker's context back.
		if len(dispatched.Links) != 1 || dispatched.Links[0] != job.SpanID {
			t.Errorf("dispatch span links %v, want the worker's job span %s", dispatched.Links, job.SpanID)
		}
	}
	for _, leak := range telemetrytest.Carrying(rec.Spans(), "secret") {
		t.Errorf("a span carries the URL's query: %s", leak)
	}
}

// Each process exports its own spans over OTLP, under its own service
// name, and serves its metrics for Prometheus: how one batch's trace and
// the metrics of a cluster come together when its parts are processes.
func TestEveryProcessExportsItsSpansAndMetrics(t *testing.T) {
	t.Parallel()
	rcv, err := telemetrytest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	c := startCluster(t, clusterOpts{Fetchers: 2, Env: rcv.Env(), Metrics: true})
	site := newPages(t, 0)

	got := runBatch(t, c.client(0), site.urls(6), local, nil)
	if got.err != nil || len(got.results) != 6 || len(got.failed()) > 0 {
		t.Fatalf("batch: %d results, failed %v, err %v", len(got.results), got.failed(), got.err)
	}

	// The batch's trace is the one its dispatch span is in; wait until
	// every process has sent its part.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var trace []telemetrytest.Span
	_, err = rcv.Wait(ctx, func(spans []telemetrytest.Span) bool {
		dispatch := telemetrytest.Named(spans, "distill.dispatch")
		if len(dispatch) == 0 {
			return false
		}
		trace = trace[:0]
		services := map[string]bool{}
		for _, s := range spans {
			if s.TraceID == dispatch[0].TraceID {
				trace = append(trace, s)
				services[s.Service] = true
			}
		}
		return services["gateway"] && services["fetcher"] && services["extractor"] &&
			len(telemetrytest.Named(trace, "distill.extract")) == 6 && telemetrytest.Connected(trace) == nil
	})
	if err != nil {
		services := map[string]int{}
		for _, s := range trace {
			services[s.Service]++
		}
		t.Fatalf("no connected trace across the processes: %v (spans by service %v; connected: %v)", err, services, telemetrytest.Connected(trace))
	}
	jobs := telemetrytest.Named(trace, "distill.job")
	if len(jobs) != 6 {
		t.Errorf("%d job spans in the trace, want 6", len(jobs))
	}

	want := map[string]string{
		"distill":   "rpc_server_call_duration_seconds",
		"fetcher":   "distill_jobs_processed_total",
		"extractor": `distill_requests_total{distill_method="Extract"`,
		"renderer":  "go_goroutines",
	}
	for _, p := range c.Services() {
		body := scrape(t, "http://"+p.MetricsAddr+"/metrics")
		if !strings.Contains(body, want[p.Name]) {
			t.Errorf("%s's metrics lack %s", p.Name, want[p.Name])
		}
	}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("scrape %s: %d %v", url, res.StatusCode, err)
	}
	return string(b)
}

func spanByID(spans []telemetrytest.Span, id string) (telemetrytest.Span, bool) {
	for _, s := range spans {
		if s.SpanID == id {
			return s, true
		}
	}
	return telemetrytest.Span{}, false
}

// ancestors lists s's parent, its parent, and so on, nearest first.
func ancestors(spans []telemetrytest.Span, s telemetrytest.Span) []telemetrytest.Span {
	var chain []telemetrytest.Span
	for {
		p, ok := spanByID(spans, s.ParentSpanID)
		if !ok {
			return chain
		}
		chain = append(chain, p)
		s = p
	}
}

func firstNamed(spans []telemetrytest.Span, name string) *telemetrytest.Span {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}
