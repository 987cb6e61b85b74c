package jobs

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/natsembed"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// processFunc adapts a function to Processor.
type processFunc func(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error)

func (f processFunc) Distill(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
	return f(ctx, rawURL, opts)
}

func startJetStream(t *testing.T) jetstream.JetStream {
	t.Helper()
	return connect(t, startServer(t))
}

// startServer starts an embedded server with the streams in place.
func startServer(t *testing.T) *natsembed.Server {
	t.Helper()
	s, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	js := connect(t, s)
	if err := EnsureStreams(context.Background(), js, StreamConfig{Memory: true}); err != nil {
		t.Fatal(err)
	}
	return s
}

// connect opens a connection of its own, as a separate process would.
func connect(t *testing.T, s *natsembed.Server) jetstream.JetStream {
	t.Helper()
	nc, err := s.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func startWorker(t *testing.T, js jetstream.JetStream, proc Processor, concurrency int, opts ...Option) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewWorker(quiet, js, proc, concurrency, opts...).Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	}
}

func urlsN(n int) []string {
	urls := make([]string, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://127.0.0.1/page/%d", i)
	}
	return urls
}

func collect(t *testing.T, ctx context.Context, d *Dispatcher, urls []string, opts *distillv1.FetchOptions) (map[int32]*internalv1.FetchJobResult, error) {
	t.Helper()
	got := make(map[int32]*internalv1.FetchJobResult)
	err := d.Run(ctx, urls, opts, func(r *internalv1.FetchJobResult) {
		if _, dup := got[r.GetIndex()]; dup {
			t.Errorf("index %d delivered twice", r.GetIndex())
		}
		got[r.GetIndex()] = r
	})
	return got, err
}

func TestBatchAnswersEveryURLOnceWithinConcurrency(t *testing.T) {
	t.Parallel()
	js := startJetStream(t)
	var running, peak atomic.Int32
	proc := processFunc(func(ctx context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		if strings.HasSuffix(rawURL, "/7") {
			return nil, failure.New(failure.Blocked, "blocked by network policy: %s", rawURL)
		}
		return &distillv1.Distilled{FinalUrl: rawURL, Markdown: "# " + rawURL}, nil
	})
	stop := startWorker(t, js, proc, 16)
	defer stop()

	urls := urlsN(60)
	concurrency := int32(4)
	got, err := collect(t, context.Background(), NewDispatcher(quiet, js), urls, &distillv1.FetchOptions{Concurrency: &concurrency})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(urls) {
		t.Fatalf("got %d results, want %d", len(got), len(urls))
	}
	for i, u := range urls {
		r := got[int32(i)]
		if r.GetUrl() != u {
			t.Errorf("result %d url = %q, want %q", i, r.GetUrl(), u)
		}
		if i == 7 {
			if r.GetError().GetCode() != failure.Blocked {
				t.Errorf("result 7 = %v, want a Blocked error", r)
			}
			continue
		}
		if r.GetResult().GetMarkdown() != "# "+u {
			t.Errorf("result %d markdown = %q", i, r.GetResult().GetMarkdown())
		}
	}
	if p := peak.Load(); p > concurrency {
		t.Errorf("peak concurrency %d exceeds the batch's %d", p, concurrency)
	}
}

