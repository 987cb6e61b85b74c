package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// sitemapSite serves a sitemap of n pages, /p/0 to /p/<n-1>, and its
// home page; every other path is 404.
func sitemapSite(t *testing.T, n int) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := range n {
				fmt.Fprintf(w, "<url><loc>%s/p/%d</loc></url>", srv.URL, i)
			}
			fmt.Fprint(w, "</urlset>")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>Home</title></head><body><main><p>The home page of a site with many pages.</p></main></body></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mapAll calls Map and keeps every message of its stream.
func mapAll(t *testing.T, client distillv1.DistillServiceClient, req *distillv1.MapRequest) ([]*distillv1.MapResponse, error) {
	t.Helper()
	var msgs []*distillv1.MapResponse
	err := api.StreamMap(context.Background(), client, req, func(r *distillv1.MapResponse) error {
		msgs = append(msgs, r)
		return nil
	})
	return msgs, err
}

func TestMapStreamsTheSiteInBatches(t *testing.T) {
	const n = 1300
	s := sitemapSite(t, n)
	client := distillv1.NewDistillServiceClient(serve(t))
	msgs, err := mapAll(t, client, &distillv1.MapRequest{Url: s.URL + "/", AllowLocal: true, NoMapCrawl: true, DelayMs: proto.Int64(0), MapLimit: proto.Int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	// 1300 URLs of at most 2048 bytes do not fit one 1 MiB batch.
	if len(msgs) < 2 {
		t.Errorf("%d messages, want the URLs in several batches", len(msgs))
	}
	var urls []string
	for i, m := range msgs {
		urls = append(urls, m.GetUrls()...)
		if i < len(msgs)-1 && (m.GetFound() != 0 || len(m.GetNotes()) != 0 || m.GetFromSitemaps() != 0) {
			t.Errorf("message %d of %d carries the summary: %v", i, len(msgs), m)
		}
	}
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprintf("%s/p/%d", s.URL, i)
	}
	if !slices.Equal(urls, want) {
		t.Errorf("got %d URLs (first %q), want %d in the sitemap's order", len(urls), urls[:min(3, len(urls))], n)
	}
	last := msgs[len(msgs)-1]
	if last.GetFound() != n || last.GetFromSitemaps() != n || last.GetStoppedAtLimit() {
		t.Errorf("summary: found %d, from sitemaps %d, stopped %v; want %d, %d, false", last.GetFound(), last.GetFromSitemaps(), last.GetStoppedAtLimit(), n, n)
	}
}

func TestMapLimitAndQuery(t *testing.T) {
	s := sitemapSite(t, 30)
	client := distillv1.NewDistillServiceClient(serve(t))
	base := func() *distillv1.MapRequest {
		return &distillv1.MapRequest{Url: s.URL + "/", AllowLocal: true, NoMapCrawl: true, DelayMs: proto.Int64(0), MapLimit: proto.Int32(5)}
	}
	msgs, err := mapAll(t, client, base())
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if got := last.GetUrls(); len(msgs) != 1 || len(got) != 5 || got[0] != s.URL+"/p/0" {
		t.Errorf("map_limit 5: %d messages, URLs %q", len(msgs), got)
	}
	// Without a query the first five found are the answer: the map stops
	// looking there and says so.
	if last.GetFound() != 5 || !last.GetStoppedAtLimit() {
		t.Errorf("map_limit 5: found %d, stopped %v; want 5, true", last.GetFound(), last.GetStoppedAtLimit())
	}

	req := base()
	req.Query = "p 17"
	req.MapLimit = proto.Int32(1)
	msgs, err = mapAll(t, client, req)
	if err != nil {
		t.Fatal(err)
	}
	last = msgs[len(msgs)-1]
	if got := last.GetUrls(); !slices.Equal(got, []string{s.URL + "/p/17"}) || last.GetFound() != 30 || last.GetStoppedAtLimit() {
		t.Errorf("query: URLs %q, found %d, stopped %v; want /p/17 of 30, not stopped", got, last.GetFound(), last.GetStoppedAtLimit())
	}

	req = base()
	req.PathPrefix = "/p"
	req.ExcludePaths = []string{`^/p/[12]`}
	req.MapLimit = proto.Int32(0)
	msgs, err = mapAll(t, client, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[len(msgs)-1].GetUrls(); len(got) != 8 || slices.ContainsFunc(got, func(u string) bool { return strings.Contains(u, "/p/1") }) {
		t.Errorf("exclude_paths ^/p/[12]: %q, want /p/0 and /p/3 to /p/9", got)
	}
}

func TestMapErrorsCarryTheirCode(t *testing.T) {
	s := sitemapSite(t, 3)
	client := distillv1.NewDistillServiceClient(serve(t))
	tests := []struct {
		name     string
		req      *distillv1.MapRequest
		wantGRPC codes.Code
		wantCode distillv1.ErrorCode
		want     string
	}{
		{"missing url", &distillv1.MapRequest{}, codes.InvalidArgument, failure.InvalidArgument, "url is required"},
		{"not http", &distillv1.MapRequest{Url: "ftp://example.com/"}, codes.InvalidArgument, failure.InvalidURL, "ftp://"},
		{"loopback without allow_local", &distillv1.MapRequest{Url: s.URL + "/"}, codes.PermissionDenied, failure.Blocked, "loopback"},
		{"private address", &distillv1.MapRequest{Url: "http://192.168.1.1/", AllowLocal: true}, codes.PermissionDenied, failure.Blocked, "192.168.1.1"},
		{"bad pattern", &distillv1.MapRequest{Url: s.URL + "/", AllowLocal: true, IncludePaths: []string{"("}}, codes.InvalidArgument, failure.InvalidArgument, "("},
		{"negative limit", &distillv1.MapRequest{Url: s.URL + "/", MapLimit: proto.Int32(-1)}, codes.InvalidArgument, failure.InvalidArgument, "map_limit"},
		{"negative delay", &distillv1.MapRequest{Url: s.URL + "/", DelayMs: proto.Int64(-1)}, codes.InvalidArgument, failure.InvalidArgument, "delay_ms"},
		{"too many pages", &distillv1.MapRequest{Url: s.URL + "/", MapPages: proto.Int32(api.MaxMapPages + 1)}, codes.InvalidArgument, failure.InvalidArgument, "map_pages is at most"},
		{"timeout out of range", &distillv1.MapRequest{Url: s.URL + "/", TimeoutSecs: proto.Int32(0)}, codes.InvalidArgument, failure.InvalidArgument, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mapAll(t, client, tt.req)
			if got := status.Code(err); got != tt.wantGRPC {
				t.Errorf("grpc code = %v, want %v (%v)", got, tt.wantGRPC, err)
			}
			if got := failure.CodeOf(err); got != tt.wantCode {
				t.Errorf("distill code = %v, want %v (%v)", got, tt.wantCode, err)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// A caller may ask for allow_local only where the operator allowed it;
// the refusal comes before the site is touched.
func TestMapRefusesAllowLocalWithoutTheOperator(t *testing.T) {
	var hits atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(s.Close)
	client := distillv1.NewDistillServiceClient(serveConfig(t, app.Config{UserAgentVersion: "test", Workers: 2, CacheDir: t.TempDir()}))
	_, err := mapAll(t, client, &distillv1.MapRequest{Url: s.URL + "/", AllowLocal: true})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), failure.AllowLocalMessage) {
		t.Errorf("err = %v, want InvalidArgument saying %q", err, failure.AllowLocalMessage)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the site", n)
	}
}
