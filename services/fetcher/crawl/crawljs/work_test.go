package crawljs

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/pace"
	"distill.dev/services/fetcher/pipeline"
)

// countingReader answers every page with its URL as its title, counting
// the pages it was asked for, and follows nothing.
type countingReader struct{ reads atomic.Int32 }

func (r *countingReader) Read(ctx context.Context, rawURL string, _ *distillv1.FetchOptions, v crawl.Visit) (*pipeline.Result, error) {
	r.reads.Add(1)
	u, _ := url.Parse(rawURL)
	if v == nil {
		panic("the worker hands a page's reader no visit")
	}
	if err := v.Turn(ctx, u); err != nil {
		return nil, err
	}
	return &pipeline.Result{Distilled: &distillv1.Distilled{Title: rawURL, FinalUrl: rawURL}, RedirectHistory: []string{rawURL + "?old"}}, nil
}

// handed is a page its crawl hands to a WorkReader, which reads its Work
// alone.
type handed struct {
	crawl.Visit
	work crawl.Work
}

func (h handed) Work() crawl.Work { return h.work }

// TestWorkReaderKeepsAnswers: a page queued by one connection is read by
// a worker on another, and its answer, redirects included, comes back; a
// page asked for again (an owner that took over) is answered from what
// was kept, not read again.
func TestWorkReaderKeepsAnswers(t *testing.T) {
	s := startServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	reader := &countingReader{}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = ServeWork(ctx, slog.New(slog.DiscardHandler), connect(t, s), reader, pace.NewLocal(), WorkConfig{Workers: 2, AckWait: 5 * time.Second})
	}()
	owner := connect(t, s)
	if err := EnsureWorkStreams(t.Context(), owner, Config{}); err != nil {
		t.Fatal(err)
	}
	wr := NewWorkReader(owner, 5*time.Second, Config{})
	id := crawl.NewID()
	work := crawl.Work{JobID: id, Key: "example.test/a", Start: "http://example.test/", ScopeURL: "http://example.test/", Interval: time.Millisecond}
	read := func() *pipeline.Result {
		t.Helper()
		rctx, rcancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer rcancel()
		res, err := wr.Read(rctx, "http://example.test/a", &distillv1.FetchOptions{}, handed{work: work})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := read()
	if first.Distilled.GetTitle() != "http://example.test/a" || len(first.RedirectHistory) != 1 {
		t.Errorf("answer %v, redirects %v; want the page and its one redirect", first.Distilled, first.RedirectHistory)
	}
	again := read()
	if again.Distilled.GetTitle() != first.Distilled.GetTitle() {
		t.Errorf("asked again: %v", again.Distilled)
	}
	if n := reader.reads.Load(); n != 1 {
		t.Errorf("the page was read %d times, want once", n)
	}
	cancel()
	<-served
}

// TestLeaseOfADeadHolderIsTaken: a lease whose time ran out (its holder
// died and stopped renewing it) is taken by the next process; one still
// within its time is refused.
func TestLeaseOfADeadHolderIsTaken(t *testing.T) {
	s := startServer(t)
	js := connect(t, s)
	if err := EnsureStream(t.Context(), js, Config{}); err != nil {
		t.Fatal(err)
	}
	id := crawl.NewID()
	dead, err := NewJournal(js, id, "dead", Config{LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := dead.acquire(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The holder dies: its renewals stop, without giving the lease back.
	dead.mu.Lock()
	close(dead.lease.stop)
	<-dead.lease.done
	dead.lease = nil
	dead.mu.Unlock()
	// Its Close deleted the key as it stopped; put back what a killed
	// process leaves, a lease that runs out soon.
	kv, err := js.KeyValue(t.Context(), OwnersBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(t.Context(), id, dead.leaseValue()); err != nil {
		t.Fatal(err)
	}
	next, err := NewJournal(js, id, "next", Config{LeaseTTL: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := next.acquire(t.Context()); err == nil || !strings.Contains(err.Error(), "running on dead") {
		t.Fatalf("within the dead holder's time: %v, want a refusal naming it", err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := next.acquire(t.Context()); err != nil {
		t.Fatalf("after the dead holder's time: %v", err)
	}
	defer next.Close()
	e, err := kv.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if holder, _ := parseLease(e.Value()); holder != "next" {
		t.Errorf("the lease is %q's, want next's", holder)
	}
}
