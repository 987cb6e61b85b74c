package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"distill.dev/gateway/internal/localcluster"
	"distill.dev/proto/failure"
)

// mapSite is a small site on loopback: files by path, the rest 404, and a
// log of every request with the time it arrived.
type mapSite struct {
	*httptest.Server
	mu    sync.Mutex
	log   []mapHit
	files map[string]mapFile
}

type mapHit struct {
	path string
	at   time.Time
}

type mapFile struct{ contentType, body string }

func newMapSite(t *testing.T, files map[string]mapFile) *mapSite {
	t.Helper()
	s := &mapSite{files: files}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, mapHit{r.URL.RequestURI(), time.Now()})
		s.mu.Unlock()
		f, ok := s.files[r.URL.Path]
		if !ok {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><body><h1>Not found</h1></body></html>")
			return
		}
		w.Header().Set("Content-Type", f.contentType)
		fmt.Fprint(w, strings.ReplaceAll(f.body, "BASE", s.URL))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *mapSite) hits() []mapHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

func (s *mapSite) requested(path string) int {
	n := 0
	for _, h := range s.hits() {
		if h.path == path {
			n++
		}
	}
	return n
}

func htmlPage(title string, links ...string) mapFile {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><nav>", title)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	fmt.Fprintf(&b, "</nav><main><h1>%s</h1><p>Words enough to read as a page about %s.</p></main></body></html>", title, title)
	return mapFile{"text/html; charset=utf-8", b.String()}
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func urlset(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>\n", l)
	}
	return b.String() + "</urlset>"
}

func lines(s string) []string {
	return strings.Fields(s)
}

func prefixed(base string, paths ...string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = base + p
	}
	return out
}

// sitemapSite declares a sitemap index in robots.txt whose children are a
// URL set and a gzipped one served as application/x-gzip.
func sitemapSite(t *testing.T) *mapSite {
	t.Helper()
	return newMapSite(t, map[string]mapFile{
		"/robots.txt": {"text/plain", "User-agent: *\nDisallow: /private/\nSitemap: BASE/sitemap_index.xml\n"},
		"/sitemap_index.xml": {"application/xml", `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
			<sitemap><loc>BASE/pages.xml</loc></sitemap><sitemap><loc>BASE/posts.xml.gz</loc></sitemap></sitemapindex>`},
		"/pages.xml": {"application/xml", urlset("BASE/", "BASE/about", "BASE/about/", "BASE/docs/install", "BASE/docs/config",
			"BASE/private/keys", "https://elsewhere.example/page")},
		"/posts.xml.gz": {"application/x-gzip", ""},
	})
}

