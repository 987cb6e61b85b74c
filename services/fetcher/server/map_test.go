package server

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/robots"
)

// mapSite serves what a map reads besides pages: an XML sitemap, a
// gzipped one (a type Fetch refuses) and a robots.txt that declares them.
func mapSite(t *testing.T) *httptest.Server {
	t.Helper()
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "User-agent: distill\nDisallow: /private\nCrawl-delay: 1.5\n\nSitemap: "+site.URL+"/sitemap.xml\nSitemap: "+site.URL+"/news.xml.gz\n")
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			_, _ = io.WriteString(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+site.URL+`/a</loc></url></urlset>`)
		case "/news.xml.gz":
			w.Header().Set("Content-Type", "application/x-gzip")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, newsSitemap)
			_ = zw.Close()
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site
}

const newsSitemap = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/news/1</loc></url></urlset>`

// Resource and Robots over gRPC: a resource of any type arrives whole,
// and robots.txt arrives parsed, its Sitemap lines and rules intact.
func TestResourceAndRobotsOverGRPC(t *testing.T) {
	site := mapSite(t)
	_, client := startFetcher(t, FetcherConfig{AllowLocal: true})
	local := &distillv1.FetchOptions{AllowLocal: true}

	res, err := client.Resource(t.Context(), &internalv1.FetcherServiceResourceRequest{Url: site.URL + "/news.xml.gz", Options: local})
	if err != nil {
		t.Fatal(err)
	}
	f := res.GetFetched()
	if f.GetStatus() != 200 || f.GetContentType() != "application/x-gzip" || f.GetFinalUrl() != site.URL+"/news.xml.gz" {
		t.Errorf("resource: %d %q from %s", f.GetStatus(), f.GetContentType(), f.GetFinalUrl())
	}
	zr, err := gzip.NewReader(bytes.NewReader(f.GetBody()))
	if err != nil {
		t.Fatalf("resource body is not the gzip served: %v", err)
	}
	if body, err := io.ReadAll(zr); err != nil || string(body) != newsSitemap {
		t.Errorf("resource body gunzips to %q (%v), want the sitemap", body, err)
	}
	// Fetch, for contrast, takes pages only.
	_, err = client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: site.URL + "/news.xml.gz", Options: local})
	if failure.CodeOf(err) != failure.UnsupportedContent {
		t.Errorf("Fetch of a gzip file: err = %v, want UnsupportedContent", err)
	}

	rob, err := client.Robots(t.Context(), &internalv1.FetcherServiceRobotsRequest{Url: site.URL + "/any/page", Options: local})
	if err != nil {
		t.Fatal(err)
	}
	file := robots.FromProto(rob.GetFile())
	if want := []string{site.URL + "/sitemap.xml", site.URL + "/news.xml.gz"}; !slices.Equal(file.Sitemaps(), want) {
		t.Errorf("sitemaps %q, want %q", file.Sitemaps(), want)
	}
	agent := file.For("distill")
	if v := agent.Check(mustParse(t, site.URL+"/private/x")); v.Allowed || v.String() != "Disallow: /private" {
		t.Errorf("/private/x: %v, want Disallow: /private", v)
	}
	if agent.CrawlDelay() != 1500*time.Millisecond {
		t.Errorf("crawl delay %v, want 1.5s", agent.CrawlDelay())
	}

	// A site without robots.txt is an answer: allow all, and why.
	none := httptest.NewServer(http.NotFoundHandler())
	defer none.Close()
	rob, err = client.Robots(t.Context(), &internalv1.FetcherServiceRobotsRequest{Url: none.URL + "/", Options: local})
	if err != nil {
		t.Fatal(err)
	}
	if b := rob.GetFile().GetBlanket(); !b.GetAllowed() || !strings.Contains(b.GetReason(), "404") {
		t.Errorf("no robots.txt: blanket %v, want allowed, naming the 404", b)
	}
}

// Resource and Robots honour allow_local only when the operator started
// the fetcher with it, and never reach the process's own ports, as Fetch.
func TestResourceAndRobotsKeepThePolicy(t *testing.T) {
	site := mapSite(t)
	local := &distillv1.FetchOptions{AllowLocal: true}
	calls := func(client internalv1.FetcherServiceClient, url string) map[string]error {
		_, rerr := client.Resource(t.Context(), &internalv1.FetcherServiceResourceRequest{Url: url, Options: local})
		_, berr := client.Robots(t.Context(), &internalv1.FetcherServiceRobotsRequest{Url: url, Options: local})
		return map[string]error{"Resource": rerr, "Robots": berr}
	}

	_, strict := startFetcher(t, FetcherConfig{})
	for name, err := range calls(strict, site.URL+"/sitemap.xml") {
		if status.Code(err) != codes.InvalidArgument || failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), failure.AllowLocalMessage) {
			t.Errorf("%s without the operator's allow-local: err = %v, want InvalidArgument naming --allow-local", name, err)
		}
	}
	// Without allow_local the address itself is refused.
	if _, err := strict.Robots(t.Context(), &internalv1.FetcherServiceRobotsRequest{Url: site.URL + "/"}); failure.CodeOf(err) != failure.Blocked {
		t.Errorf("Robots of loopback without allow_local: err = %v, want Blocked", err)
	}

	addr, allowed := startFetcher(t, FetcherConfig{AllowLocal: true})
	for name, err := range calls(allowed, "http://"+addr+"/robots.txt") {
		if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "distill's own gRPC port") {
			t.Errorf("%s of the fetcher's own port: err = %v, want Blocked naming it", name, err)
		}
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
