package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type crawlLine struct {
	URL    string `json:"url"`
	Depth  int    `json:"depth"`
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	Result *struct {
		FinalURL  string    `json:"final_url"`
		Title     string    `json:"title"`
		Markdown  string    `json:"markdown"`
		Relevance *float64  `json:"relevance"`
		Links     *[]any    `json:"links"`
		Status    int       `json:"status"`
		Stats     *struct{} `json:"stats"`
	} `json:"result"`
}

func crawlLines(t *testing.T, out string) []crawlLine {
	t.Helper()
	var got []crawlLine
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var l crawlLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		got = append(got, l)
	}
	return got
}

func crawledURLs(lines []crawlLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.URL)
	}
	slices.Sort(out)
	return out
}

func TestCrawlFollowsLinksWithinTheSiteOnce(t *testing.T) {
	s := linkedSite(t)
	out, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--delay", "0", "--depth", "2", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := crawlLines(t, out)
	// Depth 2 from /: the home page's links, and theirs; /missing answers
	// 404 and is a page (status in the JSON), /private is disallowed.
	want := prefixed(s.URL, "/", "/docs/", "/blog/", "/about", "/docs/install", "/docs/config", "/files/guide.pdf", "/missing",
		"/blog/2026/hello", "/blog/tag/go")
	slices.Sort(want)
	if got := crawledURLs(lines); !slices.Equal(got, want) {
		t.Errorf("pages\n got %q\nwant %q", got, want)
	}
	depths := map[string]int{}
	for _, l := range lines {
		depths[strings.TrimPrefix(l.URL, s.URL)] = l.Depth
		if l.OK && l.Result.Links != nil {
			t.Errorf("%s carries links nobody asked for", l.URL)
		}
	}
	for path, d := range map[string]int{"/": 0, "/docs/": 1, "/about": 1, "/docs/install": 2} {
		if depths[path] != d {
			t.Errorf("%s at depth %d, want %d", path, depths[path], d)
		}
	}
	for _, p := range []string{"/private/keys", "/docs/install/windows"} {
		if n := s.requested(p); n != 0 {
			t.Errorf("%s requested %d times, want never (robots.txt, depth)", p, n)
		}
	}
	// /docs/config is linked with tracking parameters; /about with a
	// fragment and again from elsewhere: each is read once.
	for _, p := range []string{"/", "/docs/", "/docs/config", "/about", "/robots.txt"} {
		if n := s.requested(p); n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
}

func TestCrawlMarkdownSectionsAndMaxPages(t *testing.T) {
	s := linkedSite(t)
	out, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--delay", "0", "--max-pages", "3", "--concurrency", "1", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if n := strings.Count(out, "==> "); n != 3 {
		t.Errorf("%d sections, want 3:\n%s", n, out)
	}
	if !strings.HasPrefix(out, "==> "+s.URL+"/ <==\n") || !strings.Contains(out, "# Home") {
		t.Errorf("the start page is not the first section:\n%s", out)
	}
	if !strings.Contains(errOut, "stopped at --max-pages 3; links found and not read:") {
		t.Errorf("stderr %q does not say the crawl stopped at --max-pages", errOut)
	}
}

// TestCrawlRedirectsAreJudgedBeforeTheyAreFollowed: a link within the
// site that redirects off it, or to a path robots.txt disallows, is not
// followed: the other host and the disallowed path never see a request.
func TestCrawlRedirectsAreJudgedBeforeTheyAreFollowed(t *testing.T) {
	other := newMapSite(t, map[string]mapFile{"/landing": htmlPage("Elsewhere")})
	s := newMapSite(t, map[string]mapFile{
		"/robots.txt": {"text/plain", "User-agent: *\nDisallow: /private\n"},
		"/":           htmlPage("Home", "/away", "/hidden", "/moved"),
		"/new":        htmlPage("New home of moved"),
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusFound)
	})
	mux.HandleFunc("/hidden", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/private/page", http.StatusFound) })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/new", http.StatusMovedPermanently) })
	mux.Handle("/", s.Config.Handler)
	s.Config.Handler = mux

	out, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--delay", "0", s.URL+"/")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1 (two pages failed); stderr %q", code, errOut)
	}
	if n := len(other.hits()); n != 0 {
		t.Errorf("the other site got %d requests, want none", n)
	}
	if n := s.requested("/private/page"); n != 0 {
		t.Errorf("the disallowed path got %d requests, want none", n)
	}
	byURL := map[string]crawlLine{}
	for _, l := range crawlLines(t, out) {
		byURL[strings.TrimPrefix(l.URL, s.URL)] = l
	}
	if l := byURL["/away"]; l.OK || !strings.Contains(l.Error, "redirect to "+other.URL+"/landing not followed: outside the crawl's scope") {
		t.Errorf("/away: %+v", l)
	}
	if l := byURL["/hidden"]; l.OK || !strings.Contains(l.Error, "disallowed") {
		t.Errorf("/hidden: %+v", l)
	}
	if l := byURL["/moved"]; !l.OK || l.Result.FinalURL != s.URL+"/new" {
		t.Errorf("/moved: %+v", l)
	}
}