func TestMapSitemapIndex(t *testing.T) {
	s := sitemapSite(t)
	s.files["/posts.xml.gz"] = mapFile{"application/x-gzip", gzipped(t, strings.ReplaceAll(urlset(
		"BASE/blog/installing-things?utm_source=feed", "http://"+strings.TrimPrefix(s.URL, "http://")+"/blog/windows#top", "BASE/about"), "BASE", s.URL))}

	out, errOut, code := run(t, "map", "--allow-local", "--no-map-crawl", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := prefixed(s.URL, "/", "/about", "/docs/install", "/docs/config", "/blog/installing-things", "/blog/windows")
	if got := lines(out); !slices.Equal(got, want) {
		t.Errorf("URLs\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(errOut, "distill: note: sitemap "+s.URL+"/pages.xml: URLs outside the hosts and paths it may list: 1, dropped") {
		t.Errorf("stderr %q does not note the foreign URL", errOut)
	}
	// The start page is read, for where it redirects to, but no other.
	for _, p := range []string{"/robots.txt", "/", "/sitemap_index.xml", "/pages.xml", "/posts.xml.gz"} {
		if n := s.requested(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
	if n := len(s.hits()); n != 5 {
		t.Errorf("%d requests, want 5: no page but the start page is fetched with --no-map-crawl", n)
	}
}

// linkedSite has no sitemap; its pages link to each other.
func linkedSite(t *testing.T) *mapSite {
	t.Helper()
	return newMapSite(t, map[string]mapFile{
		"/robots.txt":           {"text/plain", "User-agent: *\nDisallow: /private\n"},
		"/":                     htmlPage("Home", "/docs/", "/blog/", "/about#team", "https://elsewhere.example/", "/private/keys", "mailto:hi@example.com"),
		"/docs/":                htmlPage("Docs", "/docs/install", "/docs/config?utm_source=nav&ref=side", "/files/guide.pdf", "/", "/missing"),
		"/docs/install":         htmlPage("Install", "/docs/install/windows", "/docs/"),
		"/docs/install/windows": htmlPage("Windows"),
		"/docs/config":          htmlPage("Config"),
		"/blog/":                htmlPage("Blog", "/blog/2026/hello", "/blog/tag/go"),
		"/blog/2026/hello":      htmlPage("Hello"),
		"/blog/tag/go":          htmlPage("Go"),
		"/about":                htmlPage("About", "/docs"),
		"/private/keys":         htmlPage("Keys"),
	})
}

func TestMapShortCrawl(t *testing.T) {
	s := linkedSite(t)
	out, errOut, code := run(t, "map", "--allow-local", s.URL)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	got := lines(out)
	want := prefixed(s.URL, "/", "/docs/", "/blog/", "/about", "/docs/install", "/docs/config", "/files/guide.pdf",
		"/docs/install/windows", "/blog/2026/hello", "/blog/tag/go")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("URLs\n got %q\nwant %q", got, want)
	}
	for _, p := range []string{"/private/keys", "/files/guide.pdf", "https://elsewhere.example/"} {
		if n := s.requested(p); n != 0 {
			t.Errorf("%s requested %d times, want never", p, n)
		}
	}
	for _, p := range []string{"/", "/docs/", "/docs/install", "/robots.txt"} {
		if n := s.requested(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
	// The usual sitemap paths were tried and, missing, not noted.
	if s.requested("/sitemap.xml") != 1 || s.requested("/sitemap_index.xml") != 1 || strings.Contains(errOut, "sitemap") {
		t.Errorf("sitemap guesses: %d %d, stderr %q", s.requested("/sitemap.xml"), s.requested("/sitemap_index.xml"), errOut)
	}
}

func TestMapPerHostDelay(t *testing.T) {
	s := linkedSite(t)
	if _, errOut, code := run(t, "map", "--allow-local", s.URL+"/"); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	hits := s.hits()
	if len(hits) < 8 {
		t.Fatalf("only %d requests", len(hits))
	}
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].at.Sub(hits[i-1].at); gap < 100*time.Millisecond {
			t.Errorf("%s came %v after %s: closer than the default 100ms delay", hits[i].path, gap, hits[i-1].path)
		}
	}

	s = linkedSite(t)
	if _, errOut, code := run(t, "map", "--allow-local", "--delay", "250ms", "--map-pages", "3", s.URL+"/"); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	hits = s.hits()
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].at.Sub(hits[i-1].at); gap < 250*time.Millisecond {
			t.Errorf("--delay 250ms: %s came %v after %s", hits[i].path, gap, hits[i-1].path)
		}
	}
	if n := len(hits); n != 6 {
		t.Errorf("%d requests, want robots.txt, two sitemap guesses and 3 pages", n)
	}
}

func TestMapScope(t *testing.T) {
	s := linkedSite(t)
	tests := []struct {
		name  string
		flags []string
		want  []string
	}{
		{"path prefix", []string{"--path-prefix", "/docs"}, []string{"/docs/", "/docs/install", "/docs/config", "/docs/install/windows"}},
		{"exclude", []string{"--exclude-paths", "^/blog/tag/", "--exclude-paths", "config"}, []string{"/", "/docs/", "/blog/", "/about", "/docs/install", "/files/guide.pdf", "/docs/install/windows", "/blog/2026/hello"}},
		{"include", []string{"--include-paths", `^/blog/\d{4}/`}, []string{"/blog/2026/hello"}},
		{"limit", []string{"--map-limit", "3"}, []string{"/", "/docs/", "/blog/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"map", "--allow-local", "--delay", "0"}, tt.flags...)
			out, errOut, code := run(t, append(args, s.URL+"/")...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			got, want := lines(out), prefixed(s.URL, tt.want...)
			if tt.name != "limit" {
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("URLs\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestMapQueryAndJSON(t *testing.T) {
	s := newMapSite(t, map[string]mapFile{
		"/sitemap.xml": {"application/xml", urlset("BASE/", "BASE/docs/config", "BASE/blog/installing-things", "BASE/docs/install",
			"BASE/install-guide/windows", "BASE/about", "BASE/docs/windows-notes")},
	})
	out, errOut, code := run(t, "map", "--allow-local", "--no-map-crawl", "--delay", "0", "--format", "json",
		"--query", "how to install on Windows", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var got []string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	// Both words whole first; then one whole word, the rarer first
	// ("windows" is in two paths, "install" in three); then "install"
	// inside a word; then the rest as the sitemap lists them.
	want := prefixed(s.URL, "/install-guide/windows", "/docs/windows-notes", "/docs/install", "/blog/installing-things", "/", "/docs/config", "/about")
	if !slices.Equal(got, want) {
		t.Errorf("ranked\n got %q\nwant %q", got, want)
	}

	out, _, _ = run(t, "map", "--allow-local", "--no-map-crawl", "--delay", "0", "--format", "json", "--query", "install", "--map-limit", "1", s.URL+"/")
	if err := json.Unmarshal([]byte(out), &got); err != nil || !slices.Equal(got, prefixed(s.URL, "/docs/install")) {
		t.Errorf("limit after ranking: %q (%v)", got, err)
	}
}

func TestMapErrors(t *testing.T) {
	s := linkedSite(t)
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"loopback refused", []string{"map", s.URL + "/"}, ExitFailure, "(use --allow-local)"},
		{"not a web URL", []string{"map", "ftp://example.com/"}, ExitFailure, "ftp://example.com/"},
		{"bad pattern", []string{"map", "--allow-local", "--include-paths", "(", s.URL + "/"}, ExitUsage, "--include-paths"},
		{"no URL", []string{"map"}, ExitUsage, "accepts 1 arg"},
		{"bad delay", []string{"map", "--delay", "soon", s.URL}, ExitUsage, "soon"},
		{"negative limit", []string{"map", "--map-limit", "-1", s.URL}, ExitUsage, "cannot be negative"},
		{"timeout out of range", []string{"map", "--timeout", "0", s.URL}, ExitUsage, "--timeout must be between 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and a line with %q", code, out, errOut, tt.code, tt.want)
			}
			if first, _, _ := strings.Cut(errOut, "\n"); !strings.HasPrefix(first, "distill: ") {
				t.Errorf("stderr %q", errOut)
			}
		})
	}
	if n := len(s.hits()); n != 0 {
		t.Errorf("%d requests reached the site", n)
	}
}

func TestMapSitemapThenCrawl(t *testing.T) {
	s := linkedSite(t)
	s.files["/sitemap.xml"] = mapFile{"application/xml", urlset("BASE/hidden", "BASE/docs/config")}
	out, errOut, code := run(t, "map", "--allow-local", "--delay", "0", "--map-pages", "2", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The sitemap's URLs first, then what the crawl of two pages (/ and
	// /docs/) found, in the order it found them, each once.
	want := prefixed(s.URL, "/hidden", "/docs/config", "/", "/docs/", "/blog/", "/about", "/docs/install", "/files/guide.pdf", "/missing")
	if got := lines(out); !slices.Equal(got, want) {
		t.Errorf("URLs\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(errOut, "the crawl read its --map-pages budget of 2") {
		t.Errorf("stderr %q does not say the budget ran out", errOut)
	}
}

func TestMapEnoughSitemapURLsSkipTheCrawl(t *testing.T) {
	s := linkedSite(t)
	var locs []string
	for i := range 200 {
		locs = append(locs, fmt.Sprintf("BASE/p/%d", i))
	}
	s.files["/sitemap.xml"] = mapFile{"application/xml", urlset(locs...)}
	out, errOut, code := run(t, "map", "--allow-local", "--delay", "0", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if n := len(lines(out)); n != 200 {
		t.Errorf("%d URLs, want 200", n)
	}
	// The start page is read once, for where it redirects to; no page
	// it links to is.
	if s.requested("/") != 1 || s.requested("/docs/") != 0 {
		t.Errorf("/ fetched %d times, /docs/ %d: 200 sitemap URLs need no crawl", s.requested("/"), s.requested("/docs/"))
	}
}

func TestMapCrawlDelay(t *testing.T) {
	s := linkedSite(t)
	s.files["/robots.txt"] = mapFile{"text/plain", "User-agent: *\nCrawl-delay: 0.3\nDisallow: /private\n"}
	if _, errOut, code := run(t, "map", "--allow-local", "--map-pages", "2", s.URL+"/"); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	hits := s.hits()
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].at.Sub(hits[i-1].at); gap < 300*time.Millisecond {
			t.Errorf("%s came %v after %s: closer than the site's Crawl-delay of 0.3s", hits[i].path, gap, hits[i-1].path)
		}
	}
	if len(hits) != 5 {
		t.Errorf("%d requests, want robots.txt, two sitemap guesses and 2 pages", len(hits))
	}
}

func TestMapIgnoreRobots(t *testing.T) {
	s := linkedSite(t)
	out, errOut, code := run(t, "map", "--allow-local", "--delay", "0", "--ignore-robots", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !slices.Contains(lines(out), s.URL+"/private/keys") || s.requested("/private/keys") != 1 {
		t.Errorf("--ignore-robots: /private/keys listed %v, requested %d times", slices.Contains(lines(out), s.URL+"/private/keys"), s.requested("/private/keys"))
	}
	// robots.txt is still read, for its Sitemap lines.
	if s.requested("/robots.txt") != 1 {
		t.Errorf("robots.txt requested %d times, want once", s.requested("/robots.txt"))
	}
}

func TestMapStartRedirectsToAnotherSite(t *testing.T) {
	other := linkedSite(t)
	s := newMapSite(t, nil)
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			http.Redirect(w, r, other.URL+"/", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, strings.ReplaceAll(urlset("BASE/kept"), "BASE", s.URL))
	})
	out, errOut, code := run(t, "map", "--allow-local", "--delay", "0", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if got := lines(out); !slices.Equal(got, []string{s.URL + "/kept"}) {
		t.Errorf("URLs %q, want the start host's sitemap only", got)
	}
	if !strings.Contains(errOut, "redirects to "+other.URL+"/, another site") {
		t.Errorf("stderr %q does not note the redirect", errOut)
	}
	if n := len(other.hits()); n > 2 {
		t.Errorf("the other site got %d requests; want its robots.txt and the redirect's target at most", n)
	}
}

// startServeReady runs `distill serve` with args on a free loopback port
// and returns its address once it answers.
func startServeReady(t *testing.T, args ...string) string {
	t.Helper()
	addr, err := localcluster.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	startServe(t, nil, append(args, "--listen", addr)...)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "liveness"}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("serve on %s: %v", addr, err)
	}
	return addr
}

// distill map --server asks a distill serve, over the API's Map, and
// prints what a map in this process prints.
func TestMapThroughServe(t *testing.T) {
	s := linkedSite(t)
	s.files["/sitemap.xml"] = mapFile{"application/xml", urlset("BASE/hidden", "BASE/docs/config")}
	addr := startServeReady(t, "--allow-local")
	for _, format := range []string{"text", "json"} {
		args := []string{"--allow-local", "--delay", "0", "--map-pages", "2", "--format", format, "--exclude-paths", "^/blog", s.URL + "/"}
		localOut, localErr, localCode := run(t, append([]string{"map"}, args...)...)
		out, errOut, code := run(t, append([]string{"map", "--server", addr}, args...)...)
		if localCode != ExitOK || code != ExitOK {
			t.Fatalf("%s: exit %d here, %d through serve; stderr %q, %q", format, localCode, code, localErr, errOut)
		}
		if out != localOut || errOut != localErr {
			t.Errorf("%s: through serve\n%s%s\nin process\n%s%s", format, out, errOut, localOut, localErr)
		}
		if !strings.Contains(out, s.URL+"/docs/install") || strings.Contains(out, "/blog") {
			t.Errorf("%s: %q", format, out)
		}
	}

	// Loopback is the server operator's to open, not the client's.
	closed := startServeReady(t)
	out, errOut, code := run(t, "map", "--server", closed, "--allow-local", s.URL+"/")
	if code != ExitFailure || out != "" || !strings.Contains(errOut, failure.AllowLocalMessage) || strings.Contains(errOut, "(use --allow-local)") {
		t.Errorf("map --server on a server without --allow-local: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Map's own limits hold over the API too.
	_, errOut, code = run(t, "map", "--server", addr, "--allow-local", "--map-pages", "10001", s.URL+"/")
	if code != ExitFailure || !strings.Contains(errOut, "map_pages is at most 10000") {
		t.Errorf("map --server --map-pages 10001: exit %d, stderr %q", code, errOut)
	}
}
