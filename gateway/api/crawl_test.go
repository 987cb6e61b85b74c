package api_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
)

// hub serves a page linking to n pages; requests for pages wait on
// release, when it is not nil.
func hub(t *testing.T, n int, release chan struct{}) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			fmt.Fprint(w, "<html><head><title>Hub</title></head><body><main><h1>Hub</h1>")
			for i := range n {
				fmt.Fprintf(w, `<p><a href="/p/%d">Page %d</a></p>`, i, i)
			}
			fmt.Fprint(w, "</main></body></html>")
			return
		}
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if release != nil {
			<-release
		}
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Words about %s for a reader.</p></main></body></html>", r.URL.Path, r.URL.Path, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCrawlStreamsPagesThenTheSummary(t *testing.T) {
	s := hub(t, 5, nil)
	c := distillv1.NewDistillServiceClient(serve(t))
	stream, err := c.Crawl(t.Context(), &distillv1.CrawlRequest{
		Url: s.URL + "/", DelayMs: proto.Int64(0), MaxPages: proto.Int32(4),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	var pages []*distillv1.CrawlPage
	var last *distillv1.CrawlStatusResponse
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if id == "" {
			id = r.GetJobId()
		}
		if r.GetJobId() != id || id == "" {
			t.Fatalf("job id %q, then %q", id, r.GetJobId())
		}
		if p := r.GetPage(); p != nil {
			pages = append(pages, p)
		}
		last = r.GetSummary()
	}
	if len(pages) != 4 || pages[0].GetUrl() != s.URL+"/" || pages[0].GetDepth() != 0 || pages[1].GetDepth() != 1 {
		t.Errorf("pages %v, want the hub and three pages", pages)
	}
	if last.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || last.GetStopReason() != "max_pages" || last.GetPagesDone() != 4 || last.GetQueued() != 2 {
		t.Errorf("summary %v", last)
	}
	st, err := c.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || st.GetPagesDone() != 4 {
		t.Errorf("CrawlStatus after the end = %v, %v", st, err)
	}
}

func TestCrawlCancelByJobID(t *testing.T) {
	release := make(chan struct{})
	s := hub(t, 20, release)
	c := distillv1.NewDistillServiceClient(serve(t))
	stream, err := c.Crawl(t.Context(), &distillv1.CrawlRequest{
		Url: s.URL + "/", DelayMs: proto.Int64(0), Concurrency: proto.Int32(2), MaxPages: proto.Int32(21),
		Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	id := first.GetJobId()
	// The hub comes; its pages wait on the server.
	if r, err := stream.Recv(); err != nil || r.GetPage().GetUrl() != s.URL+"/" {
		t.Fatalf("second message %v, %v; want the hub", r, err)
	}
	st, err := c.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_RUNNING || st.GetPagesDone() != 1 {
		t.Fatalf("CrawlStatus while running = %v, %v", st, err)
	}
	if _, err := c.CrawlCancel(t.Context(), &distillv1.CrawlCancelRequest{JobId: id}); err != nil {
		t.Fatal(err)
	}
	close(release)
	var pages int
	var last *distillv1.CrawlStatusResponse
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.GetPage() != nil {
			pages++
		}
		last = r.GetSummary()
	}
	// The pages in flight when it was canceled finish; no other starts.
	if pages > 2 || last.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED || last.GetStopReason() != "canceled" {
		t.Errorf("after cancel: %d more pages, summary %v", pages, last)
	}
}

func TestCrawlRefusals(t *testing.T) {
	c := distillv1.NewDistillServiceClient(serve(t))
	for _, tt := range []struct {
		req  *distillv1.CrawlRequest
		want string
	}{
		{&distillv1.CrawlRequest{}, "url is required"},
		{&distillv1.CrawlRequest{Url: "https://example.com/", MaxPages: proto.Int32(0)}, "max_pages is 1 to 10000"},
		{&distillv1.CrawlRequest{Url: "https://example.com/", Concurrency: proto.Int32(65)}, "concurrency is at most 64"},
		{&distillv1.CrawlRequest{Url: "https://example.com/", StopWhenAnswered: true}, "needs --query"},
		{&distillv1.CrawlRequest{Url: "https://example.com/", IncludePaths: []string{"("}}, "--include-paths"},
	} {
		stream, err := c.Crawl(t.Context(), tt.req)
		if err == nil {
			_, err = stream.Recv()
		}
		if status.Code(err) != codes.InvalidArgument || failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: %v, want InvalidArgument %q", tt.req, err, tt.want)
		}
	}
	if _, err := c.CrawlStatus(t.Context(), &distillv1.CrawlStatusRequest{JobId: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("CrawlStatus of an unknown job: %v, want NotFound", err)
	}
}

// A crawl's id and its UUID form name the same crawl; other strings stay
// as they are.
func TestCrawlUUID(t *testing.T) {
	id := crawl.NewID()
	u := api.CrawlUUID(id)
	if len(u) != 36 || u[14] != '8' || api.CrawlID(u) != id || api.CrawlID(strings.ToUpper(u)) != id || api.CrawlID(id) != id {
		t.Errorf("CrawlUUID(%s) = %s, back %s", id, u, api.CrawlID(u))
	}
	for _, s := range []string{"", "no-such-crawl", "00000000-0000-4000-8000-000000000000", u[:35] + "1", api.CrawlUUID("short")} {
		if got := api.CrawlID(s); got != strings.ToLower(s) {
			t.Errorf("CrawlID(%q) = %q", s, got)
		}
	}
}