// TestCrawlPoliteness counts, on the server, how close two requests come:
// eight pages in flight at once, and still every request starts at least
// one delay after the one before it. The server notes a request when its
// handler runs, which a loaded machine (the race detector, other tests)
// can put off by tens of milliseconds: a margin of half the window absorbs
// that, and without the pacer requests arrive microseconds apart.
func TestCrawlPoliteness(t *testing.T) {
	files := map[string]mapFile{"/robots.txt": {"text/plain", "User-agent: *\nAllow: /\n"}}
	var hub []string
	for i := range 16 {
		p := fmt.Sprintf("/p%d", i)
		hub = append(hub, p)
		files[p] = htmlPage(fmt.Sprintf("Page %d", i))
	}
	files["/"] = htmlPage("Hub", hub...)
	s := newMapSite(t, files)
	const delay = 150 * time.Millisecond
	_, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--concurrency", "8", "--delay", "150ms", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	hits := s.hits()
	if len(hits) != 18 {
		t.Fatalf("%d requests, want 18 (robots.txt, the hub, 16 pages)", len(hits))
	}
	least := time.Hour
	for i := 1; i < len(hits); i++ {
		gap := hits[i].at.Sub(hits[i-1].at)
		least = min(least, gap)
		if gap < delay/2 {
			t.Errorf("%s came %v after %s: two requests within one %v window", hits[i].path, gap, hits[i-1].path, delay)
		}
	}
	t.Logf("the closest two requests of %d came %v apart (--delay %v, --concurrency 8)", len(hits), least, delay)
}

func TestCrawlHonoursALongerCrawlDelay(t *testing.T) {
	s := newMapSite(t, map[string]mapFile{
		"/robots.txt": {"text/plain", "User-agent: *\nCrawl-delay: 0.4\n"},
		"/":           htmlPage("Hub", "/a", "/b", "/c"),
		"/a":          htmlPage("A"), "/b": htmlPage("B"), "/c": htmlPage("C"),
	})
	_, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--concurrency", "4", "--delay", "10", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	hits := s.hits()
	// The margin is half the window, as in TestCrawlPoliteness; --delay
	// alone would allow 10 ms. robots.txt's own request counts too.
	for i := 1; i < len(hits); i++ {
		if gap := hits[i].at.Sub(hits[i-1].at); gap < 200*time.Millisecond {
			t.Errorf("%s came %v after %s, within the site's Crawl-delay of 0.4s", hits[i].path, gap, hits[i-1].path)
		}
	}
	if !strings.Contains(errOut, "asks for a Crawl-delay of 400ms") {
		t.Errorf("stderr %q does not note the Crawl-delay", errOut)
	}
}

func TestCrawlOutputDirResumes(t *testing.T) {
	s := linkedSite(t)
	dir := t.TempDir()
	state := filepath.Join(dir, "crawl.state")
	outDir := filepath.Join(dir, "pages")
	args := []string{"crawl", "--allow-local", "--no-cache", "--delay", "0", "--concurrency", "1", "--crawl-state", state, "--output-dir", outDir, s.URL + "/"}
	// A first run stopped by --max-pages is another crawl (its flags
	// differ): the state refuses it.
	if _, errOut, code := run(t, append([]string{"crawl", "--max-pages", "2"}, args[1:]...)...); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := run(t, args...); code == ExitOK || !strings.Contains(errOut, "the crawl state is of another crawl") {
		t.Fatalf("exit %d, stderr %q: want the state of another crawl refused", code, errOut)
	}
	os.Remove(state)
	if _, errOut, code := run(t, args...); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	index, err := os.ReadFile(filepath.Join(outDir, indexName))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(index), "\n"); n != 10 {
		t.Errorf("index has %d lines, want 10:\n%s", n, index)
	}
	// Run again: the crawl is finished, nothing is read or written again.
	before := len(s.hits())
	if out, errOut, code := run(t, args...); code != ExitOK || out != "" || !strings.Contains(errOut, "had finished (done): nothing left to read") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if n := len(s.hits()); n != before {
		t.Errorf("a finished crawl made %d requests again", n-before)
	}
	again, _ := os.ReadFile(filepath.Join(outDir, indexName))
	if string(again) != string(index) {
		t.Errorf("the index changed on a finished crawl's second run")
	}
}

func TestCrawlUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--stop-when-answered"}, "--stop-when-answered needs --query"},
		{[]string{"--depth", "-1"}, "cannot be negative"},
		{[]string{"--include-paths", "("}, "--include-paths"},
		{[]string{"--server", "127.0.0.1:1", "--crawl-state", "x"}, "--crawl-state keeps a crawl that runs in this process"},
	} {
		_, errOut, code := run(t, append(append([]string{"crawl"}, tt.args...), "https://example.com/")...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stderr %q, want usage error %q", tt.args, code, errOut, tt.want)
		}
	}
}