func TestJobOfAStoppedWorkerIsRedelivered(t *testing.T) {
	t.Parallel()
	js := startJetStream(t)

	// The first worker takes a job and is shut down while holding it.
	taken := make(chan struct{})
	var once sync.Once
	stuck := processFunc(func(ctx context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		once.Do(func() { close(taken) })
		<-ctx.Done()
		return nil, ctx.Err()
	})
	stopFirst := startWorker(t, js, stuck, 1)

	urls := urlsN(3)
	type outcome struct {
		got map[int32]*internalv1.FetchJobResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		got, err := collect(t, context.Background(), NewDispatcher(quiet, js), urls, nil)
		done <- outcome{got, err}
	}()

	select {
	case <-taken:
	case <-time.After(10 * time.Second):
		t.Fatal("first worker never took a job")
	}
	stopFirst()

	healthy := processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		return &distillv1.Distilled{FinalUrl: rawURL}, nil
	})
	stopSecond := startWorker(t, js, healthy, 2)
	defer stopSecond()

	select {
	case o := <-done:
		if o.err != nil {
			t.Fatal(o.err)
		}
		for i, u := range urls {
			if got := o.got[int32(i)].GetResult().GetFinalUrl(); got != u {
				t.Errorf("result %d = %v, want page %s", i, o.got[int32(i)], u)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("batch did not complete after the job was handed back")
	}
}

func TestCancelledBatchAnswersOpenURLsAsCancelled(t *testing.T) {
	t.Parallel()
	js := startJetStream(t)
	// No worker runs: nothing will ever answer. Two jobs are queued, three
	// wait for a slot, when the batch's context ends.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := urlsN(5)
	concurrency := int32(2)
	type outcome struct {
		got map[int32]*internalv1.FetchJobResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		got, err := collect(t, ctx, NewDispatcher(quiet, js), urls, &distillv1.FetchOptions{Concurrency: &concurrency})
		done <- outcome{got, err}
	}()
	waitForQueued(t, js, int(concurrency))
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if o.err == nil {
		t.Fatal("Run returned nil after its context ended")
	}
	if len(o.got) != len(urls) {
		t.Fatalf("got %d results, want one per URL (%d)", len(o.got), len(urls))
	}
	for i := range urls {
		if code := o.got[int32(i)].GetError().GetCode(); code != failure.Canceled {
			t.Errorf("result %d code = %v, want Canceled", i, code)
		}
	}
}

// waitForQueued waits until the jobs stream holds n jobs.
func waitForQueued(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	var held uint64
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s, err := js.Stream(context.Background(), JobsStream)
		if err != nil {
			t.Fatal(err)
		}
		if held = s.CachedInfo().State.Msgs; held == uint64(n) {
			return
		}
	}
	t.Fatalf("the jobs stream holds %d jobs, want %d", held, n)
}

func TestDuplicateResultsAreDeliveredOnce(t *testing.T) {
	t.Parallel()
	js := startJetStream(t)
	// A hand-rolled worker answers every job twice under different message
	// ids, as two workers would after a redelivery, so JetStream's own
	// deduplication cannot hide the copy: the dispatcher must.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cons, err := js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{Durable: "twice", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		job := &internalv1.FetchJob{}
		if err := proto.Unmarshal(m.Data(), job); err != nil {
			t.Error(err)
			return
		}
		res := &internalv1.FetchJobResult{JobId: job.GetJobId(), BatchId: job.GetBatchId(), Index: job.GetIndex(), Url: job.GetUrl(),
			Outcome: &internalv1.FetchJobResult_Result{Result: &distillv1.Distilled{FinalUrl: job.GetUrl()}}}
		data, _ := proto.Marshal(res)
		for copyN := range 2 {
			msg := &nats.Msg{Subject: job.GetResultSubject(), Data: data, Header: nats.Header{}}
			msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("%s-%d", job.GetJobId(), copyN))
			// Publishing may outlive the batch; only failures during it count.
			if _, err := js.PublishMsg(ctx, msg); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
		}
		_ = m.Ack()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()

	got, err := collect(t, ctx, NewDispatcher(quiet, js), urlsN(10), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10 {
		t.Fatalf("got %d results, want 10", len(got))
	}
}

// A batch waits for its results at least as long as the workers' ack wait
// makes a dead worker's job wait before it is redone.
func TestDispatcherFollowsTheWorkersAckWait(t *testing.T) {
	t.Parallel()
	js := startJetStream(t)
	d := NewDispatcher(quiet, js)
	if got := d.ackWait(t.Context()); got != DefaultAckWait {
		t.Fatalf("before any worker: ack wait %s, want %s", got, DefaultAckWait)
	}
	stop := startWorker(t, js, processFunc(func(_ context.Context, rawURL string, _ *distillv1.FetchOptions) (*distillv1.Distilled, error) {
		return page(rawURL), nil
	}), 1, WithAckWait(5*time.Minute))
	defer stop()
	// A batch answered means the worker has made its consumer.
	if _, err := collect(t, t.Context(), d, urlsN(1), nil); err != nil {
		t.Fatal(err)
	}
	if got := d.ackWait(t.Context()); got != 5*time.Minute {
		t.Fatalf("with workers at -ack-wait 5m: ack wait %s", got)
	}
	if long, short := answerWithin(nil, 5*time.Minute), answerWithin(nil, DefaultAckWait); long-short != 4*time.Minute {
		t.Fatalf("answerWithin: %s with a 5m ack wait, %s with 1m", long, short)
	}
}
