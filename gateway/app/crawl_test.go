package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/crawl/crawljs"
)

// hubSite serves a page linking to n pages; the pages wait on release
// when it is not nil.
func hubSite(t *testing.T, n int, release chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
			return
		case r.URL.Path == "/":
			fmt.Fprint(w, "<html><head><title>Hub</title></head><body><main><h1>Hub</h1>")
			for i := range n {
				fmt.Fprintf(w, `<p><a href="/p/%d">Page %d</a></p>`, i, i)
			}
			fmt.Fprint(w, "</main></body></html>")
			return
		case release != nil:
			<-release
		}
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Words about %s for a reader.</p></main></body></html>", r.URL.Path, r.URL.Path, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// jobRecord reads crawl id's record in the embedded server's jobs bucket.
func jobRecord(t *testing.T, sys *System, id string) map[string]any {
	t.Helper()
	q, err := sys.backend.(*local).startQueue()
	if err != nil {
		t.Fatal(err)
	}
	kv, err := q.js.KeyValue(t.Context(), crawljs.JobsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(t.Context(), id)
	if err != nil {
		t.Fatalf("crawl %s in the jobs bucket: %v", id, err)
	}
	rec := map[string]any{}
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// A crawl in this process is a job of the hub on the embedded NATS: its
// record is in the jobs bucket, CrawlStatus reports it while it runs and
// CrawlCancel stops it, and its end stays reported.
func TestCrawlRunsOnTheEmbeddedHub(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := hubSite(t, 20, release)
	sys, err := Open(t.Context(), quiet, Config{UserAgentVersion: "test", CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	if _, err := sys.CrawlHub().CrawlStatus(t.Context(), crawl.NewID()); err == nil {
		t.Fatal("a crawl reported before any began")
	}
	srv := api.New(quiet, sys)
	ids, hubPage := make(chan string, 1), make(chan struct{})
	var last *distillv1.CrawlStatusResponse
	done := make(chan error, 1)
	go func() {
		first, pages := true, 0
		done <- srv.CrawlSite(t.Context(), &distillv1.CrawlRequest{
			Url: s.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(2), MaxPages: proto.Int32(21),
			Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
		}, nil, func(r *distillv1.CrawlResponse) error {
			if first {
				first = false
				ids <- r.GetJobId()
			}
			if r.GetPage() != nil {
				if pages++; pages == 1 {
					close(hubPage)
				}
			}
			if sm := r.GetSummary(); sm != nil {
				last = sm
			}
			return nil
		})
	}()
	id := <-ids
	<-hubPage
	st, err := srv.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: api.CrawlUUID(id)})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_RUNNING || st.GetJobId() != id || st.GetUrl() != s.URL+"/" {
		t.Fatalf("CrawlStatus while running = %v, %v", st, err)
	}
	if rec := jobRecord(t, sys, id); rec["state"] != "running" || rec["held"] != nil {
		t.Errorf("record while running: %v", rec)
	}
	if _, err := srv.CrawlCancel(t.Context(), &distillv1.CrawlCancelRequest{JobId: id}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED || last.GetPagesDone() > 3 {
		t.Errorf("summary %v; want canceled with the pages in flight", last)
	}
	st, err = srv.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED {
		t.Errorf("CrawlStatus after the end = %v, %v", st, err)
	}
	if rec := jobRecord(t, sys, id); rec["state"] != "ended" {
		t.Errorf("record after the end: %v", rec)
	}
}

// A crawl kept in the caller's journal (--crawl-state) is the hub's too,
// marked as held, so that no other gateway adopts it; the journal says a
// page is done only once the client has it.
func TestCrawlStateIsHeldByTheHub(t *testing.T) {
	t.Parallel()
	s := hubSite(t, 3, nil)
	sys, err := Open(t.Context(), quiet, Config{UserAgentVersion: "test", CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	name := filepath.Join(t.TempDir(), "crawl.state")
	sf, err := crawl.OpenStateFile(name)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	srv := api.New(quiet, sys)
	ids, taking, hold := make(chan string, 1), make(chan struct{}), make(chan struct{})
	var pages int
	var last *distillv1.CrawlStatusResponse
	done := make(chan error, 1)
	go func() {
		first := true
		done <- srv.CrawlSite(t.Context(), &distillv1.CrawlRequest{
			Url: s.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(1),
			Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
		}, sf, func(r *distillv1.CrawlResponse) error {
			if first {
				first = false
				ids <- r.GetJobId()
			}
			if r.GetPage() != nil {
				if pages++; pages == 1 {
					// The client takes its first page slowly.
					close(taking)
					<-hold
				}
			}
			if sm := r.GetSummary(); sm != nil {
				last = sm
			}
			return nil
		})
	}()
	id := <-ids
	<-taking
	if rec := jobRecord(t, sys, id); rec["held"] != true || rec["state"] != "running" {
		t.Errorf("record of a crawl in the caller's journal: %v", rec)
	}
	st, err := srv.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_RUNNING {
		t.Errorf("CrawlStatus while running = %v, %v", st, err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `{"done":`) {
		t.Errorf("the journal says a page is done before its client has it:\n%s", b)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if pages != 4 || last.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE {
		t.Errorf("%d pages, summary %v; want the hub and its 3 pages, done", pages, last)
	}
	if b, _ = os.ReadFile(name); strings.Count(string(b), `{"done":`) != 4 {
		t.Errorf("the journal after the end:\n%s", b)
	}
	st, err = srv.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || st.GetPagesDone() != 4 {
		t.Errorf("CrawlStatus after the end = %v, %v", st, err)
	}
}

// A long crawl's output is let go as the client is sent it, not only at
// its summary: the single binary's stream does not hold every page of a
// crawl in memory until it ends. No page is lost or sent twice.
func TestCrawlOutputIsLetGoAsItIsStreamed(t *testing.T) {
	t.Parallel()
	const n = 150
	s := hubSite(t, n, nil)
	sys, err := Open(t.Context(), quiet, Config{UserAgentVersion: "test", CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.Close()
	q, err := sys.backend.(*local).startQueue()
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(quiet, sys)
	got := map[string]int{}
	held := -1
	err = srv.CrawlSite(t.Context(), &distillv1.CrawlRequest{
		Url: s.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(4), MaxPages: proto.Int32(n + 1),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
	}, nil, func(r *distillv1.CrawlResponse) error {
		p := r.GetPage()
		if p == nil {
			return nil
		}
		if got[p.GetUrl()]++; len(got) == n-10 {
			// The client has been sent n-10 pages: what the stream still
			// holds of this crawl is at most those sent since the last
			// purge, the resend window and what is not sent yet.
			pages, err := q.js.Stream(t.Context(), crawljs.PagesStream)
			if err != nil {
				return err
			}
			info, err := pages.Info(t.Context(), jetstream.WithSubjectFilter(crawljs.OutPrefix+r.GetJobId()))
			if err != nil {
				return err
			}
			held = int(info.State.Subjects[crawljs.OutPrefix+r.GetJobId()])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n+1 {
		t.Errorf("%d pages delivered, want %d", len(got), n+1)
	}
	for u, c := range got {
		if c != 1 {
			t.Errorf("%s delivered %d times", u, c)
		}
	}
	if held < 0 || held >= n-10-64 {
		t.Errorf("the stream held %d of the crawl's messages once %d pages were sent; want them let go as they are sent", held, n-10)
	}
}
