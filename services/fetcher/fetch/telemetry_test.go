package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/platform/telemetry/telemetrytest"
)

// These tests set OpenTelemetry's process-wide providers, so they do not
// run in parallel: Go runs them before the parallel tests resume.

func TestFetchMetrics(t *testing.T) {
	telemetrytest.Setup(t, "fetcher")

	// A page fetched twice through the cache: a miss, then a hit.
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	withCache, _, _ := cached(t)
	mustGet(t, withCache, ts.URL+"/page", local())
	if !mustGet(t, withCache, ts.URL+"/page", local()).GetFromCache() {
		t.Fatal("second fetch missed the cache")
	}

	// A 503 retried once.
	flaky := httptest.NewServer(&statusSequence{statuses: []int{503}})
	defer flaky.Close()
	mustGet(t, newFetcher(t), flaky.URL, local())

	// Two fetches at 20 requests/s: the second waits 50ms for its token.
	rated := local()
	rated.RateLimit = 20
	paced := newFetcher(t, WithClock(newFrozenClock()))
	mustGet(t, paced, ts.URL, rated)
	mustGet(t, paced, ts.URL, rated)

	// Two fetches at once to a host that takes one at a time: one waits
	// for the other's slot.
	slow, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		html(w, 200, page)
	})
	single := local()
	single.PerHostConcurrency = ptr(int32(1))
	f := newFetcher(t)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() { mustGet(t, f, slow.URL, single) })
	}
	wg.Wait()

	m, err := telemetrytest.Scrape(telemetry.MetricsHandler())
	if err != nil {
		t.Fatal(err)
	}
	const fetches = 7
	checks := []struct {
		family string
		labels []string
		want   float64
	}{
		{"distill_requests_total", []string{"distill_service", "fetcher", "distill_method", "Fetch", "distill_outcome", "ok"}, fetches},
		{"distill_fetch_duration_seconds", nil, fetches},
		{"distill_fetch_duration_seconds", []string{"distill_fetch_source", "cache"}, 1},
		{"distill_cache_lookups_total", []string{"distill_cache_result", "hit"}, 1},
		{"distill_cache_lookups_total", []string{"distill_cache_result", "miss"}, 1},
		{"distill_fetch_retries_total", []string{"distill_retry_reason", "server_error"}, 1},
		{"distill_fetch_host_waits_total", []string{"distill_host_limit", "rate"}, 1},
		{"distill_fetch_host_waits_total", []string{"distill_host_limit", "concurrency"}, 1},
	}
	for _, c := range checks {
		if got, _ := m.Value(c.family, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	if got := m.Sum("distill_fetch_host_wait_duration_seconds", "distill_host_limit", "rate"); got < 0.049 || got > 0.051 {
		t.Errorf("rate wait %vs, want the 50ms between two requests at 20/s", got)
	}
	// The one that waited for a slot waited about as long as the other
	// held it.
	if got := m.Sum("distill_fetch_host_wait_duration_seconds", "distill_host_limit", "concurrency"); got < 0.05 {
		t.Errorf("slot wait %vs, want about the 100ms the first request held it", got)
	}
	if got, _ := m.Value("distill_fetch_duration_seconds", "distill_outcome", "ok"); got != fetches {
		t.Errorf("%v fetches timed as ok, want %d", got, fetches)
	}
}

func TestFetchSpans(t *testing.T) {
	rec := telemetrytest.Record(t)
	seq := &statusSequence{statuses: []int{503}}
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, "/page?token=secret", http.StatusFound)
			return
		}
		seq.ServeHTTP(w, r)
	})
	ctx, root := telemetry.Start(context.Background(), "test")
	if _, err := newFetcher(t).Fetch(ctx, &internalv1.FetcherServiceFetchRequest{Url: ts.URL + "/start?token=secret", Options: local()}); err != nil {
		t.Fatal(err)
	}
	root.End()

	spans := rec.Spans()
	if err := telemetrytest.Connected(spans); err != nil {
		t.Fatal(err)
	}
	fetches := telemetrytest.Named(spans, "distill.fetch")
	if len(fetches) != 1 {
		t.Fatalf("%d distill.fetch spans, want 1: %v", len(fetches), spans)
	}
	// One span per attempt, each under the fetch: the redirect, the 503,
	// the 200.
	var statuses []string
	for _, a := range telemetrytest.Named(spans, "distill.fetch.attempt") {
		if a.ParentSpanID != fetches[0].SpanID {
			t.Errorf("attempt %v is not under the fetch", a)
		}
		statuses = append(statuses, a.Attributes["http.response.status_code"])
	}
	if want := []string{"302", "503", "200"}; !slices.Equal(statuses, want) {
		t.Errorf("attempt statuses %v, want %v", statuses, want)
	}
	if got, want := fetches[0].Attributes["url.full"], ts.URL+"/start"; got != want {
		t.Errorf("url.full = %q, want %q", got, want)
	}
	for _, leak := range telemetrytest.Carrying(spans, "secret") {
		t.Errorf("a span carries the URL's query: %s", leak)
	}
}
