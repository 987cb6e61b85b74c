package crawljs

import (
	"context"
	"log/slog"
	"testing"

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
