package crawljs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/pipeline"
)

// pageOnly answers every page with itself, linking nowhere.
type pageOnly struct{}

func (pageOnly) Read(_ context.Context, rawURL string, _ *distillv1.FetchOptions, _ crawl.Visit) (*pipeline.Result, error) {
	return &pipeline.Result{Distilled: &distillv1.Distilled{FinalUrl: rawURL, Status: 200, Title: rawURL}}, nil
}

// TestAnEndedCrawlsJournalIsKeptOnlyWhereItCanBeResumed: a hub on a
// stored stream keeps a crawl's journal once it ends, for a crawl resumed
// later; one in memory (the single binary's) drops it, for nobody can
// resume a crawl whose memory dies with its process.
func TestAnEndedCrawlsJournalIsKeptOnlyWhereItCanBeResumed(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		kept bool
	}{{"stored", Config{}, true}, {"memory", Config{Memory: true}, false}} {
		t.Run(tt.name, func(t *testing.T) {
			js := connect(t, startServer(t))
			logger := slog.New(slog.DiscardHandler)
			hub := NewHub(logger, js, crawl.New(logger, nil, pageOnly{}), "test", tt.cfg)
			id, err := hub.StartCrawl(t.Context(), crawl.Request{URL: "http://example.test/", IgnoreRobots: true, Options: &distillv1.FetchOptions{}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var summary *distillv1.CrawlStatusResponse
			err = hub.FollowCrawl(t.Context(), id, func(r *distillv1.CrawlResponse) error {
				summary = r.GetSummary()
				return nil
			})
			if err != nil || summary.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || summary.GetPagesDone() != 1 {
				t.Fatalf("the crawl ended with %v, %v; want one page done", summary, err)
			}
			// Close waits for the crawl's run to finish its end.
			hub.Close()
			s, err := js.Stream(t.Context(), Stream)
			if err != nil {
				t.Fatal(err)
			}
			if n := subjectCount(t, s, SubjectPrefix+id); (n > 0) != tt.kept {
				t.Errorf("the ended crawl's journal holds %d records; kept: %v, want %v", n, n > 0, tt.kept)
			}
		})
	}
}

// The hub keeps its crawls' records in the job registry named
// crawlRegistry, whose bucket is JobsBucket, and the registry grows no
// items stream beside the hub's own output.
func TestTheHubsRecordsAreAJobRegistrys(t *testing.T) {
	t.Parallel()
	if got := registryBucket(crawlRegistry); got != JobsBucket {
		t.Fatalf("the crawl registry's bucket is %q, want %q", got, JobsBucket)
	}
	js := connect(t, startServer(t))
	logger := slog.New(slog.DiscardHandler)
	hub := NewHub(logger, js, crawl.New(logger, nil, pageOnly{}), "test", Config{Memory: true})
	id, err := hub.StartCrawl(t.Context(), crawl.Request{URL: "http://example.test/", IgnoreRobots: true, Options: &distillv1.FetchOptions{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.FollowCrawl(t.Context(), id, func(*distillv1.CrawlResponse) error { return nil }); err != nil {
		t.Fatal(err)
	}
	hub.Close()
	kv, err := js.KeyValue(t.Context(), JobsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("crawl %s in the jobs bucket: %v", id, err)
	}
	var rec record
	if err := json.Unmarshal(e.Value(), &rec); err != nil || rec.State != stateEnded {
		t.Errorf("the ended crawl's record: %+v (%v)", rec, err)
	}
	if _, err := js.Stream(t.Context(), "DISTILL_CRAWL_ITEMS"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("the crawl registry's items stream: %v, want none", err)
	}
}

// fanOut answers its start page with links to pages /p/0 to /p/n-1, and
// those with themselves.
type fanOut struct{ n int }

func (f fanOut) Read(_ context.Context, rawURL string, _ *distillv1.FetchOptions, _ crawl.Visit) (*pipeline.Result, error) {
	d := &distillv1.Distilled{FinalUrl: rawURL, Status: 200, Title: rawURL, Links: &distillv1.LinkList{}}
	if rawURL == "http://example.test/" {
		for i := range f.n {
			u := fmt.Sprintf("http://example.test/p/%d", i)
			d.Links.Items = append(d.Links.Items, &distillv1.Link{Href: u, Text: u})
		}
	}
	return &pipeline.Result{Distilled: d}, nil
}

// A client that comes back through another gateway is sent a crawl's
// output from the sent mark on: the last resendWindow pages it was handed
// again, none before them, and every page after.
func TestAFollowerBackThroughAnotherHubResumesAtTheSentMark(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	logger := slog.New(slog.DiscardHandler)
	hubA := NewHub(logger, connect(t, srv), crawl.New(logger, nil, fanOut{n: 20}), "a", Config{})
	defer hubA.Close()
	hubB := NewHub(logger, connect(t, srv), crawl.New(logger, nil, pageOnly{}), "b", Config{})
	defer hubB.Close()
	id, err := hubA.StartCrawl(t.Context(), crawl.Request{URL: "http://example.test/", Depth: 1, Concurrency: 1, IgnoreRobots: true, Options: &distillv1.FetchOptions{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Client A takes 10 pages and hangs on the 10th, as a client whose
	// gateway was killed with it queued.
	const taken = 10
	var fromA []string
	stuck, release, doneA := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(doneA)
		_ = hubA.FollowCrawl(t.Context(), id, func(r *distillv1.CrawlResponse) error {
			if p := r.GetPage(); p != nil {
				if fromA = append(fromA, p.GetUrl()); len(fromA) == taken {
					close(stuck)
					<-release
					return errors.New("gone")
				}
			}
			return nil
		})
	}()
	<-stuck
	var fromB []string
	var summary *distillv1.CrawlStatusResponse
	err = hubB.FollowCrawl(t.Context(), id, func(r *distillv1.CrawlResponse) error {
		if p := r.GetPage(); p != nil {
			fromB = append(fromB, p.GetUrl())
		}
		summary = r.GetSummary()
		return nil
	})
	close(release)
	<-doneA
	if err != nil || summary.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE {
		t.Fatalf("client B's stream ended with %v, %v", summary, err)
	}
	// The mark stays resendWindow pages behind the last handed over.
	if len(fromB) != 21-(taken-resendWindow) || fromB[0] != fromA[taken-resendWindow] {
		t.Fatalf("client A had %q; client B was sent %q, want from %q on", fromA, fromB, fromA[taken-resendWindow])
	}
}
