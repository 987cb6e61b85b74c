package jobs

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

func page(rawURL string) *distillv1.Distilled {
	return &distillv1.Distilled{FinalUrl: rawURL, Markdown: "# " + rawURL}
}

func TestJobThatKeepsFailingIsReportedAsItsURLsError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail func(rawURL string) (*distillv1.Distilled, error)
	}{
		{"released", func(rawURL string) (*distillv1.Distilled, error) {
			return nil, fmt.Errorf("renderer gone while distilling %s: %w", rawURL, ErrRelease)
		}},
		{"panicked", func(rawURL string) (*distillv1.Distilled, error) {
			panic("extractor bug on " + rawURL)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			js := startJetStream(t)
			urls := urlsN(10)
			bad := urls[3]
			var mu sync.Mutex
			attempts := 0
			proc := processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
				if rawURL != bad {
					return page(rawURL), nil
				}
				mu.Lock()
				attempts++
				mu.Unlock()
				return tt.fail(rawURL)
			})
			const maxDeliver = 4
			stop := startWorker(t, js, proc, 4, WithMaxDeliver(maxDeliver), WithRetryDelay(10*time.Millisecond))
			defer stop()

			// Far shorter than the dispatcher's own timeout for an
			// unanswered URL, which must not be what answers it.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := collect(t, ctx, NewDispatcher(quiet, js), urls, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, u := range urls {
				r := got[int32(i)]
				if u != bad {
					if r.GetResult().GetFinalUrl() != u {
						t.Errorf("result %d = %v, want page %s", i, r, u)
					}
					continue
				}
				e := r.GetError()
				if e.GetCode() != failure.Internal {
					t.Fatalf("result for %s = %v, want an Internal error", u, r)
				}
				if !strings.Contains(e.GetMessage(), u) || !strings.Contains(e.GetMessage(), fmt.Sprintf("%d deliveries", maxDeliver)) {
					t.Errorf("error message %q names neither the URL nor the %d deliveries", e.GetMessage(), maxDeliver)
				}
			}
			// A work-queue stream keeps a given-up job unless it is dropped.
			info, err := js.Stream(context.Background(), JobsStream)
			if err != nil {
				t.Fatal(err)
			}
			if n := info.CachedInfo().State.Msgs; n != 0 {
				t.Errorf("jobs stream holds %d messages after the batch, want 0", n)
			}
			mu.Lock()
			defer mu.Unlock()
			if attempts != maxDeliver {
				t.Errorf("%s was attempted %d times, want %d", bad, attempts, maxDeliver)
			}
		})
	}
}

func TestWorkerKilledMidBatchLosesNoURL(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const ackWait = 500 * time.Millisecond

	// The doomed worker takes jobs and never finishes them; its connection
	// is then closed without draining, as if its process were killed.
	doomedJS := connect(t, srv)
	var mu sync.Mutex
	held := map[string]bool{}
	holding := make(chan struct{}, 100)
	doomedCtx, stopDoomed := context.WithCancel(context.Background())
	defer stopDoomed()
	stuck := processFunc(func(ctx context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		mu.Lock()
		held[rawURL] = true
		mu.Unlock()
		holding <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	doomedEnded := make(chan error, 1)
	go func() {
		doomedEnded <- NewWorker(quiet, doomedJS, stuck, 3, WithAckWait(ackWait)).Run(doomedCtx)
	}()

	answeredBy := map[string]int{}
	healthy := processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		mu.Lock()
		answeredBy[rawURL]++
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		return page(rawURL), nil
	})
	stopHealthy := startWorker(t, connect(t, srv), healthy, 3, WithAckWait(ackWait))
	defer stopHealthy()

	urls := urlsN(30)
	concurrency := int32(10)
	type outcome struct {
		got map[int32]*internalv1.FetchJobResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		got, err := collect(t, context.Background(), NewDispatcher(quiet, connect(t, srv)), urls, &distillv1.FetchOptions{Concurrency: &concurrency})
		done <- outcome{got, err}
	}()

	select {
	case <-holding:
	case <-time.After(10 * time.Second):
		t.Fatal("the doomed worker never took a job")
	}
	doomedJS.Conn().Close()
	stopDoomed()
	select {
	case <-doomedEnded:
	case <-time.After(5 * time.Second):
		t.Error("worker whose connection was cut did not stop")
	}

	var o outcome
	select {
	case o = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("batch did not complete after the killed worker's jobs were redelivered")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(o.got) != len(urls) {
		t.Fatalf("got %d results, want %d", len(o.got), len(urls))
	}
	for i, u := range urls {
		if got := o.got[int32(i)].GetResult().GetFinalUrl(); got != u {
			t.Errorf("result %d = %v, want page %s", i, o.got[int32(i)], u)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(held) == 0 {
		t.Fatal("the killed worker held no job: the test proved nothing")
	}
	for u := range held {
		if answeredBy[u] != 1 {
			t.Errorf("%s, held by the killed worker, was distilled %d times by the survivor, want 1", u, answeredBy[u])
		}
	}
}

func TestWorkSpreadsOverSeveralWorkers(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	const workers = 3
	var mu sync.Mutex
	perWorker := make([]int, workers)
	perURL := map[string]int{}
	for w := range workers {
		proc := processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
			mu.Lock()
			perWorker[w]++
			perURL[rawURL]++
			mu.Unlock()
			time.Sleep(time.Millisecond)
			return page(rawURL), nil
		})
		stop := startWorker(t, connect(t, srv), proc, 8)
		defer stop()
	}

	urls := urlsN(200)
	concurrency := int32(24)
	got, err := collect(t, context.Background(), NewDispatcher(quiet, connect(t, srv)), urls, &distillv1.FetchOptions{Concurrency: &concurrency})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(urls) {
		t.Fatalf("got %d results, want %d", len(got), len(urls))
	}
	for i, u := range urls {
		if r := got[int32(i)]; r.GetResult().GetFinalUrl() != u {
			t.Errorf("result %d = %v, want page %s", i, r, u)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range urls {
		if perURL[u] != 1 {
			t.Errorf("%s distilled %d times, want once", u, perURL[u])
		}
	}
	busy := 0
	for _, n := range perWorker {
		if n > 0 {
			busy++
		}
	}
	if busy < 2 {
		t.Errorf("jobs per worker = %v: the work was not spread", perWorker)
	}
}
