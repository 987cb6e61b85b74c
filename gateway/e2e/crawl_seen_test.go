package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// TestClusterCrawlReadsEachPageAndRobotsOnce: two fetcher processes read
// a crawl whose hub links every page both directly and through an old
// address that redirects to it, and links pages robots.txt disallows,
// directly and through redirects. Each page is fetched once and delivered
// once, under whichever address claimed it first; robots.txt is fetched
// once for the whole crawl, however many fetchers read the host; no
// disallowed path is ever requested. Once the crawl is done and streamed,
// nothing of it is left in JetStream: answers, claims, the robots.txt copy
// and its output are purged, and the client back with its job id is told
// it is done.
func TestClusterCrawlReadsEachPageAndRobotsOnce(t *testing.T) {
	t.Parallel()
	c := startCluster(t, clusterOpts{Fetchers: 2, NoRenderer: true})
	const n = 16
	var mu sync.Mutex
	hits := map[string]int{}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch p := r.URL.Path; {
		case p == "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case p == "/":
			fmt.Fprint(w, "<html><head><title>Hub</title></head><body><main><h1>Hub</h1>")
			for i := range n {
				fmt.Fprintf(w, `<p><a href="/p/%d">Page %d</a> <a href="/moved/%d">Page %d again</a> <a href="/private/%d">Private %d</a> <a href="/gone/%d">Gone %d</a></p>`, i, i, i, i, i, i, i, i)
			}
			fmt.Fprint(w, "</main></body></html>")
		case strings.HasPrefix(p, "/moved/"):
			http.Redirect(w, r, "/p/"+strings.TrimPrefix(p, "/moved/"), http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/gone/"):
			http.Redirect(w, r, "/private/"+strings.TrimPrefix(p, "/gone/"), http.StatusMovedPermanently)
		default:
			time.Sleep(80 * time.Millisecond)
			fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Some words about %s, enough to read as a page.</p></main></body></html>", p, p, p)
		}
	}))
	t.Cleanup(site.Close)
	count := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := c.client(0).Crawl(ctx, &distillv1.CrawlRequest{
		Url: site.URL + "/", DelayMs: proto.Int64(20), Concurrency: proto.Int32(6), MaxPages: proto.Int32(1000),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF, Format: distillv1.Format_FORMAT_TEXT},
	})
	if err != nil {
		t.Fatal(err)
	}
	printed, failed := map[string]int{}, map[string]string{}
	var id string
	var last *distillv1.CrawlStatusResponse
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		id = r.GetJobId()
		if p := r.GetPage(); p != nil {
			printed[strings.TrimPrefix(p.GetUrl(), site.URL)]++
			if p.GetError() != nil {
				failed[strings.TrimPrefix(p.GetUrl(), site.URL)] = p.GetError().GetMessage()
			}
		}
		if s := r.GetSummary(); s != nil {
			last = s
		}
	}
	if last.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE {
		t.Fatalf("summary %v; want done", last)
	}

	if got := count("/robots.txt"); got != 1 {
		t.Errorf("robots.txt fetched %d times, want once for the crawl", got)
	}
	for i := range n {
		direct, moved, gone := fmt.Sprintf("/p/%d", i), fmt.Sprintf("/moved/%d", i), fmt.Sprintf("/gone/%d", i)
		if h := count(direct); h != 1 {
			t.Errorf("%s fetched %d times, want once", direct, h)
		}
		if d, m := printed[direct], printed[moved]; d+m != 1 {
			t.Errorf("page %d delivered %d times as %s and %d as %s, want once in all", i, d, direct, m, moved)
		}
		if _, ok := failed[direct]; ok {
			t.Errorf("%s failed: %s", direct, failed[direct])
		}
		if _, ok := failed[moved]; ok {
			t.Errorf("%s failed: %s", moved, failed[moved])
		}
		if msg, ok := failed[gone]; !ok || !strings.Contains(msg, "robots.txt") {
			t.Errorf("%s, a redirect to a disallowed page: %q; want it refused by robots.txt", gone, msg)
		}
	}
	mu.Lock()
	for p, h := range hits {
		if strings.HasPrefix(p, "/private") {
			t.Errorf("%s, disallowed, was requested %d times", p, h)
		}
	}
	mu.Unlock()
	a, b := fetchedBy(c.Fetchers[0], site.URL), fetchedBy(c.Fetchers[1], site.URL)
	if a == 0 || b == 0 {
		t.Errorf("the fetchers read %d and %d pages: both should have taken some", a, b)
	}

	// The crawl purges what its pages left as it ends, right after its
	// summary: give it a moment.
	nc, err := nats.Connect("nats://" + c.NATS.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	left := func(streamName, filter string) uint64 {
		s, err := js.Stream(ctx, streamName)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
		if err != nil {
			t.Fatal(err)
		}
		var total uint64
		for _, k := range info.State.Subjects {
			total += k
		}
		return total
	}
	var pages, seen, output uint64
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pages, seen = left("DISTILL_CRAWL_PAGES", "distill.crawlpage."+id+".*"), left("KV_distill_crawl_seen", "$KV.distill_crawl_seen."+id+".>")
		output = left("DISTILL_CRAWL_PAGES", "distill.crawlout."+id)
		if pages+seen+output == 0 || time.Now().After(deadline) {
			break
		}
	}
	if pages != 0 || seen != 0 || output != 0 {
		t.Errorf("after the crawl: %d page answers, %d claims or robots.txt copies and %d output messages left in JetStream, want none", pages, seen, output)
	}

	// Its client, back with the job id, is told it is done, and nothing
	// more: every page was streamed to it.
	again, err := c.client(0).Crawl(ctx, &distillv1.CrawlRequest{Url: site.URL + "/", JobId: id, DelayMs: proto.Int64(20), Concurrency: proto.Int32(6), MaxPages: proto.Int32(1000),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF, Format: distillv1.Format_FORMAT_TEXT}})
	if err != nil {
		t.Fatal(err)
	}
	var events []*distillv1.CrawlResponse
	for {
		r, err := again.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the crawl asked for again: %v", err)
		}
		events = append(events, r)
	}
	if len(events) != 1 || events[0].GetSummary().GetState() != distillv1.CrawlState_CRAWL_STATE_DONE {
		t.Errorf("the crawl asked for again: %v; want its done status alone", events)
	}
	t.Logf("%d pages delivered (%d refused); fetchers read %d and %d", len(printed), len(failed), a, b)
}
