package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// batchOutcome is what a FetchBatch stream delivered.
type batchOutcome struct {
	results map[int32]*distillv1.FetchBatchResponse
	dupes   int
	err     error
}

// runBatch streams a batch and calls each(n) after every result.
func runBatch(t *testing.T, client distillv1.DistillServiceClient, urls []string, opts *distillv1.FetchOptions, each func(n int)) batchOutcome {
	t.Helper()
	return runBatchIn(context.Background(), t, client, urls, opts, each)
}

// runBatchIn is runBatch within ctx.
func runBatchIn(ctx context.Context, t *testing.T, client distillv1.DistillServiceClient, urls []string, opts *distillv1.FetchOptions, each func(n int)) batchOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	stream, err := client.FetchBatch(ctx, &distillv1.FetchBatchRequest{Urls: urls, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	out := batchOutcome{results: map[int32]*distillv1.FetchBatchResponse{}}
	for {
		res, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = err
			return out
		}
		if _, seen := out.results[res.GetIndex()]; seen {
			out.dupes++
		}
		out.results[res.GetIndex()] = res
		if res.GetUrl() != urls[res.GetIndex()] {
			t.Errorf("result %d names %s, want %s", res.GetIndex(), res.GetUrl(), urls[res.GetIndex()])
		}
		if each != nil {
			each(len(out.results))
		}
	}
}

func (o batchOutcome) failed() []string {
	var out []string
	for _, r := range o.results {
		if e := r.GetError(); e != nil {
			out = append(out, r.GetUrl()+": "+e.GetMessage())
		}
	}
	return out
}

var local = &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF}

