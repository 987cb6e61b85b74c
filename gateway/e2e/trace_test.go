package e2e

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"distill.dev/services/platform/telemetry/telemetrytest"
)

// One batch through the cluster is one trace: the gateway, NATS (the trace
// context in the job's headers), the fetchers and the extractor, each
// process exporting its own spans over OTLP.
func TestBatchIsOneTraceAcrossProcesses(t *testing.T) {
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

	// Every process serves its metrics for Prometheus.
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
