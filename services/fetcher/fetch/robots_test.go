package fetch

import (
	"compress/gzip"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// robotsSite serves txt (or status, when not 200) at /robots.txt and the
// page everywhere else, counting requests per path.
type robotsSite struct {
	mu     sync.Mutex
	hits   map[string]int
	status int
	txt    string
}

func (s *robotsSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	if r.URL.Path != "/robots.txt" {
		html(w, 200, page)
		return
	}
	if s.status != 200 {
		w.WriteHeader(s.status)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, s.txt)
}

func (s *robotsSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func newRobotsSite(t *testing.T, status int, txt string) (*robotsSite, string) {
	t.Helper()
	s := &robotsSite{hits: map[string]int{}, status: status, txt: txt}
	ts, _ := serve(t, s.ServeHTTP)
	return s, ts.URL
}

func respecting() *distillv1.FetchOptions {
	o := local()
	o.RespectRobots = true
	return o
}

func TestFetchRobots(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		txt     string
		path    string
		allowed bool
		parts   []string // of the refusal
	}{
		{name: "allowed path", status: 200, txt: "User-agent: *\nDisallow: /private\n", path: "/public", allowed: true},
		{name: "disallowed path", status: 200, txt: "User-agent: *\nDisallow: /private\n", path: "/private/page",
			parts: []string{"/private/page", "/robots.txt", "Disallow: /private"}},
		{name: "wildcard", status: 200, txt: "User-agent: *\nDisallow: /*.php\n", path: "/a/index.php?x=1",
			parts: []string{"Disallow: /*.php"}},
		{name: "dollar anchors", status: 200, txt: "User-agent: *\nDisallow: /*.pdf$\n", path: "/a.pdf?download=1", allowed: true},
		{name: "dollar matches", status: 200, txt: "User-agent: *\nDisallow: /*.pdf$\n", path: "/a.pdf",
			parts: []string{"Disallow: /*.pdf$"}},
		{name: "longest match allows", status: 200, txt: "User-agent: *\nDisallow: /docs\nAllow: /docs/public\n", path: "/docs/public/x", allowed: true},
		{name: "longest match disallows", status: 200, txt: "User-agent: *\nAllow: /docs\nDisallow: /docs/drafts\n", path: "/docs/drafts/x",
			parts: []string{"Disallow: /docs/drafts"}},
		{name: "our group over star", status: 200, txt: "User-agent: *\nDisallow: /\n\nUser-agent: distill\nAllow: /\n", path: "/x", allowed: true},
		{name: "our group disallows", status: 200, txt: "User-agent: *\nAllow: /\n\nUser-agent: Distill\nDisallow: /x\n", path: "/x",
			parts: []string{"Disallow: /x"}},
		{name: "other crawler's group ignored", status: 200, txt: "User-agent: googlebot\nDisallow: /\n", path: "/x", allowed: true},
		{name: "404 allows", status: 404, path: "/x", allowed: true},
		{name: "401 allows", status: 401, path: "/x", allowed: true},
		{name: "500 disallows", status: 500, path: "/x", parts: []string{"/robots.txt unreachable (500 Internal Server Error)"}},
		{name: "503 disallows", status: 503, path: "/x", parts: []string{"unreachable (503 Service Unavailable)"}},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			site, base := newRobotsSite(t, tt.status, tt.txt)
			_, err := get(t, f, base+tt.path, respecting())
			if tt.allowed {
				if err != nil {
					t.Fatalf("want allowed, got %v", err)
				}
			} else {
				wantFailure(t, err, failure.RobotsDisallowed, append([]string{"fetch " + base + tt.path}, tt.parts...)...)
				if n := site.count(pathOnly(tt.path)); n != 0 {
					t.Fatalf("disallowed page requested %d times", n)
				}
			}
			if n := site.count("/robots.txt"); n != 1 {
				t.Fatalf("robots.txt requested %d times, want 1", n)
			}
		})
	}
}

func pathOnly(p string) string {
	for i := range len(p) {
		if p[i] == '?' {
			return p[:i]
		}
	}
	return p
}

// Without respect_robots, robots.txt is neither read nor obeyed.
func TestFetchRobotsOff(t *testing.T) {
	t.Parallel()
	site, base := newRobotsSite(t, 200, "User-agent: *\nDisallow: /\n")
	mustGet(t, newFetcher(t), base+"/x", local())
	if n := site.count("/robots.txt"); n != 0 {
		t.Fatalf("robots.txt requested %d times without respect_robots", n)
	}
}

// A robots.txt server that hangs up is unreachable: disallow all.
func TestFetchRobotsUnreachable(t *testing.T) {
	t.Parallel()
	var pages atomic.Int32
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				_ = conn.Close()
			}
			return
		}
		pages.Add(1)
		html(w, 200, page)
	})
	o := respecting()
	o.MaxRetries = ptr(int32(0))
	_, err := get(t, newFetcher(t), ts.URL+"/x", o)
	wantFailure(t, err, failure.RobotsDisallowed, "fetch "+ts.URL+"/x", ts.URL+"/robots.txt unreachable")
	if n := pages.Load(); n != 0 {
		t.Fatalf("page requested %d times", n)
	}
}

