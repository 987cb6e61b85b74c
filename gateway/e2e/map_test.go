package e2e

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// mapSite is a small site as a map finds it: a robots.txt that declares a
// sitemap index and disallows a folder, the index's two sitemaps (one
// gzipped), and pages whose links reach a page no sitemap lists.
type mapSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newMapSite(t *testing.T) *mapSite {
	t.Helper()
	s := &mapSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		base := s.URL
		urlset := func(paths ...string) string {
			var b strings.Builder
			b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for _, p := range paths {
				fmt.Fprintf(&b, "<url><loc>%s%s</loc></url>", base, p)
			}
			b.WriteString("</urlset>")
			return b.String()
		}
		page := func(title string, links ...string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>%s</title><main><h1>%s</h1><p>A page of the site the map reads, with words enough to be a page.</p>", title, title)
			for _, l := range links {
				fmt.Fprintf(w, `<p><a href="%s">%s</a></p>`, l, l)
			}
			fmt.Fprint(w, "</main>")
		}
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private\n\nSitemap: %s/sitemap_index.xml\n", base)
		case "/sitemap_index.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
				`<sitemap><loc>%s/sitemap-docs.xml</loc></sitemap><sitemap><loc>%s/sitemap-blog.xml.gz</loc></sitemap></sitemapindex>`, base, base)
		case "/sitemap-docs.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, urlset("/docs/install", "/docs/config", "/private/plans", "/docs/install?utm_source=feed"))
		case "/sitemap-blog.xml.gz":
			w.Header().Set("Content-Type", "application/x-gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, urlset("/blog/one", "/blog/two"))
			_ = zw.Close()
		case "/":
			page("Home", "/about", "/docs/install", "/private/x")
		case "/about":
			page("About", "/contact", "/")
		case "/contact":
			page("Contact", "/about")
		case "/docs/install", "/docs/config", "/blog/one", "/blog/two":
			page(r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *mapSite) hitsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// A map through a cluster gateway lists what the single binary lists: the
// gateway runs the map, and a fetcher reads robots.txt, the sitemap index
// and its sitemaps (gzip included) and, with the extractor, the short
// crawl's pages. Over the API's Map and with distill map --server alike.
func TestMapThroughAClusterGateway(t *testing.T) {
	t.Parallel()
	c := startInProcess(t, inProcessOpts{})
	site := newMapSite(t)
	want := []string{
		site.URL + "/docs/install", site.URL + "/docs/config", site.URL + "/blog/one", site.URL + "/blog/two",
		site.URL + "/", site.URL + "/about", site.URL + "/contact",
	}

	var urls []string
	var last *distillv1.MapResponse
	err := api.StreamMap(t.Context(), c.client(0), &distillv1.MapRequest{Url: site.URL + "/", AllowLocal: true, DelayMs: proto.Int64(0)}, func(r *distillv1.MapResponse) error {
		urls = append(urls, r.GetUrls()...)
		last = r
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(urls, want) {
		t.Errorf("Map through the gateway listed\n%q\nwant\n%q", urls, want)
	}
	if last.GetFromSitemaps() != 4 || last.GetFromCrawl() != 3 {
		t.Errorf("from sitemaps %d, from the crawl %d; want 4 and 3", last.GetFromSitemaps(), last.GetFromCrawl())
	}
	if n := site.hitsOf("/private/x"); n != 0 {
		t.Errorf("the disallowed /private/x was requested %d times", n)
	}
	for _, f := range c.Fetchers {
		if !strings.Contains(f.Log.String(), site.URL+"/about") {
			t.Errorf("%s did not fetch the crawl's pages", f.Name)
		}
	}

	args := []string{"--allow-local", "--delay", "0", site.URL + "/"}
	for _, format := range []string{"text", "json"} {
		localOut, localErr, localCode := runCLI(t, append([]string{"map", "--cache-dir", t.TempDir(), "--format", format}, args...)...)
		out, errOut, code := runCLI(t, append([]string{"map", "--server", c.Gateways[0].Addr, "--format", format}, args...)...)
		if localCode != 0 || code != 0 {
			t.Fatalf("%s: exit %d in the single binary, %d through the gateway; stderr %q, %q", format, localCode, code, localErr, errOut)
		}
		if out != localOut || errOut != localErr {
			t.Errorf("%s: through the gateway\n%s%s\nin the single binary\n%s%s", format, out, errOut, localOut, localErr)
		}
	}
	if out, _, _ := runCLI(t, "map", "--server", c.Gateways[0].Addr, "--allow-local", "--delay", "0", site.URL+"/"); out != strings.Join(want, "\n")+"\n" {
		t.Errorf("distill map --server printed\n%s", out)
	}

	// A refusal crosses the gateway with its code: loopback without
	// allow_local is the fetcher's Blocked.
	err = api.StreamMap(t.Context(), c.client(0), &distillv1.MapRequest{Url: site.URL + "/"}, func(*distillv1.MapResponse) error { return nil })
	if status.Code(err) != codes.PermissionDenied || failure.CodeOf(err) != failure.Blocked {
		t.Errorf("map of loopback without allow_local: err = %v, want PermissionDenied, Blocked", err)
	}
}