// The API in-process, the CLI as the binary a user runs.
func TestBatchOf500ThroughTheAPIAndTheCLI(t *testing.T) {
	t.Parallel()
	c := startInProcess(t, inProcessOpts{Fetchers: 2})
	site := newPages(t, 0)
	urls := site.urls(500)

	got := runBatch(t, c.client(0), urls, local, nil)
	if got.err != nil || len(got.results) != 500 || got.dupes != 0 {
		t.Fatalf("batch: %d results, %d duplicates, err %v", len(got.results), got.dupes, got.err)
	}
	if f := got.failed(); len(f) > 0 {
		t.Fatalf("%d pages failed, first: %s", len(f), f[0])
	}
	if r := got.results[499].GetResult(); r.GetTitle() != "Page 499" {
		t.Fatalf("page 499 = %v", r)
	}
	// Both fetchers took jobs.
	for _, f := range c.Fetchers {
		if !strings.Contains(f.Log.String(), `"msg":"fetched"`) {
			t.Errorf("%s at %s fetched nothing", f.Name, f.Addr)
		}
	}

	out, errOut, code := runCLI(t, append([]string{"fetch", "--server", c.Gateways[0].Addr, "--allow-local", "--js", "off", "--format", "json"}, urls...)...)
	if code != 0 {
		t.Fatalf("cli exit %d: %.2000s", code, errOut)
	}
	var items []struct {
		URL    string `json:"url"`
		OK     bool   `json:"ok"`
		Result struct {
			Title string `json:"title"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 500 {
		t.Fatalf("cli printed %d items", len(items))
	}
	for i, it := range items {
		if !it.OK || it.URL != urls[i] || it.Result.Title != strings.TrimPrefix(urls[i], site.URL+"/p/") && it.Result.Title != "Page "+strings.TrimPrefix(urls[i], site.URL+"/p/") {
			t.Fatalf("cli item %d = %+v", i, it)
		}
	}
}

// A fetcher that stops mid-batch loses no URL: on SIGTERM it finishes the
// jobs it holds, and after kill -9 JetStream hands them to the other.
func TestStoppedFetcherLosesNoURL(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			c := startCluster(t, clusterOpts{Fetchers: 2, AckWait: 2 * time.Second})
			site := newPages(t, 20*time.Millisecond)
			urls := site.urls(300)
			victim := c.Fetchers[1]
			stopped := false
			exited := make(chan struct{})
			got := runBatch(t, c.client(0), urls, local, func(n int) {
				if n == 60 && !stopped {
					stopped = true
					go func() {
						defer close(exited)
						c.signal(victim, sig)
					}()
				}
			})
			if !stopped {
				t.Fatal("the batch ended before the fetcher was stopped")
			}
			<-exited
			if got.err != nil || len(got.results) != 300 || got.dupes != 0 {
				t.Fatalf("after %v: %d results, %d duplicates, err %v", sig, len(got.results), got.dupes, got.err)
			}
			if f := got.failed(); len(f) > 0 {
				t.Fatalf("%d pages failed after %v, first: %s", len(f), sig, f[0])
			}
			if sig == syscall.SIGTERM && victim.Running() {
				t.Fatal("the fetcher did not exit on SIGTERM")
			}
			if sig == syscall.SIGTERM && victim.Exit() != nil {
				t.Fatalf("the fetcher exited with %v on SIGTERM", victim.Exit())
			}
		})
	}
}

func TestStoppedExtractorFailsFastAndRecovers(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{})
	site := newPages(t, 0)
	client := c.client(0)
	fetch := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: site.URL + "/p/1", Options: local})
		return err
	}
	if err := fetch(); err != nil {
		t.Fatal(err)
	}

	c.signal(c.Extractor, syscall.SIGTERM)
	// Fast means the gateway gives up on the extractor itself (after
	// remote.Grace, whose bounds remote's tests hold): a call that waited
	// for the caller's deadline would end in a Timeout, not Unavailable.
	err := fetch()
	if status.Code(err) != codes.Unavailable || failure.CodeOf(err) != failure.Unavailable || !strings.Contains(err.Error(), "extractor at "+c.Extractor.Addr) {
		t.Fatalf("with the extractor down: %v (grpc %v, distill %v)", err, status.Code(err), failure.CodeOf(err))
	}
	c.waitStatus(c.Gateways[0], healthpb.HealthCheckResponse_NOT_SERVING, 10*time.Second)

	c.restart(c.Extractor)
	c.waitStatus(c.Gateways[0], healthpb.HealthCheckResponse_SERVING, 30*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for err := fetch(); err != nil; err = fetch() {
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after the extractor returned: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestNATSRestartMidBatch(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{Fetchers: 2})
	site := newPages(t, 20*time.Millisecond)
	urls := site.urls(200)
	restarted := make(chan struct{})
	stopped := false
	begun := time.Now()
	got := runBatch(t, c.client(0), urls, local, func(n int) {
		if n == 40 && !stopped {
			stopped = true
			c.signal(c.NATS, syscall.SIGKILL)
			go func() {
				time.Sleep(time.Second)
				if err := c.RestartNATS(); err != nil {
					t.Error(err)
				}
				close(restarted)
			}()
		}
	})
	if !stopped {
		t.Fatal("the batch ended before NATS was stopped")
	}
	<-restarted
	took := time.Since(begun)
	// Every URL is answered once, by a page or by an error that says it
	// was not finished; nothing hangs.
	if got.err != nil || got.dupes != 0 || len(got.results) != 200 {
		t.Fatalf("after the NATS restart: %d results, %d duplicates, err %v (in %s)", len(got.results), got.dupes, got.err, took)
	}
	t.Logf("batch across a NATS restart: %d answered, %d failed, in %s", len(got.results), len(got.failed()), took)

	// The cluster works again afterwards.
	again := runBatch(t, c.client(0), urls[:20], local, nil)
	if again.err != nil || len(again.results) != 20 || len(again.failed()) != 0 {
		t.Fatalf("after the restart: %d results, failed %v, err %v", len(again.results), again.failed(), again.err)
	}
}

func TestRendererCrashFailsOnlyItsURL(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{})
	site := newPages(t, 0)
	urls := []string{site.URL + "/shell/0", site.URL + "/hang", site.URL + "/shell/1", site.URL + "/shell/2", site.URL + "/shell/3"}
	// The render after the crash spans the renderer's restart and its
	// Chromium's launch: its timeout leaves room for both on a loaded
	// machine, and nothing here waits for it to run out.
	opts := &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_ALWAYS, Concurrency: ptr(int32(1)), TimeoutSecs: ptr(int32(60))}
	// The page after the crash waits for the renderer's restart, as a
	// request arriving after Kubernetes restarted the pod would.
	restarted := make(chan struct{})
	site.hold("/shell/1", restarted)
	go func() {
		defer close(restarted)
		<-site.hangHit
		c.signal(c.Renderer, syscall.SIGKILL)
		if err := c.Restart(c.Renderer); err != nil {
			t.Error(err)
		}
	}()
	got := runBatch(t, c.client(0), urls, opts, nil)
	<-restarted
	if got.err != nil || len(got.results) != len(urls) {
		t.Fatalf("batch: %d results, err %v", len(got.results), got.err)
	}
	if e := got.results[1].GetError(); e == nil || !strings.Contains(e.GetMessage(), "renderer at "+c.Renderer.Addr+" went away") {
		t.Fatalf("the URL whose render crashed: %v", got.results[1])
	}
	for i, r := range got.results {
		if i == 1 {
			continue
		}
		if r.GetError() != nil || !strings.Contains(r.GetResult().GetMarkdown(), "Rendered words") {
			t.Errorf("%s: %v", r.GetUrl(), r)
		}
	}
}

func ptr[T any](v T) *T { return &v }