// Each robots.txt is read once per origin, however many pages follow.
func TestFetchRobotsCached(t *testing.T) {
	t.Parallel()
	site, base := newRobotsSite(t, 200, "User-agent: *\nDisallow: /private\n")
	f := newFetcher(t)
	for _, p := range []string{"/a", "/b", "/c"} {
		mustGet(t, f, base+p, respecting())
	}
	if n := site.count("/robots.txt"); n != 1 {
		t.Fatalf("robots.txt requested %d times for three pages, want 1", n)
	}
}

// Every redirect hop is checked before it is requested, against the
// robots.txt of the hop's own origin.
func TestFetchRobotsRedirectHop(t *testing.T) {
	t.Parallel()
	t.Run("same origin", func(t *testing.T) {
		t.Parallel()
		var private atomic.Int32
		ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			case "/start":
				http.Redirect(w, r, "/private/page", http.StatusFound)
			default:
				private.Add(1)
				html(w, 200, page)
			}
		})
		_, err := get(t, newFetcher(t), ts.URL+"/start", respecting())
		wantFailure(t, err, failure.RobotsDisallowed, "fetch "+ts.URL+"/start: redirect to "+ts.URL+"/private/page", "Disallow: /private")
		if n := private.Load(); n != 0 {
			t.Fatalf("disallowed redirect target requested %d times", n)
		}
	})
	t.Run("other origin", func(t *testing.T) {
		t.Parallel()
		other, otherBase := newRobotsSite(t, 200, "User-agent: distill\nDisallow: /\n")
		var firstRobots atomic.Int32
		first, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				firstRobots.Add(1)
				http.NotFound(w, r)
				return
			}
			http.Redirect(w, r, otherBase+"/page", http.StatusFound)
		})
		_, err := get(t, newFetcher(t), first.URL+"/go", respecting())
		wantFailure(t, err, failure.RobotsDisallowed, "redirect to "+otherBase+"/page", otherBase+"/robots.txt", "Disallow: /")
		if n := other.count("/page"); n != 0 {
			t.Fatalf("disallowed target requested %d times", n)
		}
		if firstRobots.Load() != 1 || other.count("/robots.txt") != 1 {
			t.Fatalf("robots.txt requests: first origin %d, second %d; want one each", firstRobots.Load(), other.count("/robots.txt"))
		}
	})
}

// The robots.txt request is held to the call's network policy on every
// hop: a redirect towards a private address is refused without a request,
// and the site, whose rules are then unknown, is disallowed.
func TestFetchRobotsUnderNetworkPolicy(t *testing.T) {
	t.Parallel()
	var pages atomic.Int32
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data", http.StatusFound)
			return
		}
		pages.Add(1)
		html(w, 200, page)
	})
	_, err := get(t, newFetcher(t), ts.URL+"/x", respecting())
	wantFailure(t, err, failure.RobotsDisallowed, "fetch "+ts.URL+"/x", ts.URL+"/robots.txt (redirected to http://169.254.169.254/latest/meta-data) unreachable", "blocked by network policy", "cloud metadata endpoint")
	if n := pages.Load(); n != 0 {
		t.Fatalf("page requested %d times", n)
	}
}

// robots.txt comes back compressed like any other response.
func TestFetchRobotsCompressed(t *testing.T) {
	t.Parallel()
	var pages atomic.Int32
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Encoding", "gzip")
			gz := gzip.NewWriter(w)
			_, _ = io.WriteString(gz, "User-agent: *\nDisallow: /x\n")
			_ = gz.Close()
			return
		}
		pages.Add(1)
		html(w, 200, page)
	})
	_, err := get(t, newFetcher(t), ts.URL+"/x", respecting())
	wantFailure(t, err, failure.RobotsDisallowed, "Disallow: /x")
	if n := pages.Load(); n != 0 {
		t.Fatalf("page requested %d times", n)
	}
}

// A site's Crawl-delay spaces our requests to it at least that far apart,
// or further when the caller's own rate limit is slower.
func TestFetchRobotsCrawlDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		rateLimit float64
		txt       string
		// waits are the rate-limit waits of three page fetches, the
		// robots.txt request first; each is measured from the same frozen
		// instant, so the n-th wait is the n-th request's offset.
		waits []time.Duration
	}{
		{name: "crawl-delay alone", txt: "User-agent: *\nCrawl-delay: 2\n",
			// robots.txt is fetched before the delay is known, unpaced.
			waits: []time.Duration{2 * time.Second, 4 * time.Second}},
		{name: "crawl-delay slower than rate limit", rateLimit: 10, txt: "User-agent: *\nCrawl-delay: 2\n",
			waits: []time.Duration{2 * time.Second, 4 * time.Second, 6 * time.Second}},
		{name: "rate limit slower than crawl-delay", rateLimit: 0.25, txt: "User-agent: *\nCrawl-delay: 2\n",
			waits: []time.Duration{4 * time.Second, 8 * time.Second, 12 * time.Second}},
		{name: "our group's delay", txt: "User-agent: *\nCrawl-delay: 9\n\nUser-agent: distill\nCrawl-delay: 1\n",
			waits: []time.Duration{time.Second, 2 * time.Second}},
		{name: "no crawl-delay", txt: "User-agent: *\nDisallow: /private\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, base := newRobotsSite(t, 200, tt.txt)
			clock := newFrozenClock()
			f := newFetcher(t, WithClock(clock))
			for _, p := range []string{"/a", "/b", "/c"} {
				o := respecting()
				o.RateLimit = tt.rateLimit
				o.TimeoutSecs = ptr(int32(60))
				mustGet(t, f, base+p, o)
			}
			clock.wantWaits(t, tt.waits)
		})
	}
}
