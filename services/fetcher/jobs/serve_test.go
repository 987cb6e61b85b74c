package jobs

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// A pipeline whose stages are remote fails with Unavailable while one of
// them is away: with ReleaseUnavailable the job goes back to the queue and
// is answered by a later attempt; without it, that failure is the answer.
func TestServeReleasesJobsWhileAServiceIsAway(t *testing.T) {
	for _, release := range []bool{true, false} {
		t.Run(map[bool]string{true: "released", false: "answered"}[release], func(t *testing.T) {
			t.Parallel()
			s := startServer(t)
			var mu sync.Mutex
			attempts := map[string]int{}
			proc := processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
				mu.Lock()
				defer mu.Unlock()
				attempts[rawURL]++
				if attempts[rawURL] == 1 {
					return nil, failure.New(failure.Unavailable, "extractor at 127.0.0.1:1 is unavailable")
				}
				return page(rawURL), nil
			})
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() {
				served <- Serve(ctx, quiet, connect(t, s), proc, ServeConfig{Workers: 2, Streams: StreamConfig{Memory: true}, ReleaseUnavailable: release})
			}()
			defer func() {
				cancel()
				if err := <-served; err != nil {
					t.Errorf("Serve: %v", err)
				}
			}()

			urls := urlsN(2)
			got, err := collect(t, context.Background(), NewDispatcher(quiet, connect(t, s)), urls, nil)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, u := range urls {
				r := got[int32(i)]
				switch {
				case release && (r.GetError() != nil || attempts[u] != 2):
					t.Errorf("%s: %v after %d attempts, want a page after 2", u, r.GetError(), attempts[u])
				case !release && (r.GetError().GetCode() != failure.Unavailable || attempts[u] != 1):
					t.Errorf("%s: %v after %d attempts, want the Unavailable error after 1", u, r, attempts[u])
				}
			}
		})
	}
}

// Workers that stop on their own (their connection gone) end Serve with
// the reason, unless Restart keeps them coming back until ctx ends.
func TestServeRestartsStoppedWorkersOnlyWhenAsked(t *testing.T) {
	s := startServer(t)
	nc, err := s.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	proc := processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		return page(rawURL), nil
	})

	if err := Serve(context.Background(), quiet, js, proc, ServeConfig{Workers: 1}); err == nil {
		t.Fatal("Serve without Restart returned nil for workers that could not run")
	}

	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, quiet, js, proc, ServeConfig{Workers: 1, Restart: true}) }()
	select {
	case err := <-served:
		t.Fatalf("Serve with Restart gave up: %v", err)
	case <-time.After(2*restartDelay + 500*time.Millisecond):
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve with Restart ended with %v when its context did, want nil", err)
	}
}
