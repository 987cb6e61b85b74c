package jobs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// These tests set OpenTelemetry's process-wide providers: none runs in
// parallel.

// remoteExtractor is the extractor over gRPC, as a separate process serves
// it.
type remoteExtractor struct {
	c internalv1.ExtractorServiceClient
}

func (r remoteExtractor) Extract(ctx context.Context, req *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	return r.c.Extract(ctx, req)
}

// noRenderer fails: the batch's options never ask for a render.
type noRenderer struct{}

func (noRenderer) Render(context.Context, *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	return nil, fmt.Errorf("no renderer in this test")
}

// serveExtractor serves the real extractor on a loopback port, traced, and
// returns a traced client of it.
func serveExtractor(t *testing.T) pipeline.Extractor {
	t.Helper()
	conn := telemetrytest.GRPC(t, func(s *grpc.Server) {
		internalv1.RegisterExtractorServiceServer(s, extract.New(quiet))
	})
	return remoteExtractor{internalv1.NewExtractorServiceClient(conn)}
}

func TestBatchIsOneTrace(t *testing.T) {
	rec := telemetrytest.Record(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><article><h1>Page %s</h1><p>%s</p></article></body></html>",
			r.URL.Path, r.URL.Path, strings.Repeat("Plenty of words to read on this page. ", 40))
	}))
	defer site.Close()
	f := fetch.New(quiet)
	defer f.Close()
	proc := pipeline.New(quiet, f, serveExtractor(t), noRenderer{})

	// The dispatcher and the worker have connections of their own, as
	// the gateway and a fetcher process do.
	s := startServer(t)
	stopWorker := startWorker(t, connect(t, s), proc, 4)
	const n = 3
	urls := make([]string, n)
	for i := range urls {
		// The query stands for a secret no span may carry.
		urls[i] = fmt.Sprintf("%s/page/%d?token=secret", site.URL, i)
	}
	opts := &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF}

	ctx, root := telemetry.Start(context.Background(), "test.batch")
	got, err := collect(t, ctx, NewDispatcher(quiet, connect(t, s)), urls, opts)
	root.End()
	// A worker ends its job's span after the ack, which may come after the
	// dispatcher has the result: stopping waits for the jobs in hand.
	stopWorker()
	if err != nil {
		t.Fatal(err)
	}
	for i := range urls {
		if e := got[int32(i)].GetError(); e != nil {
			t.Fatalf("result %d: %v", i, e)
		}
	}

	// The extractor's server spans may end after its answers arrived.
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	spans, _ := rec.Wait(wait, func(s []telemetrytest.Span) bool {
		return len(telemetrytest.Named(s, "distill.internal.v1.ExtractorService/Extract")) >= 2*n
	})
	if err := telemetrytest.Connected(spans); err != nil {
		t.Fatal(err)
	}
	if r, _ := spanByID(spans, root.SpanContext().SpanID().String()); r.Name != "test.batch" {
		t.Fatalf("the trace's root is not the test's span: %v", spans)
	}
	for _, name := range []string{"distill.dispatch.job", "distill.job", "distill.pipeline", "distill.fetch", "distill.extract", "distill.internal.v1.ExtractorService/Extract"} {
		if got := len(telemetrytest.Named(spans, name)); got < n {
			t.Errorf("%d spans named %s, want one per URL (%d)", got, name, n)
		}
	}
	// Every extraction, on the far side of gRPC, descends from its URL's
	// job, which descends from the dispatcher's span for that URL.
	for _, ex := range telemetrytest.Named(spans, "distill.extract") {
		chain := ancestors(spans, ex)
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
	for _, leak := range telemetrytest.Carrying(spans, "secret") {
		t.Errorf("a span carries the URL's query: %s", leak)
	}
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

func TestQueueDepthAndProcessedJobs(t *testing.T) {
	telemetrytest.Setup(t, "fetcher")
	s := startServer(t)
	js := connect(t, s)
	stop, err := ObserveQueueDepth(js)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop() }()

	// No worker yet: the batch's jobs wait in the queue.
	urls := urlsN(3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := collect(t, ctx, NewDispatcher(quiet, connect(t, s)), urls, nil)
		done <- err
	}()
	waitForMetric(t, "distill_jobs_pending", []string{"distill_jobs_state", "queued"}, 3)

	stopWorker := startWorker(t, js, processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		return page(rawURL), nil
	}), 2)
	defer stopWorker()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("batch not answered")
	}
	waitForMetric(t, "distill_jobs_processed_total", []string{"distill_outcome", "ok"}, 3)
	waitForMetric(t, "distill_jobs_pending", []string{"distill_jobs_state", "queued"}, 0)
	waitForMetric(t, "distill_jobs_pending", []string{"distill_jobs_state", "held"}, 0)
}

// waitForMetric scrapes until the series has the value: jobs and acks
// settle a moment after the batch's answer.
func waitForMetric(t *testing.T, family string, labels []string, want float64) {
	t.Helper()
	var got float64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		m, err := telemetrytest.Scrape(telemetry.MetricsHandler())
		if err != nil {
			t.Fatal(err)
		}
		if got, _ = m.Value(family, labels...); got == want {
			return
		}
	}
	t.Fatalf("%s%v = %v, want %v", family, labels, got, want)
}
