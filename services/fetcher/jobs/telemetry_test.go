package jobs

import (
	"context"
	"testing"
	"time"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// A batch's trace, from the dispatcher through NATS to a worker and the
// extractor across gRPC, is checked end to end by gateway/e2e's
// TestBatchIsOneTrace: the fetcher's tests need no other service's module.

// TestQueueDepthAndProcessedJobs sets OpenTelemetry's process-wide
// providers: it does not run in parallel.
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