// distill crawl --server asks a distill serve, over the API's Crawl, and
// prints what a crawl in this process prints.
func TestCrawlThroughServe(t *testing.T) {
	s := linkedSite(t)
	addr := startServeReady(t, "--allow-local")
	args := []string{"--allow-local", "--no-cache", "--delay", "0", "--concurrency", "1", "--format", "jsonl", "--exclude-paths", "^/blog", s.URL + "/"}
	localOut, localErr, localCode := run(t, append([]string{"crawl"}, args...)...)
	out, errOut, code := run(t, append([]string{"crawl", "--server", addr}, args...)...)
	if localCode != ExitOK || code != ExitOK {
		t.Fatalf("exit %d here, %d through serve; stderr %q, %q", localCode, code, localErr, errOut)
	}
	if got, want := crawledURLs(crawlLines(t, out)), crawledURLs(crawlLines(t, localOut)); !slices.Equal(got, want) || errOut != localErr {
		t.Errorf("through serve\n%q\n%s\nin process\n%q\n%s", got, errOut, want, localErr)
	}
	if strings.Contains(out, "/blog") || !strings.Contains(out, s.URL+"/docs/install") {
		t.Errorf("%q", out)
	}
	// Loopback is the server operator's to open, and the API's bounds
	// hold.
	closed := startServeReady(t)
	if out, errOut, code := run(t, "crawl", "--server", closed, "--allow-local", s.URL+"/"); code != ExitFailure || out != "" || !strings.Contains(errOut, "allow_local refused") {
		t.Errorf("crawl --server on a server without --allow-local: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := run(t, "crawl", "--server", addr, "--allow-local", "--max-pages", "0", s.URL+"/"); code != ExitFailure || !strings.Contains(errOut, "max_pages is 1 to 10000") {
		t.Errorf("crawl --server --max-pages 0: exit %d, stderr %q", code, errOut)
	}
}

func TestCrawlJSONIsOneArray(t *testing.T) {
	s := linkedSite(t)
	out, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--delay", "0", "--depth", "1", "--format", "json", s.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var pages []crawlLine
	if err := json.Unmarshal([]byte(out), &pages); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, out)
	}
	if len(pages) != 4 || pages[0].URL != s.URL+"/" || !pages[0].OK || pages[0].Result.Title != "Home" {
		t.Errorf("pages %+v", pages)
	}
}

func TestCrawlScopeFlags(t *testing.T) {
	s := linkedSite(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"path prefix: the start page read for its links, then only under it", []string{"--path-prefix", "/docs"},
			[]string{"/docs/", "/docs/install", "/docs/config", "/docs/install/windows"}},
		{"exclude: neither read nor printed (nor what only they link to)", []string{"--exclude-paths", "^/(blog|docs)"},
			[]string{"/", "/about"}},
		{"include: only matches printed, the rest read for links", []string{"--include-paths", "^/blog/.+"},
			[]string{"/blog/2026/hello", "/blog/tag/go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"crawl", "--allow-local", "--no-cache", "--format", "jsonl", "--delay", "0", "--depth", "3"}, tt.args...)
			out, errOut, code := run(t, append(args, s.URL+"/")...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			want := prefixed(s.URL, tt.want...)
			slices.Sort(want)
			if got := crawledURLs(crawlLines(t, out)); !slices.Equal(got, want) {
				t.Errorf("pages\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestCrawlReadsARedirectTargetOnce: a page linked both directly and
// through an old address that redirects to it is fetched once, whichever
// of the two is read first and however they overlap.
func TestCrawlReadsARedirectTargetOnce(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/":
			fmt.Fprint(w, `<html><body><main><h1>Hub</h1>`)
			for i := range 4 {
				fmt.Fprintf(w, `<p><a href="/old/%d">Old %d</a> <a href="/page/%d">Page %d</a></p>`, i, i, i, i)
			}
			fmt.Fprint(w, `</main></body></html>`)
		case strings.HasPrefix(r.URL.Path, "/old/"):
			http.Redirect(w, r, "/page/"+strings.TrimPrefix(r.URL.Path, "/old/"), http.StatusMovedPermanently)
		default:
			time.Sleep(50 * time.Millisecond)
			fmt.Fprintf(w, `<html><head><title>%s</title></head><body><main><h1>%s</h1><p>Words enough to read as a page of its own.</p></main></body></html>`, r.URL.Path, r.URL.Path)
		}
	}))
	t.Cleanup(srv.Close)
	out, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--ignore-robots", "--format", "jsonl", "--delay", "0", "--concurrency", "4", "--depth", "1", srv.URL+"/")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	delivered := map[string]int{}
	for _, l := range crawlLines(t, out) {
		if !l.OK {
			t.Errorf("%s failed: %s", l.URL, l.Error)
			continue
		}
		delivered[strings.TrimPrefix(l.Result.FinalURL, srv.URL)]++
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 4 {
		p := fmt.Sprintf("/page/%d", i)
		if hits[p] != 1 || delivered[p] != 1 {
			t.Errorf("%s fetched %d times and delivered %d, want once each", p, hits[p], delivered[p])
		}
	}
}
